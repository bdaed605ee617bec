/**
 * Tells a write that failed from one whose answer was lost. On a remote store Deno's client resends a
 * write whose answer the network lost; if the first copy applied, the resend fails its own check and
 * the write is answered as failed. A create or update that wrote something only it could write (a
 * fresh id, its own attempt) reads it back after a failed commit: found, the write applied.
 */

/** True when `key` holds a value this very write put there (`isOurs` tells, by default any value). */
export async function wasWrittenBy<T>(
  kv: Deno.Kv,
  key: Deno.KvKey,
  isOurs: (value: T) => boolean = () => true,
): Promise<boolean> {
  const entry = await kv.get<T>(key);
  return entry.versionstamp !== null && isOurs(entry.value);
}
