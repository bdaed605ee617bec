/**
 * Held rewards are the project's liabilities (issue 41, item 2): the overview shows what is held
 * for players per asset against the managed wallet's balance, and warns when the wallet cannot
 * cover it. Rewards are written into the store as the service stores them.
 */
import assert from "node:assert/strict";
import { getPage, startWalletProject } from "../support/dashboard.ts";
import { createGemMint, paidReward, putReward, rewardRecord } from "../support/rewards.ts";
import { createMint, mintTo } from "../../sandbox/chain/fixtures.ts";
import { shortAddress } from "../../components/dashboard/format.ts";
import { plain, rowsOf } from "../support/html_table.ts";

/** The part of the page in the element with `data-testid="<id>"` (up to its closing `tag`). */
function part(html: string, id: string, tag: string): string | null {
  return html.match(new RegExp(`data-testid="${id}".*?</${tag}>`, "s"))?.[0] ?? null;
}

Deno.test("The overview shows what is held for players per asset against the wallet, and warns when it cannot cover it", async () => {
  await using w = await startWalletProject();
  const { chain, t, dev, projectId, wallet } = w;

  // Given the wallet holds 1 SOL and 3 GEM, and may mint a second token, BADGE
  await chain.airdrop(wallet, 1_000_000_000n);
  const { gem, payer } = await createGemMint(chain);
  await mintTo(chain, {
    payer,
    mint: gem,
    authority: payer,
    owner: wallet,
    amount: 300n,
    decimals: 2,
  });
  const badge = await createMint(chain, { payer, decimals: 0, mintAuthority: wallet });
  // And players are owed 2 SOL (one reward held, one being paid), 10 GEM and 5 of BADGE
  const now = t.clock.now();
  await putReward(
    t.kv,
    projectId,
    rewardRecord({ key: "a", amount: "1.5", units: "1500000000" }, now),
  );
  await putReward(
    t.kv,
    projectId,
    rewardRecord({
      key: "b",
      userId: 1003,
      amount: "0.5",
      units: "500000000",
      status: "paying",
      waitingFor: null,
    }, now),
  );
  await putReward(
    t.kv,
    projectId,
    rewardRecord({
      key: "c",
      kind: "transfer-token",
      mint: gem,
      amount: "10",
      units: "1000",
    }, now),
  );
  await putReward(
    t.kv,
    projectId,
    rewardRecord({
      key: "d",
      kind: "mint-token",
      mint: badge,
      amount: "5",
      units: "5",
    }, now),
  );
  // And a cancelled reward, no longer owed
  await putReward(
    t.kv,
    projectId,
    rewardRecord({
      key: "e",
      amount: "9",
      units: "9000000000",
      status: "cancelled",
      waitingFor: null,
      settledAt: now,
    }, now),
  );

  // When a member opens the overview
  const html = await (await getPage(t.app, `/dashboard/projects/${projectId}`, dev.jar)).text();

  // Then it warns for SOL and GEM, saying how much to send, in the alarm colour
  const warnings = part(html, "held-not-covered", "div></div");
  assert.ok(warnings, "the warnings");
  assert.equal(warnings.match(/class="notice error" role="alert"/g)?.length, 2, warnings);
  const said = plain(warnings);
  assert.ok(
    said.includes(
      "players are owed 2 SOL in rewards held until they link a wallet, but the managed wallet holds 1 SOL. Send it at least 1 SOL (plus fees)",
    ),
    said,
  );
  assert.ok(
    said.includes(
      "players are owed 10 GEM in rewards held until they link a wallet, but the managed wallet holds 3 GEM. Send it at least 7 GEM,",
    ),
    said,
  );
  assert.ok(!said.includes(shortAddress(badge)), "a mint the wallet may mint is covered");

  // And the table lists each asset: held, what the wallet holds, and whether it is covered
  const rows = rowsOf(html, "held-rewards");
  assert.equal(rows[0], "2 SOL | 1 SOL | Short by 1 SOL", "SOL first");
  assert.deepEqual(rows.slice(1).toSorted(), [
    "10 GEM | 3 GEM | Short by 7 GEM",
    `5 of ${shortAddress(badge)} (0 decimals) | 0 of ${
      shortAddress(badge)
    } (0 decimals) | Yes: the wallet mints it`,
  ]);

  // When the wallet is funded to cover them
  await chain.airdrop(wallet, 1_500_000_000n);
  await mintTo(chain, {
    payer,
    mint: gem,
    authority: payer,
    owner: wallet,
    amount: 700n,
    decimals: 2,
  });
  // (past the chain reads' cache)
  t.clock.advance(60_000);
  const after = await (await getPage(t.app, `/dashboard/projects/${projectId}`, dev.jar)).text();

  // Then no warning is left and each asset reads covered
  assert.equal(part(after, "held-not-covered", "div></div"), null);
  assert.deepEqual(rowsOf(after, "held-rewards").map((row) => row.split(" | ")[2]).toSorted(), [
    "Yes",
    "Yes",
    "Yes: the wallet mints it",
  ]);
});

Deno.test("The overview of a project holding no rewards has no held rewards section", async () => {
  await using w = await startWalletProject();
  const html = await (await getPage(w.t.app, `/dashboard/projects/${w.projectId}`, w.dev.jar))
    .text();
  assert.ok(html.includes('id="wallet-heading"'), "the overview");
  assert.ok(!html.includes("held-rewards") && !html.includes("held-not-covered"), "no section");
});

Deno.test("The players page shows the rewards of the player searched for by user ID, linked or not", async () => {
  await using w = await startWalletProject();
  const { t, dev, projectId } = w;
  // Given player 1002 has a reward held for a wallet, one waiting for a retry, one paid
  const now = t.clock.now();
  await putReward(t.kv, projectId, rewardRecord({ key: "round-3:1002", createdAt: now - 1 }, now));
  await putReward(
    t.kv,
    projectId,
    rewardRecord({
      key: "round-2:1002",
      amount: "0.25",
      units: "250000000",
      waitingFor: "retry",
      error: "Simulation failed",
      createdAt: now - 2,
    }, now),
  );
  await putReward(
    t.kv,
    projectId,
    paidReward(
      rewardRecord(
        { key: "round-1:1002", amount: "1", units: "1000000000", createdAt: now - 3 },
        now,
      ),
      "PaidWallet111111111111111111111111111111111",
      "PaymentSignature111",
      now,
    ),
  );

  // When a member searches for the player by user ID (they have no wallet linked now)
  const html =
    await (await getPage(t.app, `/dashboard/projects/${projectId}/players?q=1002`, dev.jar))
      .text();

  // Then the page lists their rewards, newest first, with why each waits and the payment
  assert.ok(html.includes("Rewards of player 1002"), "the section");
  const rows = rowsOf(html, "player-rewards").map((row) =>
    row.split(" | ").slice(0, 3).join(" | ")
  );
  assert.deepEqual(rows, [
    "round-3:1002 | 0.5 SOL | held until they link a wallet",
    "round-2:1002 | 0.25 SOL | held: its payment failed, tried againSimulation failed",
    "round-1:1002 | 1 SOL | paidPayment",
  ]);
  assert.match(
    html,
    /href="https:\/\/explorer\.solana\.com\/tx\/PaymentSignature111\?cluster=custom/,
  );

  // And a search by wallet address shows no rewards section
  const byAddress = await (await getPage(
    t.app,
    `/dashboard/projects/${projectId}/players?q=${w.wallet}`,
    dev.jar,
  )).text();
  assert.ok(!byAddress.includes("Rewards of player"), "no section");
});
