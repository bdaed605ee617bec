/** The race for one wallet, shared by the local-file and remote-store tests of `linkWallet()`. */
import assert from "node:assert/strict";
import { getLinkByAddress, getLinkByUser, linkWallet } from "../../kv/links.ts";

const PLAYERS = 20;

/**
 * Twenty players, alternating between two instances' stores, link `address` at once; asserts that
 * exactly one holds it and that every other one was reported as losing it exactly once (so their
 * `wallet_unlinked` events stay consistent).
 */
export async function assertOneOwnerAfterRace(
  stores: readonly [Deno.Kv, Deno.Kv],
  address: string,
): Promise<void> {
  const [a, b] = stores;
  const outcomes = await Promise.all(
    Array.from(
      { length: PLAYERS },
      (_, i) => linkWallet(i % 2 ? a : b, "p", { userId: i + 1, address, now: i }),
    ),
  );
  const owner = (await getLinkByAddress(a, "p", address))?.userId;
  assert.ok(owner !== undefined, "someone holds the wallet");
  let holders = 0;
  for (let id = 1; id <= PLAYERS; id++) {
    if ((await getLinkByUser(a, "p", id))?.address === address) holders++;
  }
  assert.equal(holders, 1);
  const losers = outcomes.map((o) => o.previousOwner).filter((x) => x !== null);
  assert.equal(losers.length, PLAYERS - 1);
  assert.equal(new Set(losers).size, PLAYERS - 1);
  assert.ok(!losers.includes(owner));
}
