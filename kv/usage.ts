/**
 * Usage counters for the dashboard's usage page, kept as rings of tagged counters.
 *
 * A bucket (a clock minute, an hour, a UTC day) is one `Deno.KvU64` holding the bucket's number in
 * its high 32 bits and its count in the low 32, stored in a slot chosen by the bucket number
 * modulo the ring's length. Counting is two blind mutations in a commit the service makes anyway:
 * `max(bucket << 32)` (resets a slot still holding an older bucket to a zero count) then
 * `sum(n)`. So counting needs no read and no check, cannot conflict, stays exact under any
 * concurrency, and the number of keys per project is fixed: nothing expires and nothing piles up.
 * A read lists one ring (one range read) and ignores slots whose tag is not the expected bucket.
 *
 * - Requests: a 60-slot ring of clock minutes and a one-slot UTC day, counted in the commit that
 *   counts requests against the quotas (`lib/quota/request_quota.ts`), so they are exactly the
 *   counted requests, refused ones included.
 * - Failed transaction attempts: a 24-slot ring of hours, counted in the commit that settles an
 *   attempt as failed (`lib/tx/record/transitions.ts`). Attempts that did not fail are read from the 24-hour
 *   quota window (`tx_usage.ts`), which already holds their times.
 * - Event deliveries: a 24-slot ring of hours per outcome (`delivered`, `dropped`), counted with
 *   the delivery log entry (`deliveries.ts`). Skipped deliveries (events off) count as neither.
 *
 * A write for an older bucket than its slot holds (clock skew between instances) counts in the
 * newer one: totals stay right, the bar may be one bucket late.
 */

/** One clock minute, in ms. */
const MINUTE_MS = 60_000;
/** One hour, in ms. */
export const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const MINUTE_SLOTS = 60;
const HOUR_SLOTS = 24;
const COUNT_BITS = 32n;
const COUNT_MASK = (1n << COUNT_BITS) - 1n;

/** How an event delivery counts on the usage page. */
type DeliveryTally = "delivered" | "dropped";

/** A bucket's start (Unix ms) and count. */
export interface UsageBucket {
  at: number;
  count: number;
}

/** Event deliveries of one hour. */
export interface DeliveryBucket {
  at: number;
  delivered: number;
  dropped: number;
}

function addTagged(op: Deno.AtomicOperation, key: Deno.KvKey, bucket: number, n: number): void {
  op.max(key, BigInt(bucket) << COUNT_BITS).sum(key, BigInt(n));
}

function countOf(value: unknown, bucket: number): number {
  if (!(value instanceof Deno.KvU64)) return 0;
  return value.value >> COUNT_BITS === BigInt(bucket) ? Number(value.value & COUNT_MASK) : 0;
}

/** Adds `count` requests counted at `at` to `op`: the one place request usage is written. */
export function addRequestUsage(
  op: Deno.AtomicOperation,
  projectId: string,
  options: { at: number; count: number },
): void {
  const minute = Math.floor(options.at / MINUTE_MS);
  addTagged(
    op,
    ["usage_minutes", projectId, minute % MINUTE_SLOTS],
    minute,
    options.count,
  );
  addTagged(
    op,
    ["usage_days", projectId],
    Math.floor(options.at / DAY_MS),
    options.count,
  );
}

/** Adds one transaction attempt that failed at `at` to `op`. */
export function addFailedTxUsage(op: Deno.AtomicOperation, projectId: string, at: number): void {
  const hour = Math.floor(at / HOUR_MS);
  addTagged(op, ["usage_tx_failed", projectId, hour % HOUR_SLOTS], hour, 1);
}

/** Adds `count` event deliveries that ended at `at` to `op`. */
export function addDeliveryUsage(
  op: Deno.AtomicOperation,
  projectId: string,
  options: { at: number; tally: DeliveryTally; count: number },
): void {
  const hour = Math.floor(options.at / HOUR_MS);
  const key = ["usage_events", projectId, hour % HOUR_SLOTS, options.tally];
  addTagged(op, key, hour, options.count);
}

/** Requests per clock minute over the last hour (oldest first, the current minute last) and this UTC day. */
export async function getRequestUsage(
  kv: Deno.Kv,
  projectId: string,
  now: number,
): Promise<{ perMinute: UsageBucket[]; today: number }> {
  const slots = await listRing(kv, ["usage_minutes", projectId]);
  const day = Math.floor(now / DAY_MS);
  const today = countOf((await kv.get(["usage_days", projectId])).value, day);
  return { perMinute: lastBuckets(slots, now, MINUTE_MS, MINUTE_SLOTS), today };
}

/** Failed transaction attempts per hour over the last 24 hours, oldest first. */
export async function getFailedTxUsage(
  kv: Deno.Kv,
  projectId: string,
  now: number,
): Promise<UsageBucket[]> {
  const slots = await listRing(kv, ["usage_tx_failed", projectId]);
  return lastBuckets(slots, now, HOUR_MS, HOUR_SLOTS);
}

/** Event deliveries per hour over the last 24 hours, oldest first. */
export async function getDeliveryUsage(
  kv: Deno.Kv,
  projectId: string,
  now: number,
): Promise<DeliveryBucket[]> {
  const delivered = new Map<number, unknown>();
  const dropped = new Map<number, unknown>();
  for await (const entry of kv.list({ prefix: ["usage_events", projectId] })) {
    const [, , slot, tally] = entry.key as [string, string, number, DeliveryTally];
    (tally === "delivered" ? delivered : dropped).set(slot, entry.value);
  }
  const hours = lastBuckets(delivered, now, HOUR_MS, HOUR_SLOTS);
  const drops = lastBuckets(dropped, now, HOUR_MS, HOUR_SLOTS);
  return hours.map((h, i) => ({ at: h.at, delivered: h.count, dropped: drops[i]?.count ?? 0 }));
}

async function listRing(kv: Deno.Kv, prefix: Deno.KvKey): Promise<Map<number, unknown>> {
  const slots = new Map<number, unknown>();
  for await (const entry of kv.list({ prefix })) {
    slots.set(entry.key[entry.key.length - 1] as number, entry.value);
  }
  return slots;
}

function lastBuckets(
  slots: Map<number, unknown>,
  now: number,
  size: number,
  ring: number,
): UsageBucket[] {
  const current = Math.floor(now / size);
  return Array.from({ length: ring }, (_, i) => {
    const bucket = current - ring + 1 + i;
    return { at: bucket * size, count: countOf(slots.get(bucket % ring), bucket) };
  });
}
