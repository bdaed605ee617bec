/**
 * Transaction requests stored by earlier versions, in one pass over the records:
 * - an attempt stored before the sign-by time existed gets it (its reservation time plus the
 *   route's 20 s), one signed before the blockhash's slot was kept gets the safe lower bound of it
 *   (a block's slot is never below its height: the last valid height minus 150), and a record from
 *   before earlier attempts were listed gets an empty list;
 * - a request stored before the status index existed (`["tx_by_status", ...]`) gets its entry, so
 *   `GET /v1/tx?status=` lists it.
 * Each record is changed in a commit checked against it and against the index entry's absence, so
 * instances running this together change each once, and a status change made meanwhile (which
 * moves the entry itself) wins.
 */
import { commitWithRetry, RETRY } from "../../core/commit_retry.ts";
import {
  type SignedTx,
  txByStatusKey,
  txRequestKey,
  type TxRequestRecord,
} from "../../kv/tx_requests.ts";
import { listAllProjects } from "../../kv/projects.ts";
import { ulidFloor } from "../../core/ids.ts";
import { defaultTxTiming } from "../tx/rpc/timing.ts";
import type { MigrationStep, StepResult } from "./step.ts";

/** A request record of any earlier version. */
type OldTxRequestRecord =
  & Omit<TxRequestRecord, "signBy" | "previous" | "signed">
  & {
    signBy?: number;
    previous?: TxRequestRecord["previous"];
    signed: (Omit<SignedTx, "blockhashSlot"> & { blockhashSlot?: bigint }) | null;
  };

/** Gives every stored request the current shape and its status index entry. */
export const migrateTxRecords: MigrationStep = async ({ kv, clock }) => {
  let changed = 0;
  for await (const { key } of kv.list({ prefix: ["tx_requests"] })) {
    if (await migrateOne(kv, key, clock.now())) changed++;
  }
  return { changed, complete: true };
};

/**
 * The same for the requests whose latest attempt started since `since` only, project by project
 * through the attempts' time index: what instances of the previous version wrote during a rolling
 * deploy, without reading every request ever kept each minute.
 */
export async function migrateRecentTxRecords(
  deps: { kv: Deno.Kv; clock: { now(): number } },
  since: number,
): Promise<StepResult> {
  const { kv, clock } = deps;
  let changed = 0;
  const from = ulidFloor(since);
  for await (const project of listAllProjects(kv)) {
    const prefix = ["tx_attempts_by_time", project.id];
    for await (const entry of kv.list<string>({ prefix, start: [...prefix, from] })) {
      if (await migrateOne(kv, txRequestKey(project.id, entry.value), clock.now())) changed++;
    }
  }
  return { changed, complete: true };
}

// The record in the current shape, or null when it is in it already.
function currentShape(record: OldTxRequestRecord): TxRequestRecord | null {
  const { signBy, previous, signed } = record;
  const old = signBy === undefined || previous === undefined ||
    (signed !== null && signed.blockhashSlot === undefined);
  if (!old) return null;
  return {
    ...record,
    signBy: signBy ?? record.usage.at + defaultTxTiming().answerWithinMs,
    previous: previous ?? [],
    signed: signed && {
      ...signed,
      blockhashSlot: signed.blockhashSlot ?? signed.lastValidBlockHeight - 150n,
    },
  };
}

// Brings the record at `key` to the current shape and indexes it; true when it changed anything.
async function migrateOne(kv: Deno.Kv, key: Deno.KvKey, now: number): Promise<boolean> {
  return await commitWithRetry("migrate a transaction request", async () => {
    const entry = await kv.get<OldTxRequestRecord>(key);
    const record = entry.value;
    if (!record) return false;
    const next = currentShape(record);
    const indexKey = txByStatusKey(record.projectId, record.status, record.attemptId);
    const index = await kv.get(indexKey);
    if (!next && index.versionstamp) return false;
    const op = kv.atomic().check(entry, index);
    // A record with an expiry (a key that failed without leaving the node) keeps it.
    const kept = record.expiresAt === undefined ? {} : { expireIn: record.expiresAt - now };
    if (kept.expireIn !== undefined && kept.expireIn <= 0) return false;
    if (next) op.set(key, next, kept);
    if (!index.versionstamp) op.set(indexKey, record.key, kept);
    return (await op.commit()).ok ? true : RETRY;
  });
}
