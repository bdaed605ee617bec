/**
 * The owner's key export through the real app: a signed statement naming the project, the key in
 * the CLI's and wallets' formats (proven by paying with it on the sandbox cluster), shown once,
 * never in the audit log or the service's log, limited per day also under concurrent exports,
 * switchable off for the deployment, and shown on the project afterwards.
 */
import assert from "node:assert/strict";
import {
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  generateKeyPairSigner,
  lamports,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { base58 } from "@scure/base";
import { assertErrorCode } from "../support/assertions.ts";
import {
  createProjectAs,
  getPage,
  postForm,
  postJson,
  signInDeveloper,
  type TestDeveloper,
} from "../support/dashboard.ts";
import { joinTeam } from "../support/team.ts";
import { createTestApp, type TestApp } from "../support/test_app.ts";
import { startChain } from "../../sandbox/chain/mod.ts";
import { sendInstructions } from "../../sandbox/chain/fixtures.ts";
import { listAuditEntries } from "../../kv/audit_log.ts";
import { MAX_KEY_EXPORTS_PER_DAY } from "../../lib/projects/key_export.ts";
import type { Config } from "../../lib/config.ts";

/** An app with a project owned by a signed-in developer, with its managed wallet. */
async function startExportWorld(config: Partial<Config> = {}) {
  const t = await createTestApp({ config });
  const owner = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, owner);
  const base = `/dashboard/projects/${project.id}`;
  const wallet = await postJson(t.app, `${base}/wallet`, undefined, { jar: owner.jar });
  assert.equal(wallet.status, 201);
  const { walletAddress } = await wallet.json();
  return { t, owner, project, base, walletAddress: walletAddress as string };
}

async function prepare(t: TestApp, dev: TestDeveloper, base: string) {
  const res = await postJson(t.app, `${base}/export/prepare`, undefined, { jar: dev.jar });
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  return body as { nonce: string; message: string };
}

function confirm(t: TestApp, dev: TestDeveloper, base: string, nonce: string, signature: string) {
  return postJson(t.app, `${base}/export`, { nonce, signature }, { jar: dev.jar });
}

interface Exported {
  walletAddress: string;
  solanaCli: number[];
  base58: string;
  exportedAt: number;
}

Deno.test("The owner exports the wallet's key in the CLI's and wallets' formats, and it pays on the cluster", async () => {
  await using chain = await startChain({ slotMs: 10 });
  const w = await startExportWorld({ rpcUrls: { devnet: chain.rpcUrl, mainnet: chain.rpcUrl } });
  await using _ = w.t;
  const { t, owner, project, base, walletAddress } = w;
  await chain.airdrop(walletAddress as never, 1_000_000_000n);

  // When
  const logs: string[] = [];
  const { nonce, message } = await prepare(t, owner, base);
  const original = console.log;
  console.log = (...args: unknown[]) => logs.push(args.join(" "));
  let res: Response;
  try {
    res = await confirm(t, owner, base, nonce, owner.wallet.sign(message));
  } finally {
    console.log = original;
  }
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  const key = body.key as Exported;

  // Then the statement said what signing authorises, and named the project and the wallet, for
  // this owner
  assert.match(message.split("\n")[0]!, /asks you to authorise exporting a wallet's secret key/);
  for (const part of [project.id, project.name, walletAddress, owner.address, "export"]) {
    assert.ok(message.includes(part), `${part} in ${message}`);
  }
  // Both formats are the same 64 bytes, whose public half is the wallet
  assert.equal(key.walletAddress, walletAddress);
  assert.equal(key.solanaCli.length, 64);
  assert.deepEqual(Array.from(base58.decode(key.base58)), key.solanaCli);
  const signer = await createKeyPairSignerFromBytes(Uint8Array.from(key.solanaCli));
  assert.equal(signer.address, walletAddress);
  // ...and it moves the wallet's SOL on the cluster
  const to = (await generateKeyPairSigner()).address;
  await sendInstructions(chain, [
    getTransferSolInstruction({ source: signer, destination: to, amount: lamports(1_000_000n) }),
  ], { feePayer: signer });
  const rpc = createSolanaRpc(chain.rpcUrl);
  assert.equal((await rpc.getBalance(to, { commitment: "confirmed" }).send()).value, 1_000_000n);

  // Recorded in the audit log and the service's log without the key
  const audit = await Array.fromAsync(listAuditEntries(t.kv, project.id, { now: t.clock.now() }));
  const entry = audit.find((e) => e.action === "key_exported");
  assert.deepEqual([entry?.actor, entry?.details], [owner.address, { walletAddress }]);
  const exportedLog = logs.find((line) => line.includes("Wallet key exported"));
  assert.ok(exportedLog, logs.join("\n"));
  for (const text of [JSON.stringify(audit), logs.join("\n")]) {
    assert.ok(!text.includes(key.base58) && !text.includes(JSON.stringify(key.solanaCli)));
  }
  const exportFile = await (await getPage(t.app, `${base}/audit/export`, owner.jar)).text();
  assert.ok(exportFile.includes("key_exported") && !exportFile.includes(key.base58));

  // Shown once: the statement is spent
  await assertErrorCode(
    await confirm(t, owner, base, nonce, owner.wallet.sign(message)),
    400,
    "challenge_expired",
  );
  // The project shows that its key was exported
  const overview = await (await getPage(t.app, base, owner.jar)).text();
  assert.ok(overview.includes('data-testid="key-exported"'), "the overview says so");
  assert.ok(overview.includes(owner.address));
});

Deno.test("The exported key's JSON answer is Cache-Control: no-store", async () => {
  const { t, owner, base } = await startExportWorld();
  await using _ = t;
  const { nonce, message } = await prepare(t, owner, base);
  const res = await confirm(t, owner, base, nonce, owner.wallet.sign(message));
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal((body.key as Exported).solanaCli.length, 64, "the answer holds the key");
  assert.equal(res.headers.get("cache-control"), "no-store");
});

Deno.test("A browser sees the key in the answer to its form post only, never in a cookie or again", async () => {
  const { t, owner, base, walletAddress } = await startExportWorld();
  await using _ = t;
  const prepared = await postForm(t.app, `${base}/export/prepare`, {}, { jar: owner.jar });
  assert.equal(prepared.status, 303);
  const confirmPath = prepared.headers.get("location")!;
  const page = await (await getPage(t.app, confirmPath, owner.jar)).text();
  const message = /data-testid="statement-message">([^<]*)</.exec(page)![1]!
    .replaceAll("&#39;", "'").replaceAll("&quot;", '"').replaceAll("&amp;", "&");
  const nonce = new URL(confirmPath, "http://x").searchParams.get("nonce")!;

  const answer = await postForm(t.app, `${base}/export`, {
    nonce,
    signature: owner.wallet.sign(message),
  }, { jar: owner.jar });
  const html = await answer.text();
  assert.equal(answer.status, 200);
  assert.equal(answer.headers.get("cache-control"), "no-store");
  assert.equal(answer.headers.get("set-cookie"), null, "no flash cookie carries it");
  const shown = /data-testid="exported-base58">([^<]*)</.exec(html)![1]!;
  const signer = await createKeyPairSignerFromBytes(base58.decode(shown));
  assert.equal(signer.address, walletAddress);
  assert.ok(html.includes('data-testid="exported-cli">[')); // the JSON array

  // Posting it again (a reload) shows an error on the export page, not the key
  const again = await postForm(t.app, `${base}/export`, {
    nonce,
    signature: owner.wallet.sign(message),
  }, { jar: owner.jar });
  assert.deepEqual([again.status, again.headers.get("location")], [303, `${base}/export`]);
  const after = await (await getPage(t.app, `${base}/export`, owner.jar)).text();
  assert.ok(after.includes("unknown, used or expired") && !after.includes(shown));
  assert.ok(after.includes("Exported 1 time"), "the export page says it was exported");
});

Deno.test("Exports are limited per day, also when confirmed at the same moment", async () => {
  const { t, owner, base } = await startExportWorld();
  await using _ = t;
  // Given one export left and two signed statements
  for (let i = 0; i < MAX_KEY_EXPORTS_PER_DAY - 1; i++) {
    const s = await prepare(t, owner, base);
    assert.equal(
      (await confirm(t, owner, base, s.nonce, owner.wallet.sign(s.message))).status,
      200,
    );
  }
  const a = await prepare(t, owner, base);
  const b = await prepare(t, owner, base);

  // When both are confirmed at once
  const answers = await Promise.all(
    [a, b].map((s) => confirm(t, owner, base, s.nonce, owner.wallet.sign(s.message))),
  );

  // Then one exports and the other is refused
  const statuses = answers.map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, 429]);
  await assertErrorCode(answers.find((r) => r.status === 429)!, 429, "key_export_limit_reached");
  await answers.find((r) => r.status === 200)!.body?.cancel();
  await assertErrorCode(
    await postJson(t.app, `${base}/export/prepare`, undefined, { jar: owner.jar }),
    429,
    "key_export_limit_reached",
  );
  // A day later, one more
  t.clock.advance(24 * 3_600_000 + 1);
  await prepare(t, await signInDeveloper(t.app, owner.wallet), base);
});

Deno.test("Only the owner exports, with a statement of their own, and never where exports are off", async () => {
  const { t, owner, base } = await startExportWorld();
  await using _ = t;
  const admin = await joinTeam(t.app, owner, base.split("/").pop()!, "admin");
  await assertErrorCode(
    await postJson(t.app, `${base}/export/prepare`, undefined, { jar: admin.jar }),
    403,
    "insufficient_role",
  );
  // Someone else's signature spends the statement and exports nothing
  const s = await prepare(t, owner, base);
  await assertErrorCode(
    await confirm(t, owner, base, s.nonce, admin.wallet.sign(s.message)),
    400,
    "invalid_signature",
  );
  await assertErrorCode(
    await confirm(t, owner, base, s.nonce, owner.wallet.sign(s.message)),
    400,
    "challenge_expired",
  );
  const page = await (await getPage(t.app, `${base}/export`, owner.jar)).text();
  assert.ok(page.includes("Never exported."), "nothing was exported");

  // A deployment with exports off refuses both steps, and says so on the page
  const off = await startExportWorld({ keyExport: false });
  await using __ = off.t;
  await assertErrorCode(
    await postJson(off.t.app, `${off.base}/export/prepare`, undefined, { jar: off.owner.jar }),
    403,
    "key_export_disabled",
  );
  await assertErrorCode(
    await confirm(off.t, off.owner, off.base, "any", "any"),
    403,
    "key_export_disabled",
  );
  const offPage = await (await getPage(off.t.app, `${off.base}/export`, off.owner.jar)).text();
  assert.ok(offPage.includes('data-testid="export-disabled"'));
  // A project without a wallet has nothing to export
  const bare = await createProjectAs(t.app, owner);
  await assertErrorCode(
    await postJson(t.app, `/dashboard/projects/${bare.id}/export/prepare`, undefined, {
      jar: owner.jar,
    }),
    409,
    "wallet_not_configured",
  );
});
