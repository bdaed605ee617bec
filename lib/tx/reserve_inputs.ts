/**
 * What a reservation's commit is made with besides the request's checks (`reserve.ts`): the
 * records it checks, and the transaction it stores, signed while the places were taken.
 */
import { projectKey } from "../../kv/projects.ts";
import { txRequestKey } from "../../kv/tx_requests.ts";
import { txPlayerUsageKey, txRecipientUsageKey } from "../../kv/tx_usage.ts";
import type { CheckedRequest } from "./checks.ts";
import { senderKey } from "./sender.ts";
import type { SignOutcome } from "./build.ts";
import type { Deadline } from "./timing.ts";

/** How a reservation is made. */
export interface ReserveOptions {
  deadline?: Deadline;
  /**
   * Resolves once the request passed its quota (step 2, counted while steps 3 to 11 ran); rejects
   * with its error. Awaited before any place is taken.
   */
  admitted?: (() => Promise<void>) | undefined;
  /**
   * Builds and signs the new attempt's transaction (its id goes in the memo) while the places are
   * taken; the reservation's commit stores it, so a single payout needs no commit of its own for
   * its signed bytes.
   */
  sign?: ((attemptId: string) => Promise<SignOutcome>) | undefined;
}

/**
 * The records a reservation's commit checks: the request, the project, the sender's record (API
 * key or member), the recipient's window, and the player's when there is one.
 */
export function reservationKeys(request: CheckedRequest): Deno.KvKey[] {
  const projectId = request.project.id;
  const keys: Deno.KvKey[] = [
    txRequestKey(projectId, request.input.idempotencyKey),
    projectKey(projectId),
    senderKey(projectId, request.sender),
    txRecipientUsageKey(projectId, request.recipient),
  ];
  if (request.recipientUserId !== null) {
    keys.push(txPlayerUsageKey(projectId, request.recipientUserId));
  }
  return keys;
}

// A transaction signed this long before a commit round is signed again for it: a payout that
// waited for its places (other instances' blocks, up to 3 s) or kept losing its commit must not
// go out with a blockhash as old as that wait (a blockhash lives about 150 blocks).
const FRESH_SIGNATURE_MS = 250;

/**
 * The attempt's transaction, signed at once beside the taking of its places, and signed again
 * when a commit round comes more than `FRESH_SIGNATURE_MS` after it was: the bytes a round stores
 * are the ones sent, and earlier ones were never stored or sent. A failure to build is kept (the
 * reservation records it).
 */
export function freshSigning(
  attemptId: string,
  sign: ReserveOptions["sign"],
): () => Promise<SignOutcome | null> {
  if (!sign) return () => Promise.resolve(null);
  const signAt = async () => ({ outcome: await sign(attemptId), at: performance.now() });
  let signing = signAt();
  return async () => {
    const { outcome, at } = await signing;
    if (outcome.kind === "unbuilt" || performance.now() - at <= FRESH_SIGNATURE_MS) return outcome;
    signing = signAt();
    return (await signing).outcome;
  };
}
