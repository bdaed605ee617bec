/**
 * Withdrawals from the dashboard on the sandbox cluster, through the real app: a statement naming
 * the project, amounts, mints and recipient, signed by the member's wallet, single use; the money
 * path (a `withdraw` request with who asked, listed and reported as a `tx` event); outside the
 * game policy's limits; idempotent, also under concurrent confirmations; everything at once.
 */
import assert from "node:assert/strict";
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { assertErrorCode } from "../support/assertions.ts";
import {
  getPage,
  postForm,
  postJson,
  signInDeveloper,
  type TestDeveloper,
} from "../support/dashboard.ts";
import { joinTeam } from "../support/team.ts";
import { createTestWallet } from "../support/sign_in.ts";
import { call } from "../support/test_app.ts";
import {
  balanceOf,
  fundWalletWithTokens,
  startTxHarness,
  type TxHarness,
} from "../support/tx_harness.ts";
import { findAta } from "../../sandbox/chain/fixtures.ts";
import { listAuditEntries } from "../../kv/audit_log.ts";
import { getTxRequest } from "../../kv/tx_requests.ts";
import { txDayUsageKey } from "../../kv/tx_usage.ts";

/** The harness with its project owned by a signed-in developer. */
async function startWithdrawWorld(options: { fund?: bigint } = {}) {
  const owner = createTestWallet();
  const h = await startTxHarness({ developer: owner.address, ...options });
  const dev = await signInDeveloper(h.a.app, owner);
  return { h, dev, base: `/dashboard/projects/${h.project.id}` };
}

/** Prepares a withdrawal as JSON; answers the statement. */
async function prepare(h: TxHarness, dev: TestDeveloper, body: Record<string, unknown>) {
  const res = await postJson(
    h.a.app,
    `/dashboard/projects/${h.project.id}/withdraw/prepare`,
    body,
    {
      jar: dev.jar,
    },
  );
  const json = await res.json();
  assert.equal(res.status, 201, JSON.stringify(json));
  return json as {
    nonce: string;
    message: string;
    expiresAt: number;
    lines: Array<{ mint: string | null; amount: string }>;
  };
}

function confirm(h: TxHarness, dev: TestDeveloper, nonce: string, signature: string) {
  return postJson(h.a.app, `/dashboard/projects/${h.project.id}/withdraw`, { nonce, signature }, {
    jar: dev.jar,
  });
}

interface LineAnswer {
  idempotencyKey: string;
  mint: string | null;
  amount: string;
  result: { status: string; kind: string; signature: string | null; recipient: string } | null;
  error: { code: string } | null;
}

async function confirmed(res: Response) {
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.withdrawal as {
    id: string;
    recipient: string;
    requestedBy: string;
    lines: LineAnswer[];
  };
}

async function tokenAmount(h: TxHarness, owner: Address, mint: Address): Promise<string | null> {
  const ata = await findAta(owner, mint, TOKEN_PROGRAM_ADDRESS);
  const { value } = await h.rpc.getAccountInfo(ata, { encoding: "base64" }).send();
  if (!value) return null;
  return (await h.rpc.getTokenAccountBalance(ata).send()).value.amount;
}

Deno.test("The owner withdraws SOL past the policy's limits, confirmed by a signed statement, listed and reported", async () => {
  const { h, dev, base } = await startWithdrawWorld();
  await using _ = h;
  // Given a policy whose limits the withdrawal is far above
  await h.policy({ maxSolPerTransfer: "0.01", hourlyBudgets: [{ asset: "SOL", amount: "0.02" }] });
  const to = (await generateKeyPairSigner()).address;

  // When
  const statement = await prepare(h, dev, { recipient: to, asset: "SOL", amount: "3.5" });
  const withdrawal = await confirmed(
    await confirm(h, dev, statement.nonce, dev.wallet.sign(statement.message)),
  );

  // Then the message says what signing authorises (not a sign-in), and names the project,
  // amount, asset and recipient, for this wallet
  assert.equal(
    statement.message.split("\n")[0],
    "localhost:8000 asks you to authorise a withdrawal with your Solana account:",
  );
  for (const part of [h.project.id, h.project.name, "3.5 SOL", to, h.wallet!, dev.address]) {
    assert.ok(statement.message.includes(part), `${part} in ${statement.message}`);
  }
  assert.deepEqual(statement.lines, [{ mint: null, amount: "3.5" }]);
  assert.deepEqual([withdrawal.recipient, withdrawal.requestedBy], [to, dev.address]);
  const line = withdrawal.lines[0]!;
  assert.deepEqual([line.error, line.result?.status, line.result?.kind], [
    null,
    "confirmed",
    "withdraw",
  ]);
  assert.equal(await balanceOf(h, to), 3_500_000_000n);
  // Listed with who asked, in the dashboard and in the API's list
  const stored = await getTxRequest(h.a.kv, h.project.id, line.idempotencyKey, h.a.clock.now());
  assert.deepEqual([stored?.kind, stored?.requestedBy], ["withdraw", dev.address]);
  const page = await (await getPage(h.a.app, `${base}/transactions`, dev.jar)).text();
  assert.ok(page.includes('data-testid="tx-kind">withdraw<'), "kind shown");
  assert.ok(page.includes(`title="${dev.address}"`), "who asked shown");
  const list = await (await call(h.a.app, "/v1/tx?limit=10", { apiKey: h.apiKey })).json();
  assert.equal(list.transactions?.[0]?.kind ?? list.items?.[0]?.kind, "withdraw");
  // Counted in no window of the policy
  assert.equal((await h.a.kv.get(txDayUsageKey(h.project.id))).value, null);
  // Reported in the feed as a tx event of kind withdraw
  const events = await h.txEvents();
  assert.deepEqual(
    events.map((e) => [e.kind, e.key, e.status, e.signature]),
    [["withdraw", line.idempotencyKey, "confirmed", line.result?.signature]],
  );
  // Recorded in the audit log, with the amounts and no secret
  const audit = await Array.fromAsync(
    listAuditEntries(h.a.kv, h.project.id, { now: h.a.clock.now() }),
  );
  const entry = audit.find((e) => e.action === "withdrawal_requested");
  assert.equal(entry?.actor, dev.address);
  assert.deepEqual(entry?.details.recipient, to);
  assert.equal(entry?.details.summary, "3.5 SOL");
});

Deno.test("A withdrawal is idempotent: its signed statement sent again, even at once, pays once", async () => {
  const { h, dev } = await startWithdrawWorld();
  await using _ = h;
  const to = (await generateKeyPairSigner()).address;
  const statement = await prepare(h, dev, { recipient: to, asset: "SOL", amount: "1" });
  const signature = dev.wallet.sign(statement.message);

  // When the same confirmation arrives three times at once, then again later
  const answers = await Promise.all(
    [1, 2, 3].map(() => confirm(h, dev, statement.nonce, signature)),
  );
  const bodies = await Promise.all(answers.map(confirmed));
  const again = await confirmed(await confirm(h, dev, statement.nonce, signature));

  // Then one line, one key, one payment
  const keys = new Set([...bodies, again].map((b) => b.lines[0]!.idempotencyKey));
  assert.equal(keys.size, 1);
  assert.equal(again.lines[0]!.result?.status, "confirmed");
  assert.equal(await balanceOf(h, to), 1_000_000_000n);
  const events = await h.txEvents();
  assert.equal(events.length, 1);
  const audit = await Array.fromAsync(
    listAuditEntries(h.a.kv, h.project.id, { now: h.a.clock.now() }),
  );
  assert.equal(audit.filter((e) => e.action === "withdrawal_requested").length, 1);
});

Deno.test("A withdrawal's statement is single use, for its own member, and needs their signature", async () => {
  const { h, dev, base } = await startWithdrawWorld();
  await using _ = h;
  const to = (await generateKeyPairSigner()).address;
  const admin = await joinTeam(h.a.app, dev, h.project.id, "admin");

  // A signature by another wallet: refused, and the statement is used up
  const first = await prepare(h, dev, { recipient: to, asset: "SOL", amount: "1" });
  await assertErrorCode(
    await confirm(h, dev, first.nonce, createTestWallet().sign(first.message)),
    400,
    "invalid_signature",
  );
  await assertErrorCode(
    await confirm(h, dev, first.nonce, dev.wallet.sign(first.message)),
    400,
    "challenge_expired",
  );

  // Another member's statement, even signed by its own member, cannot be sent by someone else
  const theirs = await prepare(h, admin, { recipient: to, asset: "SOL", amount: "1" });
  await assertErrorCode(
    await confirm(h, dev, theirs.nonce, admin.wallet.sign(theirs.message)),
    400,
    "challenge_expired",
  );
  // An expired one
  const late = await prepare(h, dev, { recipient: to, asset: "SOL", amount: "1" });
  h.a.clock.advance(10 * 60_000 + 1);
  await assertErrorCode(
    await confirm(h, dev, late.nonce, dev.wallet.sign(late.message)),
    400,
    "challenge_expired",
  );
  // Nothing was paid; the admin's own statement still works
  assert.equal(await balanceOf(h, to), 0n);
  const own = await prepare(h, admin, { recipient: to, asset: "SOL", amount: "0.5" });
  const sent = await confirmed(await confirm(h, admin, own.nonce, admin.wallet.sign(own.message)));
  assert.equal(sent.requestedBy, admin.address);
  assert.equal(await balanceOf(h, to), 500_000_000n);

  // A developer may not withdraw; a bad request says which field
  const developer = await joinTeam(h.a.app, dev, h.project.id, "developer");
  const refused = await postJson(h.a.app, `${base}/withdraw/prepare`, {
    recipient: to,
    asset: "SOL",
    amount: "1",
  }, { jar: developer.jar });
  await assertErrorCode(refused, 403, "insufficient_role");
  const bad = await postJson(h.a.app, `${base}/withdraw/prepare`, {
    recipient: h.wallet,
    asset: "nope",
    amount: "0",
  }, { jar: dev.jar });
  const problem = await assertErrorCode(bad, 400, "invalid_settings");
  for (const field of ["recipient: is the managed wallet", "asset:", "amount:"]) {
    assert.ok(problem.error.message.includes(field), problem.error.message);
  }
});

Deno.test("A member removed after signing cannot withdraw with the statement", async () => {
  const { h, dev, base } = await startWithdrawWorld();
  await using _ = h;
  const admin = await joinTeam(h.a.app, dev, h.project.id, "admin");
  const to = (await generateKeyPairSigner()).address;
  const statement = await prepare(h, admin, { recipient: to, asset: "SOL", amount: "1" });
  const removed = await postJson(h.a.app, `${base}/members/${admin.address}/remove`, undefined, {
    jar: dev.jar,
  });
  assert.equal(removed.status, 200);
  await assertErrorCode(
    await confirm(h, admin, statement.nonce, admin.wallet.sign(statement.message)),
    404,
    "project_not_found",
  );
  assert.equal(await balanceOf(h, to), 0n);
});

Deno.test("Withdraw everything: every token, then the SOL less the fees, leaving only the rent-exempt minimum", async () => {
  const { h, dev, base } = await startWithdrawWorld({ fund: 2_000_000_000n });
  await using _ = h;
  const mint = await fundWalletWithTokens(h);
  const to = (await generateKeyPairSigner()).address;

  // The delete page offers it first, as a form that works without JavaScript
  const deletePage = await (await getPage(h.a.app, `${base}/delete`, dev.jar)).text();
  assert.ok(
    deletePage.indexOf('data-testid="withdraw-everything"') <
      deletePage.indexOf('id="delete-heading"'),
    "withdraw everything before the deletion",
  );
  // And it says what the deletion would strand, SOL and tokens
  const stranded = /data-testid="stranded">([\s\S]*?)<\/p>/.exec(deletePage)?.[1] ?? "";
  assert.match(stranded, /The managed wallet holds 2 SOL and 10 of \S+ \(6 decimals\)\./, stranded);
  const form = await postForm(h.a.app, `${base}/withdraw/prepare`, {
    form: "everything",
    everything: "true",
    recipient: to,
  }, { jar: dev.jar });
  assert.equal(form.status, 303);
  const confirmPath = form.headers.get("location")!;
  assert.ok(confirmPath.startsWith(`${base}/withdraw/confirm?nonce=`), confirmPath);
  const page = await (await getPage(h.a.app, confirmPath, dev.jar)).text();
  const message = /data-testid="statement-message">([^<]*)</.exec(page)![1]!
    .replaceAll("&#39;", "'").replaceAll("&quot;", '"').replaceAll("&amp;", "&");
  assert.ok(message.includes(`10 of the token ${mint}`), message);
  const nonce = new URL(confirmPath, "http://x").searchParams.get("nonce")!;

  // When the form is posted with the signature pasted
  const sent = await postForm(h.a.app, `${base}/withdraw`, {
    nonce,
    signature: dev.wallet.sign(message),
  }, { jar: dev.jar });
  assert.deepEqual([sent.status, sent.headers.get("location")], [303, `${base}/transactions`]);

  // Then the tokens and nearly all the SOL moved; what stays is the wallet's rent-exempt minimum
  // plus fees not spent
  assert.equal(await tokenAmount(h, to, mint), "10000000");
  const rentExempt = await h.rpc.getMinimumBalanceForRentExemption(0n).send();
  const left = await balanceOf(h, h.wallet!);
  assert.ok(left >= rentExempt && left < rentExempt + 20_000n, `${left} left`);
  assert.ok(await balanceOf(h, to) > 1_990_000_000n - 2_100_000n);
  const txs = await (await getPage(h.a.app, `${base}/transactions`, dev.jar)).text();
  assert.ok(txs.includes("Withdrawal to") && txs.includes("confirmed"), "the outcome is shown");

  // Nothing is left to withdraw
  const empty = await postJson(h.a.app, `${base}/withdraw/prepare`, {
    everything: true,
    recipient: to,
  }, { jar: dev.jar });
  const problem = await assertErrorCode(empty, 400, "invalid_settings");
  assert.ok(problem.error.message.includes("holds nothing"), problem.error.message);
});

Deno.test("A withdrawal past the wallet's balance is refused in words before a signature is asked for", async () => {
  const { h, dev } = await startWithdrawWorld({ fund: 2_000_000_000n });
  await using _ = h;
  const to = (await generateKeyPairSigner()).address;
  const res = await postJson(h.a.app, `/dashboard/projects/${h.project.id}/withdraw/prepare`, {
    recipient: to,
    asset: "SOL",
    amount: "50",
  }, { jar: dev.jar });
  const body = await assertErrorCode(res, 400, "invalid_settings");
  assert.match(
    body.error.message,
    /Insufficient funds: the wallet holds 2 SOL, 50 SOL requested/,
  );
  // And no statement was issued for it
  assert.equal(
    (await Array.fromAsync(h.a.kv.list({ prefix: ["statements"] }))).length,
    0,
  );
});

Deno.test("A withdrawal line that fails on chain shows in red, in words, the coded error behind a toggle", async () => {
  const { h, dev, base } = await startWithdrawWorld({ fund: 2_000_000_000n });
  await using _ = h;
  const to = (await generateKeyPairSigner()).address;
  // Given two statements each within the balance, together past it
  const first = await prepare(h, dev, { recipient: to, asset: "SOL", amount: "1.5" });
  const second = await prepare(h, dev, { recipient: to, asset: "SOL", amount: "1.5" });
  await confirmed(await confirm(h, dev, first.nonce, dev.wallet.sign(first.message)));
  // When the second is confirmed from the page's form
  const res = await postForm(h.a.app, `${base}/withdraw`, {
    nonce: second.nonce,
    signature: dev.wallet.sign(second.message),
  }, { jar: dev.jar });
  await res.body?.cancel();
  const page = await (await getPage(h.a.app, `${base}/transactions`, dev.jar)).text();
  // Then the notice is an error, says it in words, and keeps the coded form behind details
  assert.ok(page.includes('data-testid="flash-error"'), page.slice(0, 2000));
  assert.match(page, /1\.5 SOL failed and nothing was sent: the network refused the transaction/);
  assert.match(page, /<details><summary>Details<\/summary><pre>Solana error #/);
  assert.equal(await balanceOf(h, to), 1_500_000_000n);
});
