/**
 * What a reservation (`reserve.ts`) is made with besides the request's checks, and what its rounds
 * answer:
 *
 * | Input           | What                                                                        |
 * | --------------- | --------------------------------------------------------------------------- |
 * | The new attempt | its id, and the transaction it stores, signed while the places are taken    |
 * | Its places      | taken from blocks, folded into its commit, or none (a withdrawal's)         |
 * | Its records     | those its commit checks                                                     |
 */
import { txRequestKey, type TxRequestRecord } from "../../../kv/tx_requests.ts";
import type { UsageWindow } from "../../../kv/tx_usage.ts";
import { type Project, projectKey } from "../../../kv/projects.ts";
import { policyKey, type TxPolicy } from "../../../kv/policy.ts";
import { senderKey } from "../request/sender.ts";
import type { CheckedRequest } from "../request/checks.ts";
import type { SignOutcome } from "../build/build.ts";
import type { Deadline } from "../rpc/timing.ts";
import { withDeadline } from "../../../core/deadline.ts";
import type { Admission, AdmissionFold } from "../../quota/admission.ts";
import type { TxContext } from "../runtime.ts";
import { ulid } from "../../../core/ids.ts";
import type { AllowanceClaim } from "../allowance/allowance_grant.ts";
import { countsAgainstLimits, limitNeed } from "../request/limits.ts";
import { type ReadAhead, readWithFolds, windowKeys } from "../request/read_ahead.ts";
import type { RetryProof } from "../follow/retry_proof.ts";

/**
 * The outcome: a new attempt reserved (with its signed transaction when `sign` built one, else
 * `unbuilt` says why not), or a stored attempt that won a race for the key.
 */
export type ReserveOutcome =
  | { kind: "reserved"; entry: Deno.KvEntry<TxRequestRecord>; unbuilt: Unbuilt | null }
  | { kind: "existing"; record: TxRequestRecord };

type Unbuilt = Extract<SignOutcome, { kind: "unbuilt" }>;

/** What one reservation commit is made with, besides the request. */
export interface Attempt {
  attemptId: string;
  /**
   * Its places: taken from blocks, or `folded` (its commit counts them), or null: a withdrawal's
   * (none).
   */
  claim: AllowanceClaim | null;
  /** The attempt's transaction as a commit round stores it (`freshSigning`), if one is signed. */
  signed: () => Promise<SignOutcome | null>;
  /** The records the round read, while the places were taken (`readReservation`). */
  read: Promise<ReservationRead>;
  /** The request's count, when a quiet project's is the commit's to make. */
  quota: AdmissionFold | null;
}

/** What a round read: the records its commit checks, and the ledgers a fold counts places in. */
export interface ReservationRead {
  entries: Deno.KvEntryMaybe<unknown>[];
  /** `foldKeys`' records; null for a withdrawal (it takes no places). */
  ledgers: Deno.KvEntryMaybe<unknown>[] | null;
  /** The project's request counters, when the commit counts the request; else null. */
  counters: Deno.KvEntryMaybe<unknown> | null;
}

/**
 * What one round of a reservation ends with: an outcome, a failed attempt to prove dead first, a
 * policy saved since the checks to judge the request by, or a commit lost to a concurrent change.
 */
export type ReserveRound =
  | ReserveOutcome
  | { kind: "prove"; record: TxRequestRecord }
  | { kind: "policy"; entry: Deno.KvEntryMaybe<TxPolicy> }
  | { kind: "conflict" }
  /** Its places do not fold into its commit: a round takes them. */
  | { kind: "round" };

/** What a request's rounds share. */
export interface ReserveState {
  /** The attempt this request last tried to reserve: found stored, its commit applied (lost answer). */
  tried: string | null;
  /** Proofs made of failed attempts, by attempt id: a dead attempt stays dead. */
  proofs: Map<string, RetryProof>;
}

/** How a reservation is made. */
export interface ReserveOptions {
  deadline?: Deadline;
  /**
   * The request's step 2 (counted while steps 3 to 11 ran): settled before any place is taken.
   */
  admission?: Admission | undefined;
  /**
   * Builds and signs the new attempt's transaction (its id goes in the memo) while the places are
   * taken; the reservation's commit stores it, so a single payout needs no commit of its own for
   * its signed bytes.
   */
  sign?: ((attemptId: string) => Promise<SignOutcome>) | undefined;
}

/**
 * The records of a reservation's commit the checks read: the request, the project, the sender's
 * record (API key or member) and, but for a withdrawal, the policy.
 */
function readByChecks(request: CheckedRequest): Deno.KvEntryMaybe<unknown>[] {
  const { project, sender, policy } = request.read;
  return [request.previous, project, sender, ...(policy ? [policy] : [])];
}

/**
 * The records a reservation's commit checks: the request, the project, the sender's record, the
 * policy but for a withdrawal (the first ones the checks read, `readByChecks`), the recipient's
 * window, and the player's when there is one.
 */
export function reservationKeys(request: CheckedRequest): Deno.KvKey[] {
  const projectId = request.project.id;
  const keys: Deno.KvKey[] = [
    txRequestKey(projectId, request.input.idempotencyKey),
    projectKey(projectId),
    senderKey(projectId, request.sender),
    ...(request.read.policy ? [policyKey(projectId)] : []),
    ...windowKeys(projectId, { recipient: request.recipient, userId: request.recipientUserId }),
  ];
  return keys;
}

/**
 * A round's records (`reservationKeys`' order) by name; `newPolicy`: the policy when it was saved
 * since the checks read it (null when unchanged, or for a withdrawal).
 */
export function reservationEntries(request: CheckedRequest, entries: Deno.KvEntryMaybe<unknown>[]) {
  const [requestEntry, projectEntry, senderEntry] = entries;
  const checked = request.read.policy;
  const policy = checked ? entries[3] as Deno.KvEntryMaybe<TxPolicy> : null;
  const [recipientEntry, playerEntry] = entries.slice(checked ? 4 : 3);
  return {
    requestEntry: requestEntry as Deno.KvEntryMaybe<TxRequestRecord>,
    projectEntry: projectEntry as Deno.KvEntryMaybe<Project>,
    senderEntry: senderEntry!,
    newPolicy: policy && policy.versionstamp !== checked!.versionstamp ? policy : null,
    recipientEntry: recipientEntry as Deno.KvEntryMaybe<UsageWindow>,
    playerEntry: playerEntry as Deno.KvEntryMaybe<UsageWindow> | undefined,
  };
}

// A transaction signed this long before a commit round is signed again for it: a payout that
// waited for its places (other instances' blocks, up to 3 s) or kept losing its commit must not
// go out with a blockhash as old as that wait (a blockhash lives about 150 blocks).
const FRESH_SIGNATURE_MS = 250;

/**
 * The attempt's transaction, signed at once beside the taking of its places, and signed again
 * when a commit round comes more than `FRESH_SIGNATURE_MS` after it was: the bytes a round stores
 * are the ones sent, and earlier ones were never stored or sent. A first failure to build is kept
 * (the reservation records it); signing again never holds a round up, nor fails it.
 */
export function freshSigning(
  attemptId: string,
  sign: ReserveOptions["sign"],
): () => Promise<SignOutcome | null> {
  if (!sign) return () => Promise.resolve(null);
  const signAt = async () => ({ outcome: await sign(attemptId), at: performance.now() });
  let signing = signAt();
  return async () => {
    const earlier = await signing;
    const { outcome, at } = earlier;
    if (outcome.kind === "unbuilt" || performance.now() - at <= FRESH_SIGNATURE_MS) return outcome;
    // Signed again if that is quick; a slow or failing node leaves the earlier bytes (older, never
    // sent, still good) to this round, and fresher ones to a later round when they come.
    const again = signAt();
    const fresher = await withDeadline(again, { ms: FRESH_SIGNATURE_MS, fallback: null });
    if (fresher?.outcome.kind === "signed") signing = Promise.resolve(fresher);
    else {
      again.then((late) => {
        if (late.outcome.kind === "signed") signing = Promise.resolve(late);
      });
    }
    return (await signing).outcome;
  };
}

/**
 * The records a reservation's commit checks (`reservationKeys`' order), and those it counts the
 * request and its places in (`quota`: the counters' key when it counts the request). The first round
 * takes what the checks read: their records, and (`ahead`) the others read beside them
 * (`read_ahead.ts`) when they were read for this recipient and asset; else it reads those. A change
 * since fails its commit, and the next round reads everything.
 */
export async function readReservation(
  ctx: TxContext,
  request: CheckedRequest,
  options: {
    first: boolean;
    ahead: Promise<ReadAhead | null> | null;
    quota: Deno.KvKey | null;
  },
): Promise<ReservationRead> {
  const { quota } = options;
  const checked = readByChecks(request);
  if (options.first) {
    const ahead = await options.ahead;
    if (ahead && readFor(ahead, request) && (!quota || ahead.counters)) {
      const { windows, ledgers, counters } = ahead;
      return { entries: [...checked, ...windows], ledgers, counters: quota ? counters : null };
    }
  }
  const keys = reservationKeys(request);
  const { own, ledgers, counters } = await readWithFolds(ctx, {
    projectId: request.project.id,
    kind: request.kind,
    asset: request.asset,
    own: options.first ? keys.slice(checked.length) : keys,
    counters: quota,
  });
  // The commit checks every one of the entries.
  return { entries: options.first ? [...checked, ...own] : own, ledgers, counters };
}

/** Whether `ahead` was read for the request's recipient, player and asset. */
function readFor(ahead: ReadAhead, request: CheckedRequest): boolean {
  return ahead.recipient === request.recipient && ahead.userId === request.recipientUserId &&
    ahead.asset === request.asset;
}

/** A new attempt: its id, and its transaction signed at once when `sign` builds one. */
export function newAttempt(
  ctx: TxContext,
  options: ReserveOptions,
): Pick<Attempt, "attemptId" | "signed"> {
  const attemptId = ulid(ctx.clock.now());
  return { attemptId, signed: freshSigning(attemptId, options.sign) };
}

/**
 * The request's places in the limits: from blocks, or (with `fold`) `folded` into its commit when
 * its project pays now and then here; null for a withdrawal (it takes none).
 */
export async function takePlaces(
  ctx: TxContext,
  request: CheckedRequest,
  options: ReserveOptions & { fold: boolean },
): Promise<AllowanceClaim | null> {
  if (!countsAgainstLimits(request.kind)) return null;
  return await ctx.tx.allowances.take(request.project.id, limitNeed(request), {
    signal: options.deadline?.signal,
    fold: options.fold,
  });
}
