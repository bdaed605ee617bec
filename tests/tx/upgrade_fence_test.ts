// The upgrade to leased limits during a rolling deploy: an instance of the previous version sees
// only its day list, so this version fences it out before taking anything, and the previous
// version refuses rather than pays past a limit it cannot see. The previous version is played by
// its own rule, word for word (main before issue 25: lib/tx/request/limits.ts step 12 on the pruned list,
// the reservation a commit checked on the list), over the same store.
import assert from "node:assert/strict";
import { MAX_TX_PER_DAY } from "../../lib/tx/request/limits.ts";
import { previousVersionUsage, reservationsOf } from "../../lib/migrations/previous_windows.ts";
import { addToWindow, pruneWindow, txDayUsageKey, type UsageWindow } from "../../kv/tx_usage.ts";
import { scopeTiming } from "../../kv/tx_allowance.ts";
import { outcomeOf, startTxHarness, type TxHarness } from "../support/tx_harness.ts";

const DAY_WINDOW_MS = scopeTiming("day").windowMs;

type PreviousVersionTurn = "reserved" | "daily_tx_quota_exceeded" | "conflict";

// The previous version's read of the day list, then its check and its checked commit.
async function previousVersionRead(kv: Deno.Kv, projectId: string) {
  return await kv.get<UsageWindow>(txDayUsageKey(projectId));
}
async function previousVersionReserve(
  kv: Deno.Kv,
  entry: Deno.KvEntryMaybe<UsageWindow>,
  now: number,
): Promise<PreviousVersionTurn> {
  const day = pruneWindow(entry.value, now - DAY_WINDOW_MS);
  if (day.times.length >= MAX_TX_PER_DAY) return "daily_tx_quota_exceeded";
  const ok = (await kv.atomic().check(entry).set(entry.key, addToWindow(day, now)).commit()).ok;
  return ok ? "reserved" : "conflict";
}

async function pay(h: TxHarness, userId: number, key: string): Promise<string> {
  return await outcomeOf(
    await h.a.post("transfer-sol", { to: { userId }, amount: "0.001", idempotencyKey: key }),
  );
}

Deno.test("During a rolling deploy the previous version is fenced out by this version's first payout: it refuses instead of passing the day's count", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "1" });
  await h.link(7);
  const { kv } = h.a;
  const projectId = h.project.id;
  const now = () => h.a.clock.now();

  // Given: a previous-version instance reserved a payout, and read the list again for another
  const first = await previousVersionReserve(kv, await previousVersionRead(kv, projectId), now());
  assert.equal(first, "reserved");
  const readBeforeFence = await previousVersionRead(kv, projectId);

  // When: this version pays (its grant fences the list in its own commit)
  assert.equal(await pay(h, 7, "new-1"), "confirmed");

  // Then: the previous version's pending reservation loses on its check, and once it reads again
  // it finds the day full and refuses; its earlier reservation is still counted by this version
  assert.equal(await previousVersionReserve(kv, readBeforeFence, now()), "conflict");
  const fenced = await previousVersionRead(kv, projectId);
  assert.equal(await previousVersionReserve(kv, fenced, now()), "daily_tx_quota_exceeded");
  assert.equal(reservationsOf(fenced.value, now() - DAY_WINDOW_MS).times.length, 1);
  assert.equal(previousVersionUsage("day", fenced.value, now()), 1n);

  // And this version goes on paying, the fence not counted against the day
  assert.equal(await pay(h, 7, "new-2"), "confirmed");
  const later = await previousVersionRead(kv, projectId);
  assert.equal(await previousVersionReserve(kv, later, now()), "daily_tx_quota_exceeded");
});
