/**
 * The project-wide transaction limits' ledgers: the 24-hour count (`day`), the failures' cap
 * (`failed`) and each asset's hourly amount (`asset:<SOL or mint>`), one record per project and
 * scope, written only when an instance takes or settles a lease of allowance
 * (`lib/tx/allowance/allowance.ts` says why that keeps the limits exact).
 *
 * A ledger counts in time buckets (10 minutes for the day scopes, 1 minute for the hour ones): a
 * bucket holds the usage settled into it (`n`) and the latest time it was used (`last`), and it
 * counts until `last` leaves the window, so a use is counted at most one bucket longer than its
 * window: a limit may refuse that much early, never late. Open leases (allowance an instance took
 * ahead of its payouts) count whole until settled. Usage given back (a failed payout's place, a
 * settled attempt leaving the failures' cap) goes to a released counter per bucket, a blind sum in
 * the settling commit: settling never conflicts with reservations or with other settlements. A
 * give-back in a commit of its own is made once by a marker (`giveBackOnce`).
 * Released usage only lowers the count, so a lease commit that read an older released counter
 * counts too much, never too little, and need not check it.
 */

/** A scope of the project-wide limits: `day`, `failed`, or `asset:<SOL or mint>`. */
export type AllowanceScope = "day" | "failed" | `asset:${string}`;

/** Usage settled into one time bucket. */
export interface AllowanceBucket {
  /** Bucket number: the time divided by the scope's bucket length. */
  b: number;
  /** Count (or raw amount) settled into it. */
  n: bigint;
  /** The latest time of a use counted in it: it counts while this is inside the window. */
  last: number;
}

/** Allowance an instance took ahead of its payouts, inside one bucket, usable until `until`. */
export interface AllowanceLease {
  id: string;
  /** The instance holding it. */
  holder: string;
  b: number;
  granted: bigint;
  until: number;
}

/** One scope's ledger. */
export interface AllowanceLedger {
  buckets: AllowanceBucket[];
  leases: AllowanceLease[];
}

/** Window and bucket length of a scope. */
export interface ScopeTiming {
  windowMs: number;
  bucketMs: number;
}

const HOUR_MS = 60 * 60 * 1000;

/** The window and bucket of `scope`: 24 hours in 10-minute buckets, or an hour in minutes. */
export function scopeTiming(scope: AllowanceScope): ScopeTiming {
  return scope.startsWith("asset:")
    ? { windowMs: HOUR_MS, bucketMs: 60_000 }
    : { windowMs: 24 * HOUR_MS, bucketMs: 10 * 60_000 };
}

/** Key of a scope's ledger. */
export function allowanceKey(projectId: string, scope: AllowanceScope): Deno.KvKey {
  return ["tx_allowance", projectId, scope];
}

/** Key of a bucket's released counter (`Deno.KvU64`). */
export function releasedKey(projectId: string, scope: AllowanceScope, bucket: number): Deno.KvKey {
  return ["tx_allowance_released", projectId, scope, bucket];
}

/** An empty ledger. */
export function emptyLedger(): AllowanceLedger {
  return { buckets: [], leases: [] };
}

/**
 * A copy of `ledger` (empty when none) that may be changed in place: its buckets and leases are
 * copied one level deep, which is all `addToBucket` and the rounds change (a structured clone of
 * a day's ledger takes about 30 times as long, and a payout's limits round makes two).
 */
export function copyLedger(ledger: AllowanceLedger | null): AllowanceLedger {
  if (!ledger) return emptyLedger();
  return {
    buckets: ledger.buckets.map((bucket) => ({ ...bucket })),
    leases: ledger.leases.map((lease) => ({ ...lease })),
  };
}

/** The bucket a use at `at` counts in. */
export function bucketOf(scope: AllowanceScope, at: number): number {
  return Math.floor(at / scopeTiming(scope).bucketMs);
}

/** A bucket's end: no use at or after it counts in it. */
export function bucketEnd(scope: AllowanceScope, bucket: number): number {
  return (bucket + 1) * scopeTiming(scope).bucketMs;
}

/** Released counters of a scope, by bucket. */
export async function getReleased(
  kv: Deno.Kv,
  projectId: string,
  scope: AllowanceScope,
): Promise<Map<number, bigint>> {
  const found = new Map<number, bigint>();
  const prefix = ["tx_allowance_released", projectId, scope];
  for await (const entry of kv.list<Deno.KvU64>({ prefix })) {
    found.set(entry.key[3] as number, entry.value.value);
  }
  return found;
}

/**
 * Appends to `op` the release of `n` (a count or an amount) used at `at` in `scope`: a blind sum,
 * so it never conflicts. Nothing when the use has left the window already.
 */
export function addRelease(
  op: Deno.AtomicOperation,
  input: { projectId: string; scope: AllowanceScope; at: number; n: bigint; now: number },
): void {
  if (input.n <= 0n || input.at <= input.now - scopeTiming(input.scope).windowMs) return;
  op.sum(releasedKey(input.projectId, input.scope, bucketOf(input.scope, input.at)), input.n);
}

/** Key of a give-back's marker (`giveBackOnce`): present once its release applied. */
export function givenBackKey(projectId: string, id: string): Deno.KvKey {
  return ["tx_allowance_given_back", projectId, id];
}

/**
 * Gives back `n` used at `at` in `scope` in a commit of its own, once: with the release, the
 * commit creates the give-back's marker `id`, checked absent. Over KV Connect, Deno's client sends
 * a write again whose answer it lost; the second sending finds the marker and fails its check,
 * where a bare sum would be added twice and lower the count below what was used. The marker lives
 * as long as the release can count (its bucket in the window); nothing is written when the use has
 * left it already.
 */
export async function giveBackOnce(
  kv: Deno.Kv,
  input: {
    projectId: string;
    scope: AllowanceScope;
    at: number;
    n: bigint;
    now: number;
    id: string;
  },
): Promise<void> {
  const { windowMs, bucketMs } = scopeTiming(input.scope);
  // Its bucket counts until its latest use leaves the window: at most a bucket after `at`'s.
  const counts = input.at + windowMs + bucketMs - input.now;
  if (input.n <= 0n || input.at <= input.now - windowMs) return;
  const marker = givenBackKey(input.projectId, input.id);
  const op = kv.atomic().check({ key: marker, versionstamp: null });
  addRelease(op, input);
  // Not ok only when this very write applied before, its answer lost: nothing more to do.
  await op.set(marker, true, { expireIn: counts }).commit();
}

/** Whether a bucket still counts at `now`: its latest use, or an open lease in it, is in the window. */
function bucketLatest(ledger: AllowanceLedger, b: number): number {
  let latest = ledger.buckets.find((bucket) => bucket.b === b)?.last ?? -Infinity;
  for (const lease of ledger.leases) if (lease.b === b) latest = Math.max(latest, lease.until);
  return latest;
}

/** The buckets (numbers) that count at `now`. */
export function liveBuckets(
  scope: AllowanceScope,
  ledger: AllowanceLedger,
  now: number,
): Set<number> {
  const since = now - scopeTiming(scope).windowMs;
  const all = new Set([...ledger.buckets.map((x) => x.b), ...ledger.leases.map((x) => x.b)]);
  return new Set([...all].filter((b) => bucketLatest(ledger, b) > since));
}

/** What the ledger counts at `now`: settled usage and open leases of live buckets, less releases. */
export function ledgerCount(
  scope: AllowanceScope,
  ledger: AllowanceLedger,
  released: ReadonlyMap<number, bigint>,
  now: number,
): bigint {
  const live = liveBuckets(scope, ledger, now);
  let count = 0n;
  for (const bucket of ledger.buckets) if (live.has(bucket.b)) count += bucket.n;
  for (const lease of ledger.leases) if (live.has(lease.b)) count += lease.granted;
  for (const b of live) count -= released.get(b) ?? 0n;
  return count;
}

/** Adds `n` used at `last` to bucket `b` of `ledger` (in place). */
export function addToBucket(ledger: AllowanceLedger, b: number, n: bigint, last: number): void {
  if (n <= 0n) return;
  const bucket = ledger.buckets.find((x) => x.b === b);
  if (bucket) {
    bucket.n += n;
    bucket.last = Math.max(bucket.last, last);
  } else ledger.buckets.push({ b, n, last });
}

/**
 * Appends to `op` a use of `n` at `at` added to its bucket of the ledger read as `entry`, checked
 * against it (a failed payout found paid after all). Nothing when the use has left the window.
 */
export function addLedgerUse(
  op: Deno.AtomicOperation,
  entry: Deno.KvEntryMaybe<AllowanceLedger>,
  input: { scope: AllowanceScope; at: number; n: bigint; now: number },
): void {
  const { windowMs, bucketMs } = scopeTiming(input.scope);
  if (input.at <= input.now - windowMs) return;
  const ledger = copyLedger(entry.value);
  addToBucket(ledger, bucketOf(input.scope, input.at), input.n, input.at);
  op.check(entry).set(entry.key, ledger, { expireIn: windowMs + bucketMs });
}

/** A scope's usage by bucket at `now`, releases taken off (open leases not included): for display. */
export async function getBucketUsage(
  kv: Deno.Kv,
  projectId: string,
  scope: AllowanceScope,
  now: number,
): Promise<Array<{ start: number; n: bigint }>> {
  const [entry, released] = await Promise.all([
    kv.get<AllowanceLedger>(allowanceKey(projectId, scope)),
    getReleased(kv, projectId, scope),
  ]);
  const ledger = entry.value ?? emptyLedger();
  const live = liveBuckets(scope, ledger, now);
  const { bucketMs } = scopeTiming(scope);
  return ledger.buckets.filter((bucket) => live.has(bucket.b)).map((bucket) => {
    const n = bucket.n - (released.get(bucket.b) ?? 0n);
    return { start: bucket.b * bucketMs, n: n > 0n ? n : 0n };
  });
}

/**
 * A ledger read at `now` with an instance's own blocks settled (`own`: what each gave out goes
 * into its bucket; one another instance took for lost already counts whole), other instances'
 * blocks that ended before `lostBefore` counted whole (their holder is gone), and buckets out of
 * the window dropped; `deadReleases`: the released counters of buckets no longer counted.
 */
export function settleLedger(
  scope: AllowanceScope,
  stored: AllowanceLedger | null,
  input: {
    own: ReadonlyArray<{ id: string; b: number; taken: bigint; lastUse: number }>;
    released: ReadonlyMap<number, bigint>;
    lostBefore: number;
    now: number;
  },
): { ledger: AllowanceLedger; deadReleases: number[] } {
  const ledger = copyLedger(stored);
  for (const lease of input.own) {
    if (!ledger.leases.some((l) => l.id === lease.id)) continue;
    ledger.leases = ledger.leases.filter((l) => l.id !== lease.id);
    addToBucket(ledger, lease.b, lease.taken, lease.lastUse);
  }
  for (const lease of ledger.leases.filter((l) => l.until < input.lostBefore)) {
    ledger.leases = ledger.leases.filter((l) => l !== lease);
    addToBucket(ledger, lease.b, lease.granted, lease.until);
  }
  const live = liveBuckets(scope, ledger, input.now);
  ledger.buckets = ledger.buckets.filter((x) => live.has(x.b));
  return { ledger, deadReleases: [...input.released.keys()].filter((b) => !live.has(b)) };
}
