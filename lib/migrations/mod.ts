/**
 * The store migration: the one place that knows the shapes earlier versions stored. Each step
 * turns every record of one old shape into the current one (`step.ts` has the contract: idempotent,
 * and safe while other instances run it, each change a checked commit), so the rest of the service
 * reads one shape.
 *
 * Migrations are known by name, and the store records each one applied (`kv/store_version.ts`).
 * Every instance runs the ones not recorded as it starts, before the key check and before serving,
 * in the list's order; a step is recorded once it completed with every step before it recorded, so
 * none counts as applied over records an earlier step has yet to move. Instances starting together
 * run the same steps at once; their checked commits make each change once. A step that cannot
 * complete (a value sealed under a SECRET this instance lacks) stays unrecorded with every step
 * after it, and the next start tries again.
 *
 * Releases before names kept one store version and numbered their steps; two of them numbered
 * differently (the usage ledgers were 8 in one, the project owners 8 and the ledgers 9 in the
 * next), so a number proves only the steps every numbering release agreed on (`numbered`): a store
 * at 8 or 9 may never have had its owners' step, which therefore runs again (idempotent, as every
 * step). The number is left as they wrote it: raised, it would restart the minute sweep of the
 * previous release's instances still running (theirs runs for an hour after the number rose), and
 * their usage pass would move the fence that refuses their payouts (`previous_windows.ts`)
 * into a ledger.
 *
 * During a rolling deploy instances of the previous version keep writing what they always wrote
 * until the last of them stops; a step with `previousVersionWrites` also runs in the minute sweep
 * (`migratePreviousVersionWrites`) for an hour after it was applied, over what may have been
 * written since an hour before that, so what they add is moved on within a minute without
 * rereading every record for ever. A deploy's overlap must stay under that hour.
 */
import { log } from "../../core/log.ts";
import {
  getStoreVersionEntry,
  listAppliedMigrations,
  recordAppliedMigration,
} from "../../kv/store_version.ts";
import { moveOldDueEntries } from "./due_index.ts";
import { nameJobLanes } from "./job_lanes.ts";
import { expireOldRevokedKeys } from "./revoked_keys.ts";
import { completeSecretCheckRecord } from "./secret_check_record.ts";
import { sealV1Values } from "./sealed_v1.ts";
import type { MigrationDeps, MigrationStep, StepResult } from "./step.ts";
import { renameTxCheckJobs } from "./tx_confirm_jobs.ts";
import { migrateRecentTxRecords, migrateTxRecords } from "./tx_records.ts";
import { addProjectOwners, addRecentProjectOwners } from "./project_owners.ts";
import { moveTxUsageIntoLedgers } from "./tx_usage_ledgers.ts";
import { addMakersFromAudit, addRecentMakers } from "./makers_from_audit.ts";

interface Migration {
  /** What the store records it applied by; never reused for another step. */
  name: string;
  step: MigrationStep;
  /** The store version of the numbering releases that proves this step applied, if any does. */
  numbered?: number;
  /**
   * The previous version still writes this old shape: what the minute sweep runs while its
   * instances may still run (`since`: a time before the step was applied).
   */
  previousVersionWrites?: (deps: MigrationDeps, since: number) => Promise<StepResult>;
}

/** Every step, in the order they run. */
const MIGRATIONS: Migration[] = [
  { name: "due_index", numbered: 1, step: moveOldDueEntries },
  { name: "job_lanes", numbered: 2, step: nameJobLanes },
  {
    name: "tx_records",
    numbered: 3,
    step: migrateTxRecords,
    previousVersionWrites: migrateRecentTxRecords,
  },
  {
    name: "revoked_keys",
    numbered: 4,
    step: expireOldRevokedKeys,
    previousVersionWrites: expireOldRevokedKeys,
  },
  { name: "sealed_v1", numbered: 5, step: sealV1Values },
  { name: "secret_check_record", numbered: 6, step: completeSecretCheckRecord },
  {
    name: "tx_confirm_jobs",
    numbered: 7,
    step: renameTxCheckJobs,
    previousVersionWrites: renameTxCheckJobs,
  },
  { name: "project_owners", step: addProjectOwners, previousVersionWrites: addRecentProjectOwners },
  {
    name: "tx_usage_ledgers",
    numbered: 9,
    step: moveTxUsageIntoLedgers,
    previousVersionWrites: moveTxUsageIntoLedgers,
  },
  { name: "makers_from_audit", step: addMakersFromAudit, previousVersionWrites: addRecentMakers },
];

/** The name of every migration, in the order they run. */
export const MIGRATION_NAMES: readonly string[] = MIGRATIONS.map((m) => m.name);

/**
 * How long after a step was applied instances of the previous version may still run (the overlap
 * of a rolling deploy), and how far before that their writes are looked at again.
 */
const DEPLOY_OVERLAP_MS = 60 * 60_000;

// Markers of the one-off passes of the version before store versions were kept.
const OLD_MARKERS: Deno.KvKey = ["store_migrations"];

/**
 * Applies every migration the store has not recorded (see the header); returns the names still
 * not applied (none once the store is current). Throws when a step refuses the start
 * (`SecretStillNeededError`).
 */
export async function migrateStore(deps: MigrationDeps): Promise<string[]> {
  const { kv, clock } = deps;
  const applied = await readAppliedMigrations(kv);
  const pending = MIGRATIONS.filter((m) => !applied.has(m.name));
  if (pending.length === 0) return [];
  const recorded: string[] = [];
  const left: string[] = [];
  for (const migration of pending) {
    const { changed, complete } = await migration.step(deps);
    if (changed > 0 || !complete) {
      log(complete ? "info" : "warn", "Store migration step run", {
        step: migration.name,
        changed,
        complete,
      });
    }
    if (complete && left.length === 0) {
      await recordAppliedMigration(kv, migration.name, clock.now());
      recorded.push(migration.name);
    } else left.push(migration.name);
  }
  if (recorded.length === 0) return left;
  if (left.length === 0) {
    for await (const marker of kv.list({ prefix: OLD_MARKERS })) await kv.delete(marker.key);
  }
  log("info", "Store migrated", { applied: recorded, left });
  return left;
}

/**
 * The migrations the store has recorded, by name with when, after recording those its numbered
 * version proves (a store a numbering release left).
 */
async function readAppliedMigrations(kv: Deno.Kv): Promise<Map<string, number>> {
  const applied = await listAppliedMigrations(kv);
  const numbered = await getStoreVersionEntry(kv);
  if (!numbered) return applied;
  for (const { name, numbered: version } of MIGRATIONS) {
    if (version === undefined || version > numbered.version || applied.has(name)) continue;
    applied.set(name, await recordAppliedMigration(kv, name, numbered.updatedAt));
  }
  return applied;
}

/**
 * The minute sweep's part: moves on what instances of the previous version wrote, for a deploy's
 * overlap after each step was applied; returns how many records it changed.
 */
export async function migratePreviousVersionWrites(deps: MigrationDeps): Promise<number> {
  const applied = await listAppliedMigrations(deps.kv);
  const now = deps.clock.now();
  let changed = 0;
  for (const migration of MIGRATIONS) {
    const appliedAt = applied.get(migration.name);
    if (!migration.previousVersionWrites || appliedAt === undefined) continue;
    if (now > appliedAt + DEPLOY_OVERLAP_MS) continue;
    const result = await migration.previousVersionWrites(deps, appliedAt - DEPLOY_OVERLAP_MS);
    if (result.changed > 0) {
      log("info", "Store migration step run", { step: migration.name, changed: result.changed });
    }
    changed += result.changed;
  }
  return changed;
}
