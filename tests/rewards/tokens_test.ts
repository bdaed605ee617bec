// Token rewards: checked at the grant as a token payout is (the mint an address, allowed, on the
// cluster; the mint's cap per player), and paid on link as a token transfer.
import assert from "node:assert/strict";
import { TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { findAta } from "../../sandbox/chain/fixtures.ts";
import { assertErrorCode } from "../support/assertions.ts";
import { fundWalletWithTokens, okJson, startTxHarness } from "../support/tx_harness.ts";
import { linkPlayer, rewardEvents, rewardsOf } from "../support/rewards_harness.ts";

Deno.test("A token reward is checked against its mint at the grant and paid as a transfer on link", async () => {
  await using h = await startTxHarness();
  const mint = await fundWalletWithTokens(h);
  await h.policy({
    maxSolPerTransfer: "1",
    allowedMints: [{ mint, maxPerTransaction: "5", maxHeldPerPlayer: "6" }],
  });
  const api = rewardsOf(h);
  const token = (userId: number, key: string, amount: string) => ({
    userId,
    kind: "transfer-token",
    mint,
    amount,
    idempotencyKey: key,
  });

  // The grant's checks, in the payout's order
  await assertErrorCode(
    await api.grant({ ...token(95, "t0", "1"), mint: "not-a-mint" }),
    400,
    "invalid_address",
  );
  await assertErrorCode(
    await api.grant({ ...token(95, "t0", "1"), mint: h.wallet }),
    403,
    "mint_not_allowed",
  );
  await assertErrorCode(await api.grant(token(95, "t0", "5.5")), 403, "amount_over_limit");
  await assertErrorCode(await api.grant(token(95, "t0", "1.0000001")), 400, "invalid_amount");
  await assertErrorCode(
    await api.grant({ userId: 95, kind: "transfer-token", amount: "1", idempotencyKey: "t0" }),
    400,
    "invalid_request",
  );

  // Given: 4 tokens held for the player; 3 more would pass the mint's cap of 6
  assert.equal((await okJson(await api.grant(token(95, "t1", "4")))).status, "held");
  await assertErrorCode(await api.grant(token(95, "t2", "3")), 403, "reward_hold_limit_exceeded");

  // When: the player links
  const wallet = await linkPlayer(h, 95);
  await rewardEvents(h);

  // Then: the tokens are theirs, and the cap has room again
  const paid = await api.read("t1");
  assert.equal(paid.status, "paid", JSON.stringify(paid));
  const ata = await findAta(wallet, mint, TOKEN_PROGRAM_ADDRESS);
  assert.equal((await h.rpc.getTokenAccountBalance(ata).send()).value.amount, "4000000");
  assert.equal((await okJson(await api.grant(token(95, "t2", "3")))).status, "paid");
});
