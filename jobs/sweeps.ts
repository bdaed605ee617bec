/** Sweeps run by the minute cron: repair what a crash or a dropped job could leave behind. */
import type { AppContext } from "../lib/context.ts";
import { log } from "../core/log.ts";
import { migratePreviousVersionWrites } from "../lib/migrations/mod.ts";
import { restartLostWatchPolls } from "../lib/watches/poll.ts";
import { ensureTxSweepLoop } from "../lib/tx/follow/sweep.ts";
import { restartLostPublishers } from "../lib/events/publisher_loop.ts";
import { moveStalePendingEvents } from "../lib/events/pending.ts";
import { resealSweep } from "../lib/crypto/reseal.ts";
import { payRewardsOfLinkedPlayers } from "../lib/rewards/sweep.ts";

/** A sweep; returns how many things it repaired. */
export type Sweep = (ctx: AppContext) => Promise<number>;

/** Every sweep the cron runs; other features add theirs here. */
export const sweeps: Record<string, Sweep> = {
  watch_loops: restartLostWatchPolls,
  tx_sweep_loop: ensureTxSweepLoop,
  event_publisher_loops: restartLostPublishers,
  // Settlements' events their instance died before moving into the feed.
  pending_events: moveStalePendingEvents,
  // What instances of the previous version still write during a rolling deploy.
  previous_version_writes: migratePreviousVersionWrites,
  // With SECRET_PREVIOUS: what instances still on the old SECRET sealed since the last sweep.
  secret_reseal: resealSweep,
  // Rewards of players linked by an instance of the version before rewards.
  rewards_of_linked_players: payRewardsOfLinkedPlayers,
};

/** Runs every sweep once; one failing sweep does not stop the others. */
export async function runSweeps(ctx: AppContext): Promise<Record<string, number>> {
  const results: Record<string, number> = {};
  for (const [name, sweep] of Object.entries(sweeps)) {
    try {
      results[name] = await sweep(ctx);
    } catch (error) {
      log("error", "Sweep failed", { sweep: name, error });
      results[name] = 0;
    }
  }
  return results;
}
