/**
 * The store migration: the one place that knows the shapes earlier versions stored. Each step
 * turns every record of one old shape into the current one (`step.ts` has the contract: idempotent,
 * and safe while other instances run it, each change a checked commit), so the rest of the service
 * reads one shape.
 *
 * Every instance runs it as it starts, before the key check and before serving: the steps above
 * the store's version (`kv/store_version.ts`) run in order, then the version is raised to the last
 * step that completed along with every step before it (never lowered). Instances starting together
 * run the same steps at once; their checked commits make each change once. A store the service has
 * brought to the current version skips them all. A step that cannot complete (a value sealed under
 * a SECRET this instance lacks) leaves the version below it, and the next start tries again.
 *
 * During a rolling deploy instances of the previous version keep writing what they always wrote
 * until the last of them stops; the steps with `previousVersionWrites` also run in the minute
 * sweep (`migratePreviousVersionWrites`) for an hour after the store reached the current version,
 * over what may have been written since an hour before that, so what they add is moved on within a
 * minute without rereading every record for ever. A deploy's overlap must stay under that hour.
 */
import { log } from "../../core/log.ts";
import {
  getStoreVersion,
  getStoreVersionEntry,
  raiseStoreVersion,
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

interface Migration {
  /** The store version a store has once this step and every one before it completed. */
  version: number;
  name: string;
  step: MigrationStep;
  /**
   * The previous version still writes this old shape: what the minute sweep runs while its
   * instances may still run (`since`: a time before the store reached this version).
   */
  previousVersionWrites?: (deps: MigrationDeps, since: number) => Promise<StepResult>;
}

/** Every step, in the order they run. */
const MIGRATIONS: Migration[] = [
  { version: 1, name: "due_index", step: moveOldDueEntries },
  { version: 2, name: "job_lanes", step: nameJobLanes },
  {
    version: 3,
    name: "tx_records",
    step: migrateTxRecords,
    previousVersionWrites: migrateRecentTxRecords,
  },
  {
    version: 4,
    name: "revoked_keys",
    step: expireOldRevokedKeys,
    previousVersionWrites: expireOldRevokedKeys,
  },
  { version: 5, name: "sealed_v1", step: sealV1Values },
  { version: 6, name: "secret_check_record", step: completeSecretCheckRecord },
  {
    version: 7,
    name: "tx_confirm_jobs",
    step: renameTxCheckJobs,
    previousVersionWrites: renameTxCheckJobs,
  },
  {
    version: 8,
    name: "project_owners",
    step: addProjectOwners,
    previousVersionWrites: addRecentProjectOwners,
  },
  {
    version: 9,
    name: "tx_usage_ledgers",
    step: moveTxUsageIntoLedgers,
    previousVersionWrites: moveTxUsageIntoLedgers,
  },
];

/**
 * How long after the store reached its version instances of the previous one may still run (the
 * overlap of a rolling deploy), and how far before that their writes are looked at again.
 */
const DEPLOY_OVERLAP_MS = 60 * 60_000;

/** The version of the store this code reads. */
export const STORE_VERSION = MIGRATIONS.at(-1)!.version;

// Markers of the one-off passes of the version before store versions were kept.
const OLD_MARKERS: Deno.KvKey = ["store_migrations"];

/**
 * Brings the store to `STORE_VERSION` (see the header); returns the version it stands at. Throws
 * when a step refuses the start (`SecretStillNeededError`).
 */
export async function migrateStore(deps: MigrationDeps): Promise<number> {
  const { kv, clock } = deps;
  const from = await getStoreVersion(kv);
  if (from >= STORE_VERSION) return from;
  let reached = from;
  for (const migration of MIGRATIONS) {
    if (migration.version <= from) continue;
    const { changed, complete } = await migration.step(deps);
    if (changed > 0 || !complete) {
      log(complete ? "info" : "warn", "Store migration step run", {
        step: migration.name,
        changed,
        complete,
      });
    }
    if (complete && reached === migration.version - 1) reached = migration.version;
  }
  if (reached === from) return from;
  const now = await raiseStoreVersion(kv, reached, clock.now());
  if (now === STORE_VERSION) {
    for await (const marker of kv.list({ prefix: OLD_MARKERS })) await kv.delete(marker.key);
  }
  log("info", "Store migrated", { from, to: now });
  return now;
}

/**
 * The minute sweep's part: moves on what instances of the previous version wrote, for a deploy's
 * overlap after the store reached the current version; returns how many records it changed.
 */
export async function migratePreviousVersionWrites(deps: MigrationDeps): Promise<number> {
  const reached = await getStoreVersionEntry(deps.kv);
  if (!reached || reached.version < STORE_VERSION) return 0;
  if (deps.clock.now() > reached.updatedAt + DEPLOY_OVERLAP_MS) return 0;
  const since = reached.updatedAt - DEPLOY_OVERLAP_MS;
  let changed = 0;
  for (const migration of MIGRATIONS) {
    if (!migration.previousVersionWrites) continue;
    const result = await migration.previousVersionWrites(deps, since);
    if (result.changed > 0) {
      log("info", "Store migration step run", { step: migration.name, changed: result.changed });
    }
    changed += result.changed;
  }
  return changed;
}
