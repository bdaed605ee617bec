/**
 * A payout attempt's lifecycle, stated once (as Stripe states a PaymentIntent's). The stored
 * record (`kv/tx_requests.ts`) is read as one of these states (`stateOf`); an event moves it as
 * this table says, and a pair the table does not list changes nothing (`applyEvent`,
 * `apply_event.ts`, answers null).
 *
 * | state ↓  event →  | reserve      | sign   | accept | answer    | expiry_unproven | follow | confirm   | abandon           | fail                   | found_landed |
 * | ----------------- | ------------ | ------ | ------ | --------- | --------------- | ------ | --------- | ----------------- | ---------------------- | ------------ |
 * | new (no record)   | reserved (3) |        |        |           |                 |        |           |                   |                        |              |
 * | reserved          |              | signed |        |           |                 | same   |           | failed: abandoned | failed: unbuilt        |              |
 * | signed            |              |        | signed | submitted | expiry_unproven | same   | confirmed |                   | failed: its reason (1) |              |
 * | submitted         |              |        | same   |           | expiry_unproven | same   | confirmed |                   | failed: its reason (1) |              |
 * | expiry_unproven   |              |        | same   | same (2)  |                 | same   | confirmed |                   | failed: its reason (1) |              |
 * | confirmed         |              |        |        |           |                 |        |           |                   |                        |              |
 * | failed: any       | reserved (4) |        |        |           |                 |        |           |                   |                        | confirmed    |
 *
 * (1) `refused` when the first send was refused in preflight, `expired` when proven expired
 * (`EXPIRED_ERROR`), else `on_chain`. (2) The route's answer moves an attempt still
 * `pending` to `submitted`; it stays unproven. (3) `signed` when the reservation stores the
 * attempt's signed transaction (a single payout's). (4) A new attempt, once the failed one is
 * proven dead (`retry_proof.ts`), which joins the key's earlier attempts.
 *
 * Effects, in the same checked commit (`reserve.ts` reserves, `transitions.ts` settles,
 * `attempt_marks.ts` marks, `confirm_job.ts` follows again):
 * - reserve takes the attempt's places in the limits, adds its confirmation job and enters it in
 *   the unsettled index and the index by time (a replaced attempt leaves it);
 * - every status change moves the status index; a final one leaves the unsettled index;
 * - confirm, fail and found_landed record one `tx` event (abandon none: nothing was sent);
 * - abandon and fail give the attempt's places back in the limits; found_landed takes them again;
 * - confirm, abandon and fail remove the attempt's idle confirmation job (not for the keys of a
 *   shared transaction: their jobs end on their next round);
 * - a failure that never left the node (abandoned, unbuilt, refused) keeps the key 30 days;
 * - for a reward's payment (`reward:<key>`), confirm and found_landed apply the reward's `credit`,
 *   abandon and fail its `release` (`expire` once past its time), with its event right after the
 *   `tx` event (`reward_settlement.ts`): the reward moves with its payment.
 * The keys of a shared transaction (`SignedTx.sharedKeys`) move together, in one commit.
 *
 * A reward (`kv/rewards.ts`, `lib/rewards/`) is a payment to a player that may wait for them:
 * granted `held` (its `reward_held` event then, unless its player is linked and it is about to be
 * paid), its payment is an attempt of this table under the key `reward:<key>`, and its own events
 * move it in and out of the attempt's states (`rewardStateOf`: the reward's status, or its
 * payment's state while paying or paid):
 *
 * | state ↓  event →  | pay      | wait     | cancel    | expire    | release | credit    |
 * | ----------------- | -------- | -------- | --------- | --------- | ------- | --------- |
 * | held              | reserved | same (3) | cancelled | expired   |         | confirmed |
 * | confirmed         |          |          |           |           |         | same (4)  |
 * | failed: any       |          |          |           | expired   | held    |           |
 * | cancelled         |          |          |           |           |         |           |
 * | expired           |          |          |           |           |         |           |
 *
 * `pay` is applied in its payment's reservation commit (the reward is the payment's sender,
 * `sender.ts`), so a reward cancelled or expired first is never paid; `release` and `credit` in its
 * settlement's (above). `wait`: its payment was refused before a reservation (no wallet linked, no
 * room in the limits, a check), (3) recording `reward_held` on its first wait only. `release`: its
 * payment failed, nothing reached the player; it waits to be tried again. (4) `credit`: its payment
 * confirmed, the reward is paid (`reward_paid`); from `held` only for a released payment found
 * landed after all. `cancel` and `expire` record `reward_cancelled` and `reward_expired`; `credit`,
 * `cancel` and `expire` give back what the reward held against the player's cap.
 * `lifecycle_rewards.ts` applies these events (`applyRewardEvent`), `lib/rewards/moves.ts` commits
 * them.
 */
import type { SignedTx, TxRequestRecord } from "../../../kv/tx_requests.ts";
import type { RewardWait } from "../../../kv/rewards.ts";
import { ABANDONED_ERROR, EXPIRED_ERROR } from "./result.ts";

/** Why a failed attempt failed, as the dashboard says it. */
const FAILURE_REASONS = [
  "abandoned",
  "unbuilt",
  "refused",
  "on_chain",
  "expired",
] as const;
type FailureReason = typeof FAILURE_REASONS[number];

/** The state of a payout attempt; `new` before its key's first (or after a forgotten) one. */
export type AttemptState =
  | { name: "new" }
  | { name: "reserved" }
  | { name: "signed"; accepted: boolean }
  | { name: "submitted"; accepted: boolean }
  | { name: "expiry_unproven"; since: number }
  | { name: "confirmed" }
  | { name: "failed"; reason: FailureReason; error: string };

/** A reward's own states, before its payment or ended without one. */
const REWARD_STATES = ["held", "cancelled", "expired"] as const;

/** A state as the table names it: a failure with its reason, or a reward's own state. */
export type StateName =
  | Exclude<AttemptState["name"], "failed">
  | `failed:${FailureReason}`
  | typeof REWARD_STATES[number];

/** Every state the table names. */
export const STATE_NAMES: readonly StateName[] = [
  "new",
  "reserved",
  "signed",
  "submitted",
  "expiry_unproven",
  "confirmed",
  ...FAILURE_REASONS.map((reason) => `failed:${reason}` as const),
  ...REWARD_STATES,
];

/**
 * A new attempt as its reservation makes it: everything of the record but what the key's history
 * (its attempt number, earlier attempts, creation time) and the lifecycle decide.
 */
export type NewAttempt = Omit<
  TxRequestRecord,
  | "attempt"
  | "status"
  | "error"
  | "previous"
  | "createdAt"
  | "updatedAt"
  | "expiresAt"
  | "expiryUnprovenAt"
>;

/** What can happen to an attempt. */
export type AttemptEvent =
  /** A new attempt reserved: a new key's, or a failed key's retry. */
  | { type: "reserve"; attempt: NewAttempt }
  /** Its signed transaction stored, before its first send. */
  | { type: "sign"; signature: string; tx: SignedTx }
  /** A send was accepted by a node: later sends skip preflight. */
  | { type: "accept" }
  /** Its route answered without a final status. */
  | { type: "answer"; accepted: boolean }
  /** Past its expiry margin without a proof that it cannot land. */
  | { type: "expiry_unproven"; at: number }
  /** Its confirmation job (lost) replaced by `checkJobId`. */
  | { type: "follow"; checkJobId: string }
  | { type: "confirm" }
  /** Its instance died before it stored a signed transaction. */
  | { type: "abandon" }
  /** `refused`: its first send was refused in preflight (the node did not forward it). */
  | { type: "fail"; error: string; refused?: boolean }
  /** A `failed` key's attempt `signature` found landed after all. */
  | { type: "found_landed"; signature: string };

/** What can happen to a reward besides its payment's own events. */
export type RewardEvent =
  /** Its payment reserved (`recipient`: the wallet linked then), in the reservation's commit. */
  | { type: "pay"; recipient: string }
  /** Its payment refused before a reservation: it waits for a wallet, for room, or a retry. */
  | { type: "wait"; waitingFor: RewardWait; error: string | null }
  | { type: "cancel" }
  | { type: "expire" }
  /** Its payment failed: nothing reached the player, it waits to be tried again. */
  | { type: "release"; error: string }
  /** Its payment confirmed. */
  | { type: "credit"; recipient: string; signature: string };

/** Every kind of event of an attempt. */
export const EVENT_TYPES = [
  "reserve",
  "sign",
  "accept",
  "answer",
  "expiry_unproven",
  "follow",
  "confirm",
  "abandon",
  "fail",
  "found_landed",
] as const satisfies readonly AttemptEvent["type"][];

/** Every kind of event of a reward. */
export const REWARD_EVENT_TYPES = [
  "pay",
  "wait",
  "cancel",
  "expire",
  "release",
  "credit",
] as const satisfies readonly RewardEvent["type"][];
type EventType = typeof EVENT_TYPES[number] | typeof REWARD_EVENT_TYPES[number];

/** What a listed pair does besides the record's own change. */
export interface Transition {
  /** The next state; `failed` takes its reason from the record and the event. */
  to: StateName | "failed" | "same";
  /** Records its event: `tx` for an attempt's, `reward_*` for a reward's (`wait`: see (3)). */
  event: boolean;
}

const to = (name: Transition["to"], event = false): Transition => ({ to: name, event });
const OPEN_SIGNED = {
  expiry_unproven: to("expiry_unproven"),
  follow: to("same"),
  confirm: to("confirmed", true),
  fail: to("failed", true),
} as const;
const FINAL = {
  reserve: to("reserved"),
  found_landed: to("confirmed", true),
  expire: to("expired", true),
  release: to("held"),
} as const;

/** The transition table: state x event -> next state; a pair not listed changes nothing. */
export const TRANSITIONS: Record<StateName, Partial<Record<EventType, Transition>>> = {
  new: { reserve: to("reserved") },
  reserved: {
    sign: to("signed"),
    follow: to("same"),
    abandon: to("failed:abandoned"),
    fail: to("failed", true),
  },
  signed: { ...OPEN_SIGNED, accept: to("same"), answer: to("submitted") },
  submitted: { ...OPEN_SIGNED, accept: to("same") },
  expiry_unproven: {
    accept: to("same"),
    answer: to("same"),
    follow: to("same"),
    confirm: to("confirmed", true),
    fail: to("failed", true),
  },
  confirmed: { credit: to("same", true) },
  "failed:abandoned": FINAL,
  "failed:unbuilt": FINAL,
  "failed:refused": FINAL,
  "failed:on_chain": FINAL,
  "failed:expired": FINAL,
  held: {
    pay: to("reserved"),
    wait: to("same"),
    cancel: to("cancelled", true),
    expire: to("expired", true),
    credit: to("confirmed", true),
  },
  cancelled: {},
  expired: {},
};

/** The state a stored attempt is in (`new` for none: a key unknown, or forgotten). */
export function stateOf(record: TxRequestRecord | null): AttemptState {
  if (!record) return { name: "new" };
  if (record.status === "confirmed") return { name: "confirmed" };
  if (record.status === "failed") {
    const error = record.error ?? "";
    return { name: "failed", reason: failureReasonOf(record), error };
  }
  if (record.expiryUnprovenAt !== undefined) {
    return { name: "expiry_unproven", since: record.expiryUnprovenAt };
  }
  if (!record.signed) return { name: "reserved" };
  const { accepted } = record.signed;
  return record.status === "pending"
    ? { name: "signed", accepted }
    : { name: "submitted", accepted };
}

function failureReasonOf(record: TxRequestRecord): FailureReason {
  if (record.error === ABANDONED_ERROR) return "abandoned";
  if (!record.signed) return "unbuilt";
  if (record.signed.refused) return "refused";
  return record.error === EXPIRED_ERROR ? "expired" : "on_chain";
}

/** The table's name of a state. */
export function stateName(state: AttemptState): StateName {
  return state.name === "failed" ? `failed:${state.reason}` : state.name;
}

/** True once an attempt is confirmed or failed. */
export function isFinal(record: TxRequestRecord): boolean {
  return record.status === "confirmed" || record.status === "failed";
}

/** The table's row for the attempt and the event; undefined when the pair changes nothing. */
export function transitionOf(
  record: TxRequestRecord | null,
  event: AttemptEvent,
): Transition | undefined {
  return TRANSITIONS[stateName(stateOf(record))][event.type];
}
