/**
 * Amounts as a newcomer reads them (issue 42, item 8): a wallet created a moment ago is "not
 * funded yet", not an alarm, and the estimated need is rounded; tokens are named by their
 * metadata's symbol, or by the shortened mint with its decimals, on the overview (which lists the
 * wallet's tokens), the low-balance warnings and the deletion page.
 */
import assert from "node:assert/strict";
import { createKeyAs, getPage, postJson, startWalletProject } from "../support/dashboard.ts";
import { call } from "../support/test_app.ts";
import { generateKeyPairSigner } from "@solana/kit";
import { linkWallet } from "../../kv/links.ts";
import { createFundedSigner, createMint, mintTo } from "../../sandbox/chain/fixtures.ts";
import { writeTokenMetadata } from "../../sandbox/chain/mod.ts";
import { shortAddress } from "../../components/dashboard/format.ts";

/** The low-balance box of a page. */
function lowBalanceBox(html: string): string {
  const box = html.match(/<div data-testid="low-balance">.*?<\/div><\/div>/s);
  assert.ok(box, "the page has the low-balance box");
  return box[0];
}

Deno.test("The overview of a wallet created a moment ago says it is not funded yet, without alarm", async () => {
  await using w = await startWalletProject();
  const { t, dev, projectId } = w;

  const box = lowBalanceBox(
    await (await getPage(t.app, `/dashboard/projects/${projectId}`, dev.jar)).text(),
  );
  assert.ok(box.includes('class="notice info" role="status"'), box);
  assert.ok(!box.includes("notice error"), box);
  assert.ok(!box.includes('role="alert"'), box);
  // Fees for 10 transactions are 0.0224428 SOL, read as 0.023
  assert.match(
    box,
    /Not funded yet:.*holds no SOL\. Send it at least\s+0\.023 SOL \(fees for 10 transactions\)/s,
  );
});

Deno.test("Tokens read by their symbol, or by the shortened mint with its decimals", async () => {
  await using w = await startWalletProject();
  const { chain, t, dev, projectId, wallet } = w;
  await chain.airdrop(wallet, 1_000_000_000n);

  // Given the wallet holds 25 GEM (a mint with metadata, 6 decimals) and 7 of a bare mint (2)
  const payer = await createFundedSigner(chain);
  const gem = await createMint(chain, { payer, decimals: 6 });
  await mintTo(chain, {
    payer,
    mint: gem,
    authority: payer,
    owner: wallet,
    amount: 25_000_000n,
    decimals: 6,
  });
  await writeTokenMetadata(chain, gem, {
    updateAuthority: payer.address,
    name: "Gems",
    symbol: "GEM",
  });
  const bare = await createMint(chain, { payer, decimals: 2 });
  await mintTo(chain, {
    payer,
    mint: bare,
    authority: payer,
    owner: wallet,
    amount: 700n,
    decimals: 2,
  });
  // And a policy allowing 100 of each per transaction: both warn
  const policy = await postJson(t.app, `/dashboard/projects/${projectId}/policy`, {
    maxSolPerTransfer: "0.1",
    allowedMints: [{ mint: gem, maxPerTransaction: "100" }, {
      mint: bare,
      maxPerTransaction: "100",
    }],
  }, { jar: dev.jar });
  assert.equal(policy.status, 200);

  // Then the overview lists them by symbol or shortened mint with decimals
  const overview = await (await getPage(t.app, `/dashboard/projects/${projectId}`, dev.jar))
    .text();
  const tokens = overview.match(/data-testid="wallet-tokens">(.*?)<\/dd>/s)?.[1] ?? "";
  const plain = (html: string) => html.replace(/<[^>]+>/g, "").replace(/\s+/g, " ");
  assert.ok(plain(tokens).includes("25 GEM"), plain(tokens));
  assert.ok(plain(tokens).includes(`7 of ${shortAddress(bare)} (2 decimals)`), plain(tokens));
  // And the warnings say the same
  const box = plain(lowBalanceBox(overview));
  assert.ok(box.includes("holds 25 GEM, less than 100 GEM (its per-transaction maximum)"), box);
  assert.ok(
    box.includes(
      `holds 7 of ${shortAddress(bare)} (2 decimals), less than 100 of ${
        shortAddress(bare)
      } (2 decimals)`,
    ),
    box,
  );
  assert.ok(!box.includes(`${shortAddress(gem)}`), "a token with a symbol is named by it");
  // And the deletion page names what it would strand
  const remove = await (await getPage(t.app, `/dashboard/projects/${projectId}/delete`, dev.jar))
    .text();
  assert.ok(plain(remove).includes("25 GEM"), plain(remove));
  // And a token payout in the transactions list reads by the symbol too
  const key = await createKeyAs(t.app, dev, projectId);
  const player = await generateKeyPairSigner();
  await linkWallet(t.kv, projectId, { userId: 31, address: player.address, now: t.clock.now() });
  const paid = await call(t.app, "/v1/tx/transfer-token", {
    apiKey: key.key,
    method: "POST",
    json: { to: { userId: 31 }, mint: gem, amount: "1.5", idempotencyKey: "gem-31" },
  });
  assert.equal(paid.status, 200, await paid.clone().text());
  await paid.body?.cancel();
  const list =
    await (await getPage(t.app, `/dashboard/projects/${projectId}/transactions`, dev.jar))
      .text();
  assert.ok(plain(list).includes("1.5 GEM"), plain(list));
  // And the policy page says what each allowed mint is; the usage page names a budget's token
  const policyPage =
    await (await getPage(t.app, `/dashboard/projects/${projectId}/policy`, dev.jar))
      .text();
  const labels = [...policyPage.matchAll(/data-testid="mint-label">([^<]*)</g)].map((m) => m[1]);
  assert.deepEqual(labels, ["GEM, 6 decimals", "2 decimals"]);
  const budgeted = await postJson(t.app, `/dashboard/projects/${projectId}/policy`, {
    maxSolPerTransfer: "0.1",
    allowedMints: [{ mint: gem, maxPerTransaction: "100" }],
    hourlyBudgets: [{ asset: gem, amount: "50" }],
  }, { jar: dev.jar });
  assert.equal(budgeted.status, 200);
  const usage = await (await getPage(t.app, `/dashboard/projects/${projectId}/usage`, dev.jar))
    .text();
  const budgets = usage.match(/id="budgets-heading"[\s\S]*?<\/section>/)?.[0] ?? "";
  assert.ok(plain(budgets).includes("GEM"), plain(budgets));
  assert.ok(!budgets.includes(shortAddress(gem)), "the budget's token named by its symbol");
});
