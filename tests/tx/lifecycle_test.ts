// The payout attempt's lifecycle as a table: every (state, event) pair is applied, through the
// functions the routes and jobs call, to a request record stored in that state, and what it leaves
// (the next state, the `tx` event, the usage given back, the confirmation job, the indexes) must
// be the row of the lifecycle's table (`lib/tx/lifecycle/lifecycle.ts`); a pair it does not list must change
// nothing. The same for a reward's events, on a reward in each state of the table (its own, or
// its payment's).
import assert from "node:assert/strict";
import { ulid } from "../../core/ids.ts";
import { getJobEntry } from "../../kv/jobs.ts";
import { listFeedEvents } from "../../kv/event_feed.ts";
import {
  txAttemptByTimeKey,
  txByStatusKey,
  txRequestKey,
  type TxRequestRecord,
  txUnsettledKey,
} from "../../kv/tx_requests.ts";
import { addTxJob } from "../../lib/tx/job_payloads.ts";
import { ABANDONED_ERROR, EXPIRED_ERROR } from "../../lib/tx/lifecycle/result.ts";
import { attemptRef, settleAttempt } from "../../lib/tx/record/transitions.ts";
import { confirmLandedAttempt } from "../../lib/tx/record/found_landed.ts";
import { ensureTxConfirmJob } from "../../lib/tx/follow/confirm_job.ts";
import {
  markAccepted,
  markExpiryUnproven,
  markSubmitted,
  recordSigned,
} from "../../lib/tx/record/attempt_marks.ts";
import {
  EVENT_TYPES,
  REWARD_EVENT_TYPES,
  type RewardEvent,
  STATE_NAMES,
  type StateName,
  stateName,
  stateOf,
  TRANSITIONS,
} from "../../lib/tx/lifecycle/lifecycle.ts";
import { rewardStateOf } from "../../lib/tx/lifecycle/lifecycle_rewards.ts";
import {
  addRewardCreation,
  getRewardHoldsEntry,
  rewardKey,
  type RewardRecord,
  rewardTxKey,
} from "../../kv/rewards.ts";
import { moveReward } from "../../lib/rewards/moves.ts";
import { checkTxRequest } from "../../lib/tx/request/checks.ts";
import { reserveTxRequest } from "../../lib/tx/send/reserve.ts";
import { RewardNotPayableError } from "../../lib/tx/request/sender.ts";
import { okJson, startTxHarness, type TxHarness } from "../support/tx_harness.ts";
import { startDeadline } from "../../lib/tx/rpc/timing.ts";

/** The events as their callers send them, each with the lifecycle's event it is. */
const EVENTS = {
  reserve: "reserve",
  sign: "sign",
  accept: "accept",
  answer: "answer",
  expiry_unproven: "expiry_unproven",
  follow: "follow",
  confirm: "confirm",
  abandon: "abandon",
  unbuilt: "fail",
  refuse: "fail",
  fail: "fail",
  expire: "fail",
  found_landed: "found_landed",
} as const satisfies Record<string, typeof EVENT_TYPES[number]>;
type EventName = keyof typeof EVENTS;

const UNBUILT_ERROR = "Could not build the transaction: test";
const REFUSED_ERROR = "Transaction refused: test";
const CHAIN_ERROR = "Transaction failed on chain: test";

/** What applying an event leaves: the next state and the effects of its commit. */
interface Row {
  to: StateName;
  /** A `tx` event recorded. */
  event: boolean;
  /** The attempt's place in the day's count given back. */
  released: boolean;
  /** The attempt's pending confirmation job removed. */
  jobRemoved: boolean;
}

const isFailed = (state: StateName) => state.startsWith("failed");
const isOpen = (state: StateName) => state !== "new" && state !== "confirmed" && !isFailed(state);

/** The row the table gives the pair; null when it lists none (nothing may change). */
function expectedRow(state: StateName, event: EventName): Row | null {
  // A retry proves the failed attempt dead first; the stored ones that failed after they were sent
  // carry the seed payout's bytes, which landed: the proof finds them so, and the key confirmed.
  const landed = event === "reserve" && (state === "failed:on_chain" || state === "failed:expired");
  const transition = TRANSITIONS[state][landed ? "found_landed" : EVENTS[event]];
  if (!transition) return null;
  let to: StateName;
  if (transition.to === "same") to = state;
  else if (transition.to !== "failed") to = transition.to;
  else if (state === "reserved") to = "failed:unbuilt";
  else if (event === "refuse") to = "failed:refused";
  else if (event === "expire") to = "failed:expired";
  else to = "failed:on_chain";
  const final = !isOpen(to);
  return {
    to,
    event: transition.event,
    released: isFailed(to) && isOpen(state),
    jobRemoved: final && isOpen(state),
  };
}

/** The table's name of a stored record's state. */
const nameOf = (record: TxRequestRecord) => stateName(stateOf(record));
/** The states of a reward's own, which no payment record is in. */
const REWARD_OWN = new Set<StateName>(["held", "cancelled", "expired"]);

/**
 * Stores, under `key`, a record in `state` made from a real payout's, as the route writes it; a
 * `new` key has none (its entry's value is null).
 */
async function storeIn(
  h: TxHarness,
  template: TxRequestRecord,
  state: StateName,
  key: string,
): Promise<Deno.KvEntryMaybe<TxRequestRecord>> {
  if (state === "new") return await h.a.kv.get<TxRequestRecord>(txRequestKey(h.project.id, key));
  const kv = h.a.kv;
  const now = h.a.clock.now();
  const attemptId = ulid(now);
  const signed = { ...template.signed!, accepted: false };
  const unsigned = { signed: null, signature: null };
  const failed = (error: string) => ({ status: "failed" as const, error });
  const shapes: Record<
    Exclude<StateName, "new" | "held" | "cancelled" | "expired">,
    Partial<TxRequestRecord>
  > = {
    reserved: unsigned,
    signed: {},
    submitted: { status: "submitted", signed: { ...signed, accepted: true } },
    expiry_unproven: { status: "submitted", expiryUnprovenAt: now },
    confirmed: { status: "confirmed" },
    "failed:abandoned": { ...unsigned, ...failed(ABANDONED_ERROR) },
    "failed:unbuilt": { ...unsigned, ...failed(UNBUILT_ERROR) },
    "failed:refused": { ...failed(REFUSED_ERROR), signed: { ...signed, refused: true } },
    "failed:on_chain": failed(CHAIN_ERROR),
    "failed:expired": failed(EXPIRED_ERROR),
  };
  const { expiresAt: _e, expiryUnprovenAt: _u, ...base } = template;
  const record: TxRequestRecord = {
    ...base,
    key,
    attemptId,
    status: "pending",
    error: null,
    signed,
    signBy: now + h.a.ctx.tx.timing.answerWithinMs,
    usage: { ...template.usage, at: now },
    checkJobId: null,
    previous: [],
    ...shapes[state as keyof typeof shapes],
  };
  const projectId = record.projectId;
  const op = kv.atomic();
  const open = record.status === "pending" || record.status === "submitted";
  if (open) {
    record.checkJobId = addTxJob(op, { type: "tx_confirm", projectId, key, attemptId }, {
      runAt: now + 60_000,
    });
    op.set(txUnsettledKey(projectId, key), { attemptId, since: now });
  }
  op.set(txRequestKey(projectId, key), record)
    .set(txAttemptByTimeKey(projectId, attemptId), key)
    .set(txByStatusKey(projectId, record.status, attemptId), key);
  const result = await op.commit();
  assert.ok(result.ok);
  assert.equal(nameOf(record), state);
  return { key: txRequestKey(projectId, key), value: record, versionstamp: result.versionstamp };
}

/**
 * Applies `event` to the stored attempt the way its caller does. The callers of sign, follow and
 * found_landed hold a stored attempt: to a `new` key (no record) none of them can send it.
 */
async function apply(
  h: TxHarness,
  stored: Deno.KvEntryMaybe<TxRequestRecord>,
  event: EventName,
  template: TxRequestRecord,
): Promise<void> {
  const ctx = h.a.ctx;
  const key = stored.key.at(-1) as string;
  if (event === "reserve") {
    // The route's steps to the reservation: the checks, then the reservation (nothing signed).
    const caller = { projectId: h.project.id, keyId: (await ctx.apiKeys.resolve(h.apiKey))!.keyId };
    const input = { idempotencyKey: key, body: template.body };
    const deadline = startDeadline(ctx.tx.timing);
    const checked = await checkTxRequest(ctx, caller, template.kind, input, { deadline });
    if (checked.kind === "checked") await reserveTxRequest(ctx, checked.request, { deadline });
    return;
  }
  if (stored.value === null) {
    if (event === "sign" || event === "follow" || event === "found_landed") return;
  }
  const entry = stored as Deno.KvEntry<TxRequestRecord>;
  const ref = entry.value
    ? attemptRef(entry.value)
    : { projectId: h.project.id, key, attemptId: ulid(h.a.clock.now()) };
  const fail = (error: string, refused?: boolean) =>
    settleAttempt(ctx, ref, { status: "failed", error, ...(refused ? { refused } : {}) });
  switch (event) {
    case "sign":
      await recordSigned(ctx, [entry], { signature: template.signature!, tx: template.signed! });
      return;
    case "accept":
      await markAccepted(ctx, ref);
      return;
    case "answer":
      await markSubmitted(ctx, ref, { accepted: true });
      return;
    case "expiry_unproven":
      await markExpiryUnproven(ctx, ref);
      return;
    case "follow":
      await ensureTxConfirmJob(ctx, entry.value);
      return;
    case "confirm":
      await settleAttempt(ctx, ref, { status: "confirmed" });
      return;
    case "abandon":
      await settleAttempt(ctx, ref, { status: "failed", error: ABANDONED_ERROR }, {
        onlyIf: (current) => current.signed === null,
      });
      return;
    case "unbuilt":
      await fail(UNBUILT_ERROR);
      return;
    case "refuse":
      await fail(REFUSED_ERROR, true);
      return;
    case "fail":
      await fail(CHAIN_ERROR);
      return;
    case "expire":
      await fail(EXPIRED_ERROR);
      return;
    case "found_landed":
      await confirmLandedAttempt(ctx, entry, template.signature!);
      return;
  }
}

/** The `tx` events recorded for `key`. */
async function eventsOf(h: TxHarness, key: string): Promise<number> {
  const page = await listFeedEvents(h.a.kv, h.project.id, {
    after: 0,
    limit: 10_000,
    types: null,
    now: h.a.clock.now(),
    maxDecoded: 10_000,
  });
  return page.events.filter((event) => event.type === "tx" && event.key === key).length;
}

/** The places of the day's count given back so far. */
async function dayReleased(h: TxHarness): Promise<bigint> {
  let total = 0n;
  const iter = h.a.kv.list<Deno.KvU64>({
    prefix: ["tx_allowance_released", h.project.id, "day"],
  });
  for await (const entry of iter) total += entry.value.value;
  return total;
}

/** The record's index entries stand as its status says. */
async function assertIndexed(h: TxHarness, record: TxRequestRecord, label: string): Promise<void> {
  const kv = h.a.kv;
  const { projectId, key, attemptId } = record;
  assert.equal(
    (await kv.get(txByStatusKey(projectId, record.status, attemptId))).value,
    key,
    label,
  );
  for await (const entry of kv.list({ prefix: ["tx_by_status", projectId] })) {
    if (entry.value === key) {
      assert.deepEqual(entry.key, txByStatusKey(projectId, record.status, attemptId), label);
    }
  }
  const open = record.status === "pending" || record.status === "submitted";
  const unsettled = (await kv.get(txUnsettledKey(projectId, key))).value;
  assert.equal(unsettled !== null, open, label);
}

Deno.test("Every (state, event) pair of a payout attempt moves it as the lifecycle table says", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  await h.link(9);
  const paid = await okJson(
    await h.a.post("transfer-sol", { to: { userId: 9 }, amount: "0.1", idempotencyKey: "seed" }),
  );
  assert.equal(paid.status, "confirmed");
  const template = (await h.a.kv.get<TxRequestRecord>(txRequestKey(h.project.id, "seed"))).value!;

  // Every event of the lifecycle is sent by some caller.
  assert.deepEqual(new Set(Object.values(EVENTS)), new Set(EVENT_TYPES));
  let walked = 0;
  for (const state of STATE_NAMES.filter((name) => !REWARD_OWN.has(name))) {
    for (const event of Object.keys(EVENTS) as EventName[]) {
      const label = `${state} x ${event}`;
      const key = `${state}-${event}`;
      const entry = await storeIn(h, template, state, key);
      const released = await dayReleased(h);
      await apply(h, entry, event, template);
      walked++;

      const stored = await h.a.kv.get<TxRequestRecord>(entry.key);
      const row = expectedRow(state, event);
      if (!row) {
        assert.equal(stored.versionstamp, entry.versionstamp, `${label}: not in the table`);
        assert.equal(await eventsOf(h, key), 0, label);
        continue;
      }
      const after = stored.value!;
      const checkJobId = entry.value?.checkJobId ?? null;
      const job = (await getJobEntry(h.a.kv, checkJobId ?? "none")).value;
      const actual: Row = {
        to: nameOf(after),
        event: (await eventsOf(h, key)) === 1,
        released: (await dayReleased(h)) > released,
        jobRemoved: checkJobId !== null && job === null,
      };
      assert.ok((await eventsOf(h, key)) <= 1, `${label}: more than one tx event`);
      assert.deepEqual(actual, row, label);
      await assertIndexed(h, after, label);
    }
  }
  assert.equal(walked, (STATE_NAMES.length - REWARD_OWN.size) * Object.keys(EVENTS).length);
  // A reward's own states are no attempt's: no attempt's event moves them.
  for (const state of REWARD_OWN) {
    for (const event of EVENT_TYPES) assert.equal(TRANSITIONS[state][event], undefined);
  }
});

/** A reward event as its caller sends it. */
function rewardEventOf(type: RewardEvent["type"], payment: TxRequestRecord | null): RewardEvent {
  switch (type) {
    case "pay":
      return { type, recipient: payment?.recipient ?? "none" };
    case "wait":
      return { type, waitingFor: "retry", error: "test" };
    case "release":
      return { type, error: "test" };
    case "credit":
      return {
        type,
        recipient: payment?.recipient ?? "none",
        signature: payment?.signature ?? "s",
      };
    default:
      return { type };
  }
}

Deno.test("Every (state, event) pair of a reward moves it as the lifecycle table says", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  const userId = 9;
  await h.link(userId);
  const paid = await okJson(
    await h.a.post("transfer-sol", { to: { userId }, amount: "0.1", idempotencyKey: "seed" }),
  );
  assert.equal(paid.status, "confirmed");
  const template = (await h.a.kv.get<TxRequestRecord>(txRequestKey(h.project.id, "seed"))).value!;
  const projectId = h.project.id;
  const ctx = h.a.ctx;

  // Given a reward in `state` (held for room, or paying with its payment in that state)
  const storeReward = async (state: StateName, key: string) => {
    const own = REWARD_OWN.has(state);
    const now = h.a.clock.now();
    const reward: RewardRecord = {
      key,
      userId,
      kind: "transfer-sol",
      mint: null,
      amount: "0.1",
      units: "100000000",
      status: own ? (state as "held" | "cancelled" | "expired") : "paying",
      waitingFor: state === "held" ? "room" : null,
      recipient: own ? null : template.recipient,
      signature: null,
      error: null,
      createdAt: now,
      expiresAt: now + 86_400_000,
      settledAt: own && state !== "held" ? now : null,
    };
    const payment = own
      ? null
      : (await storeIn(h, { ...template, body: { ...template.body } }, state, rewardTxKey(key)))
        .value;
    const op = h.a.kv.atomic();
    addRewardCreation(op, projectId, reward, await getRewardHoldsEntry(h.a.kv, projectId, userId));
    assert.ok((await op.commit()).ok);
    assert.equal(rewardStateOf(reward, payment), state);
    return { reward, payment };
  };
  // Applies it the way its caller does: `pay` by the payment's reservation, sent by the reward.
  const applyReward = async (
    type: RewardEvent["type"],
    key: string,
    payment: TxRequestRecord | null,
  ) => {
    if (type !== "pay" || payment !== null) {
      await moveReward(ctx, { projectId, key }, () => rewardEventOf(type, payment));
      return;
    }
    const input = {
      idempotencyKey: rewardTxKey(key),
      body: { to: { userId }, mint: null, amount: "0.1" },
    };
    try {
      const checked = await checkTxRequest(ctx, { projectId, reward: key }, "transfer-sol", input, {
        deadline: startDeadline(ctx.tx.timing),
      });
      if (checked.kind === "checked") await reserveTxRequest(ctx, checked.request);
    } catch (error) {
      if (!(error instanceof RewardNotPayableError)) throw error;
    }
  };
  const heldUnits = async () =>
    (await getRewardHoldsEntry(h.a.kv, projectId, userId)).value?.sol ?? 0n;
  const rewardEventsOf = async (key: string) => {
    const page = await listFeedEvents(h.a.kv, projectId, {
      after: 0,
      limit: 10_000,
      types: null,
      now: h.a.clock.now(),
      maxDecoded: 10_000,
    });
    return page.events.filter((e) => e.type.startsWith("reward_") && "key" in e && e.key === key)
      .length;
  };

  // A reward is never `new`: it is `held` until its payment's reservation.
  const states = STATE_NAMES.filter((state) => state !== "new");
  let walked = 0;
  for (const state of states) {
    for (const type of REWARD_EVENT_TYPES) {
      const label = `${state} x ${type}`;
      const key = `r-${state}-${type}`;
      const { reward, payment } = await storeReward(state, key);
      const before = await h.a.kv.get<RewardRecord>(rewardKey(projectId, key));
      const held = await heldUnits();
      // When
      await applyReward(type, key, payment);
      walked++;
      // Then
      const after = await h.a.kv.get<RewardRecord>(rewardKey(projectId, key));
      const nowPayment = (await h.a.kv.get<TxRequestRecord>(
        txRequestKey(projectId, rewardTxKey(key)),
      )).value;
      const transition = TRANSITIONS[state][type];
      if (!transition) {
        assert.equal(after.versionstamp, before.versionstamp, `${label}: not in the table`);
        assert.equal(await rewardEventsOf(key), 0, label);
        continue;
      }
      const to = transition.to === "same" ? state : transition.to;
      assert.equal(rewardStateOf(after.value!, nowPayment), to, label);
      assert.equal(await rewardEventsOf(key), transition.event ? 1 : 0, label);
      const gaveBack = (await heldUnits()) < held;
      const ends = after.value!.status !== reward.status &&
        ["paid", "cancelled", "expired"].includes(after.value!.status);
      assert.equal(gaveBack, ends, `${label}: holds given back`);
    }
  }
  assert.equal(walked, states.length * REWARD_EVENT_TYPES.length);
});
