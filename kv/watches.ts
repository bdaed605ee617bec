/** Watched addresses: per project, each with the position its poll loop has reached. */
import { commitWithRetry, RETRY } from "../core/commit_retry.ts";
import { ulid } from "../core/ids.ts";
import { addJobRemoval, getJobEntry } from "./jobs.ts";
import { wasWrittenBy } from "./lost_answer.ts";
import { takeWindowRoom } from "./window_counts.ts";
import { addAuditEntry, type AuditInput } from "./audit_log.ts";

/** Where a watch's history was last read up to. */
export interface WatchPosition {
  /** Newest signature seen; null when the address had no history at the first poll. */
  signature: string | null;
  slot: number | null;
}

/** A watch as stored. */
export interface Watch {
  id: string;
  projectId: string;
  name: string;
  address: string;
  createdAt: number;
  /** Null until the first poll has recorded where the history ends. */
  position: WatchPosition | null;
  polledAt: number | null;
  /** Successful polls so far (for support and tests). */
  polls: number;
}

/** Key of a watch record. */
export function watchKey(projectId: string, id: string): Deno.KvKey {
  return ["watches", projectId, id];
}
/** Key of the per-project name index (value: watch id). */
function watchNameKey(projectId: string, name: string): Deno.KvKey {
  return ["watches_by_name", projectId, name];
}
/** Key of the per-project address index (value: watch id). */
function watchAddressKey(projectId: string, address: string): Deno.KvKey {
  return ["watches_by_address", projectId, address];
}
/** Key of the project's watch count. */
function watchCountKey(projectId: string): Deno.KvKey {
  return ["watch_counts", projectId];
}
/** Id of the job that polls a watch: one per watch, so two poll loops can never exist. */
export function watchPollJobId(projectId: string, watchId: string): string {
  return `watch_poll:${projectId}:${watchId}`;
}

/** Why `createWatch` refused. */
export class WatchConflictError extends Error {
  constructor(readonly reason: "name_taken" | "address_taken" | "limit", readonly other?: string) {
    super(`Cannot add watch: ${reason}`);
  }
}

/**
 * Creates a watch and, through `addPollJob` (its domain declares the job), its poll job in one
 * commit, within `max` watches per project; `audit` builds the entry recorded with it.
 */
export async function createWatch(
  kv: Deno.Kv,
  input: {
    projectId: string;
    name: string;
    address: string;
    now: number;
    max: number;
    addPollJob(op: Deno.AtomicOperation, watch: Watch): void;
    audit?: ((watch: Watch) => AuditInput) | undefined;
  },
): Promise<Watch> {
  const { projectId, name, address } = input;
  return await commitWithRetry("add watch", async () => {
    const [nameEntry, addressEntry, countEntry] = await kv.getMany<[string, string, number]>([
      watchNameKey(projectId, name),
      watchAddressKey(projectId, address),
      watchCountKey(projectId),
    ]);
    if (nameEntry.value !== null) throw new WatchConflictError("name_taken");
    if (addressEntry.value !== null) {
      const other = (await kv.get<Watch>(watchKey(projectId, addressEntry.value))).value;
      throw new WatchConflictError("address_taken", other?.name);
    }
    const count = countEntry.value ?? 0;
    if (count >= input.max) throw new WatchConflictError("limit");
    const watch: Watch = {
      id: ulid(input.now),
      projectId,
      name,
      address,
      createdAt: input.now,
      position: null,
      polledAt: null,
      polls: 0,
    };
    const op = kv.atomic()
      .check(nameEntry, addressEntry, countEntry)
      .check({ key: watchKey(projectId, watch.id), versionstamp: null })
      .set(watchKey(projectId, watch.id), watch)
      .set(watchNameKey(projectId, name), watch.id)
      .set(watchAddressKey(projectId, address), watch.id)
      .set(watchCountKey(projectId), count + 1);
    input.addPollJob(op, watch);
    if (input.audit) addAuditEntry(op, input.audit(watch));
    if ((await op.commit()).ok || await wasWrittenBy(kv, watchKey(projectId, watch.id))) {
      return watch;
    }
    return RETRY;
  }, { rounds: 10 });
}

/** Returns a watch entry (versionstamp null when absent). */
export function getWatchEntry(
  kv: Deno.Kv,
  projectId: string,
  id: string,
): Promise<Deno.KvEntryMaybe<Watch>> {
  return kv.get<Watch>(watchKey(projectId, id));
}

/** Lists a project's watches, oldest first. */
export async function listWatchesByProject(kv: Deno.Kv, projectId: string): Promise<Watch[]> {
  const watches: Watch[] = [];
  for await (const e of kv.list<Watch>({ prefix: ["watches", projectId] })) watches.push(e.value);
  return watches;
}

/** Iterates over every watch of every project (for the sweep). */
export async function* listAllWatches(kv: Deno.Kv): AsyncGenerator<Watch> {
  for await (const e of kv.list<Watch>({ prefix: ["watches"] })) yield e.value;
}

/**
 * Deletes a watch with its indexes and its poll job, so polling stops; returns it, or null when
 * absent. `audit` builds the entry recorded with it.
 */
export async function deleteWatch(
  kv: Deno.Kv,
  projectId: string,
  id: string,
  options: { audit?: ((watch: Watch) => AuditInput) | undefined } = {},
): Promise<Watch | null> {
  return await commitWithRetry("remove watch", async () => {
    const entry = await getWatchEntry(kv, projectId, id);
    if (!entry.value) return null;
    const countEntry = await kv.get<number>(watchCountKey(projectId));
    const jobEntry = await getJobEntry(kv, watchPollJobId(projectId, id));
    const op = kv.atomic()
      .check(entry, countEntry, jobEntry)
      .delete(entry.key)
      .delete(watchNameKey(projectId, entry.value.name))
      .delete(watchAddressKey(projectId, entry.value.address))
      .set(watchCountKey(projectId), Math.max(0, (countEntry.value ?? 1) - 1));
    // A poll running right now fails its final commit (its lease check sees the job gone).
    if (jobEntry.value) addJobRemoval(op, jobEntry as Deno.KvEntry<typeof jobEntry.value>);
    if (options.audit) addAuditEntry(op, options.audit(entry.value));
    if ((await op.commit()).ok) return entry.value;
    return RETRY;
  }, { rounds: 10 });
}

/** Key of a developer's watch event count of the current minute, all projects together (`window_counts.ts`). */
function watchEventCountKey(developer: string): Deno.KvKey {
  return ["watch_event_counts_by_developer", developer];
}

/**
 * Takes room for up to `wanted` events in the developer's count of the current clock minute (all
 * their projects together), never past `max`; returns how many were counted before and how many
 * it took. Its own small checked commit, so polls running at once never conflict on their own
 * commits. A poll that then fails to commit leaves its room taken: the count may run high, never
 * low.
 */
export async function takeWatchEventRoom(
  kv: Deno.Kv,
  developer: string,
  input: { now: number; wanted: number; max: number },
): Promise<{ before: number; taken: number }> {
  return await takeWindowRoom(kv, watchEventCountKey(developer), {
    ...input,
    windowMs: 60_000,
  }, { label: "count watch events" });
}
