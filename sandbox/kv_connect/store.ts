/**
 * Runs KV Connect reads and writes on a local Deno KV. Each remote key (its bytes, opaque here) is
 * stored under the one-part local key `[bytes]`, whose encoding keeps the bytes' order, so ranges
 * map one to one. Values keep their encoding: LE64 values are stored as `Deno.KvU64`, so sum, min and
 * max run natively; V8 and byte values as bytes behind a one-byte encoding tag.
 */
import {
  type AtomicWrite,
  Encoding,
  type KvEntry,
  MutationType,
  type ReadRange,
} from "./datapath.ts";

/** The self-hosted KV server's limits (denokv `limits.rs`), enforced as it does. */
export const LIMITS = { checks: 10, mutations: 1000, ranges: 10, entries: 1000 };

/** A request that breaks the protocol's rules; answered 400 with its message. */
export class BadRequest extends Error {}

function toHex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function fromHex(hex: string): Uint8Array {
  return new Uint8Array(hex.match(/../g)!.map((h) => parseInt(h, 16)));
}

function readLe64(data: Uint8Array): bigint {
  return new DataView(data.buffer, data.byteOffset, 8).getBigUint64(0, true);
}

function toEntry(entry: Deno.KvEntry<unknown>): KvEntry {
  const key = entry.key[0] as Uint8Array;
  const versionstamp = fromHex(entry.versionstamp);
  if (entry.value instanceof Deno.KvU64) {
    const value = new Uint8Array(8);
    new DataView(value.buffer).setBigUint64(0, entry.value.value, true);
    return { key, value, encoding: Encoding.LE64, versionstamp };
  }
  const stored = entry.value as Uint8Array;
  const encoding = stored[0];
  if (encoding === undefined) {
    throw new Error("Cannot read entry: stored without its encoding byte");
  }
  return { key, value: stored.subarray(1), encoding, versionstamp };
}

function toStored(value: { data: Uint8Array; encoding: number }): unknown {
  if (value.encoding === Encoding.LE64) return new Deno.KvU64(readLe64(value.data));
  if (value.encoding !== Encoding.V8 && value.encoding !== Encoding.BYTES) {
    throw new BadRequest(`Unknown value encoding ${value.encoding}`);
  }
  const stored = new Uint8Array(value.data.length + 1);
  stored[0] = value.encoding;
  stored.set(value.data, 1);
  return stored;
}

function isPoint(range: ReadRange): boolean {
  const { start, end } = range;
  return end.length === start.length + 1 && end[start.length] === 0 &&
    start.every((b, i) => end[i] === b);
}

/** Reads each range; a batch of single keys (what `getMany` sends) is read as one snapshot. */
export async function snapshotRead(kv: Deno.Kv, ranges: ReadRange[]): Promise<KvEntry[][]> {
  if (ranges.length > LIMITS.ranges) throw new BadRequest("Too many ranges");
  if (ranges.every(isPoint)) {
    const entries = await kv.getMany(ranges.map((r) => [r.start]));
    return entries.map((e) => e.versionstamp === null ? [] : [toEntry(e as Deno.KvEntry<unknown>)]);
  }
  const out: KvEntry[][] = [];
  for (const range of ranges) {
    const limit = Math.min(range.limit || LIMITS.entries, LIMITS.entries);
    const values: KvEntry[] = [];
    const iter = kv.list({ start: [range.start], end: [range.end] }, {
      limit,
      reverse: range.reverse,
      batchSize: limit,
    });
    for await (const entry of iter) values.push(toEntry(entry));
    out.push(values);
  }
  return out;
}

/** Applies one atomic write; null when a check failed, else the commit's versionstamp. */
export async function atomicWrite(kv: Deno.Kv, write: AtomicWrite): Promise<Uint8Array | null> {
  if (write.enqueues.length > 0) throw new BadRequest("Enqueue is not supported");
  if (write.checks.length > LIMITS.checks) {
    throw new BadRequest(`Too many checks (max ${LIMITS.checks})`);
  }
  if (write.mutations.length > LIMITS.mutations) {
    throw new BadRequest(`Too many mutations (max ${LIMITS.mutations})`);
  }
  const op = kv.atomic();
  for (const check of write.checks) {
    const versionstamp = check.versionstamp.length === 0 ? null : toHex(check.versionstamp);
    op.check({ key: [check.key], versionstamp });
  }
  for (const m of write.mutations) {
    const key = [m.key];
    const expireAt = Number(m.expire_at_ms);
    switch (m.mutation_type) {
      case MutationType.SET: {
        const expireIn = expireAt > 0 ? Math.max(1, expireAt - Date.now()) : undefined;
        op.set(key, toStored(m.value!), expireIn ? { expireIn } : undefined);
        break;
      }
      case MutationType.DELETE:
        op.delete(key);
        break;
      case MutationType.SUM:
      case MutationType.MAX:
      case MutationType.MIN: {
        if (m.value?.encoding !== Encoding.LE64) throw new BadRequest("Sum, min and max need LE64");
        const n = readLe64(m.value.data);
        if (m.mutation_type === MutationType.SUM) op.sum(key, n);
        else if (m.mutation_type === MutationType.MAX) op.max(key, n);
        else op.min(key, n);
        break;
      }
      default:
        throw new BadRequest(`Unknown mutation type ${m.mutation_type}`);
    }
  }
  const result = await op.commit();
  return result.ok ? fromHex(result.versionstamp) : null;
}
