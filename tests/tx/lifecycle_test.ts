// The payout attempt's lifecycle as a table: every (state, event) pair is applied, through the
// functions the routes and jobs call, to a request record stored in that state, and what it leaves
// (the next state, the `tx` event, the usage given back, the confirmation job, the indexes) must
// be the table's row. A pair the table does not list fails.
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
import { ABANDONED_ERROR, EXPIRED_ERROR } from "../../lib/tx/result.ts";
import { attemptRef, confirmLandedAttempt, settleAttempt } from "../../lib/tx/transitions.ts";
import {
  markAccepted,
  markExpiryUnproven,
  markSubmitted,
  recordSigned,
} from "../../lib/tx/attempt_marks.ts";
import { okJson, startTxHarness, type TxHarness } from "../support/tx_harness.ts";

const STATES = [
  "reserved",
  "signed",
  "submitted",
  "expiry_unproven",
  "confirmed",
  "failed:abandoned",
  "failed:unbuilt",
  "failed:refused",
  "failed:on_chain",
  "failed:expired",
] as const;
type StateName = typeof STATES[number];

const EVENTS = [
  "sign",
  "accept",
  "answer",
  "expiry_unproven",
  "confirm",
  "abandon",
  "unbuilt",
  "refuse",
  "fail",
  "expire",
  "found_landed",
] as const;
type EventName = typeof EVENTS[number];

const UNBUILT_ERROR = "Could not build the transaction: test";
const REFUSED_ERROR = "Transaction refused: test";
const CHAIN_ERROR = "Transaction failed on chain: test";

/** The state a stored record is in. */
function stateOf(record: TxRequestRecord): StateName {
  if (record.status === "confirmed") return "confirmed";
  if (record.status === "failed") {
    if (record.error === ABANDONED_ERROR) return "failed:abandoned";
    if (!record.signed) return "failed:unbuilt";
    if (record.signed.refused) return "failed:refused";
    if (record.error === EXPIRED_ERROR) return "failed:expired";
    return "failed:on_chain";
  }
  if (record.expiryUnprovenAt !== undefined) return "expiry_unproven";
  if (!record.signed) return "reserved";
  return record.status === "pending" ? "signed" : "submitted";
}

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

const same = (to: StateName): Row => ({ to, event: false, released: false, jobRemoved: false });
const settled = (to: StateName, event = true): Row => ({
  to,
  event,
  released: to.startsWith("failed"),
  jobRemoved: true,
});
const landed: Row = { to: "confirmed", event: true, released: false, jobRemoved: false };
/**
 * A pair no caller makes (a key found landed is always `failed` first; only a fresh reservation
 * is signed), which today's function applies without looking at the state.
 */
const UNGUARDED = "unguarded" as const;

/** Every state's row for every event. */
const TABLE: Record<StateName, Record<EventName, Row | typeof UNGUARDED>> = {
  reserved: {
    sign: same("signed"),
    accept: same("reserved"),
    answer: same("reserved"),
    expiry_unproven: same("expiry_unproven"),
    confirm: settled("confirmed"),
    abandon: settled("failed:abandoned", false),
    unbuilt: settled("failed:unbuilt"),
    refuse: settled("failed:unbuilt"),
    fail: settled("failed:unbuilt"),
    expire: settled("failed:unbuilt"),
    found_landed: UNGUARDED,
  },
  signed: {
    sign: UNGUARDED,
    accept: same("signed"),
    answer: same("submitted"),
    expiry_unproven: same("expiry_unproven"),
    confirm: settled("confirmed"),
    abandon: same("signed"),
    unbuilt: settled("failed:on_chain"),
    refuse: settled("failed:refused"),
    fail: settled("failed:on_chain"),
    expire: settled("failed:expired"),
    found_landed: UNGUARDED,
  },
  submitted: {
    sign: UNGUARDED,
    accept: same("submitted"),
    answer: same("submitted"),
    expiry_unproven: same("expiry_unproven"),
    confirm: settled("confirmed"),
    abandon: same("submitted"),
    unbuilt: settled("failed:on_chain"),
    refuse: settled("failed:refused"),
    fail: settled("failed:on_chain"),
    expire: settled("failed:expired"),
    found_landed: UNGUARDED,
  },
  expiry_unproven: {
    sign: UNGUARDED,
    accept: same("expiry_unproven"),
    answer: same("expiry_unproven"),
    expiry_unproven: same("expiry_unproven"),
    confirm: settled("confirmed"),
    abandon: same("expiry_unproven"),
    unbuilt: settled("failed:on_chain"),
    refuse: settled("failed:refused"),
    fail: settled("failed:on_chain"),
    expire: settled("failed:expired"),
    found_landed: UNGUARDED,
  },
  confirmed: finalRow("confirmed"),
  "failed:abandoned": finalRow("failed:abandoned"),
  "failed:unbuilt": finalRow("failed:unbuilt"),
  "failed:refused": finalRow("failed:refused"),
  "failed:on_chain": finalRow("failed:on_chain"),
  "failed:expired": finalRow("failed:expired"),
};

function finalRow(state: StateName): Record<EventName, Row | typeof UNGUARDED> {
  const row = Object.fromEntries(EVENTS.map((event) => [event, same(state)])) as Record<
    EventName,
    Row | typeof UNGUARDED
  >;
  return { ...row, sign: UNGUARDED, found_landed: state === "confirmed" ? UNGUARDED : landed };
}

/** Stores, under `key`, a record in `state` made from a real payout's, as the route writes it. */
async function storeIn(
  h: TxHarness,
  template: TxRequestRecord,
  state: StateName,
  key: string,
): Promise<Deno.KvEntry<TxRequestRecord>> {
  const kv = h.a.kv;
  const now = h.a.clock.now();
  const attemptId = ulid(now);
  const signed = { ...template.signed!, accepted: false };
  const unsigned = { signed: null, signature: null };
  const failed = (error: string) => ({ status: "failed" as const, error });
  const shapes: Record<StateName, Partial<TxRequestRecord>> = {
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
    ...shapes[state],
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
  assert.equal(stateOf(record), state);
  return { key: txRequestKey(projectId, key), value: record, versionstamp: result.versionstamp };
}

/** Applies `event` to the stored attempt the way its caller does. */
async function apply(
  h: TxHarness,
  entry: Deno.KvEntry<TxRequestRecord>,
  event: EventName,
  template: TxRequestRecord,
): Promise<void> {
  const ctx = h.a.ctx;
  const ref = attemptRef(entry.value);
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
    maxExamined: 10_000,
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

  const seen: string[] = [];
  for (const state of STATES) {
    for (const event of EVENTS) {
      const label = `${state} x ${event}`;
      const row = TABLE[state][event];
      assert.ok(row, `${label}: not in the table`);
      const key = `${state}-${event}`;
      const entry = await storeIn(h, template, state, key);
      const released = await dayReleased(h);
      await apply(h, entry, event, template);

      const after = (await h.a.kv.get<TxRequestRecord>(entry.key)).value!;
      const job = (await getJobEntry(h.a.kv, entry.value.checkJobId ?? "none")).value;
      const actual: Row = {
        to: stateOf(after),
        event: (await eventsOf(h, key)) === 1,
        released: (await dayReleased(h)) > released,
        jobRemoved: entry.value.checkJobId !== null && job === null,
      };
      seen.push(label);
      if (row === UNGUARDED) {
        // Today's function writes the record whatever its state.
        const stored = await h.a.kv.get<TxRequestRecord>(entry.key);
        assert.notEqual(stored.versionstamp, entry.versionstamp, label);
        continue;
      }
      assert.ok((await eventsOf(h, key)) <= 1, `${label}: more than one tx event`);
      assert.deepEqual(actual, row, label);
      await assertIndexed(h, after, label);
    }
  }
  assert.equal(seen.length, STATES.length * EVENTS.length);
});
