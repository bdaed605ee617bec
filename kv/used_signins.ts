/** Spent dashboard sign-in messages, so a captured sign-in cookie cannot be replayed while it is still valid. */

/** Key of a spent sign-in, by the SHA-256 of its message. */
function usedSignInKey(messageHash: string): Deno.KvKey {
  return ["used_signins", messageHash];
}

/** Marks a sign-in message spent; false when it already was. Kept as long as the cookie could live. */
export async function spendSignIn(
  kv: Deno.Kv,
  messageHash: string,
  input: { now: number; ttlMs: number },
): Promise<boolean> {
  const key = usedSignInKey(messageHash);
  const result = await kv.atomic()
    .check({ key, versionstamp: null })
    .set(key, { expiresAt: input.now + input.ttlMs }, { expireIn: input.ttlMs })
    .commit();
  return result.ok;
}
