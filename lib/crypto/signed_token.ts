/** HMAC-SHA256 signed tokens for cookies: the payload is readable but cannot be forged or altered. */
import { decodeBase64Url, encodeBase64Url } from "../../core/ids.ts";
import { openingKeySets, type SecretKeys } from "./secret_keys.ts";

const encoder = new TextEncoder();

/** Signs a JSON payload under a purpose label, so a token made for one cookie is refused by another. */
export async function signToken(
  keys: SecretKeys,
  purpose: string,
  payload: unknown,
): Promise<string> {
  const body = encodeBase64Url(encoder.encode(JSON.stringify(payload)));
  const mac = await crypto.subtle.sign(
    "HMAC",
    keys.current.hmac,
    encoder.encode(`${purpose}.${body}`),
  );
  return `${body}.${encodeBase64Url(new Uint8Array(mac))}`;
}

/**
 * Returns the payload of a token signed for `purpose`, or null when it is malformed or forged.
 * During a rotation a token signed under `SECRET_PREVIOUS` still counts, so nobody is signed out.
 */
export async function verifyToken<T = unknown>(
  keys: SecretKeys,
  purpose: string,
  token: string | undefined,
): Promise<T | null> {
  if (!token) return null;
  const [body, mac, extra] = token.split(".");
  if (!body || !mac || extra !== undefined) return null;
  try {
    let ok = false;
    for (const keySet of openingKeySets(keys)) {
      if (ok) continue;
      // subtle.verify compares in constant time.
      ok = await crypto.subtle.verify(
        "HMAC",
        keySet.hmac,
        decodeBase64Url(mac) as Uint8Array<ArrayBuffer>,
        encoder.encode(`${purpose}.${body}`),
      );
    }
    if (!ok) return null;
    return JSON.parse(new TextDecoder().decode(decodeBase64Url(body))) as T;
  } catch {
    return null;
  }
}
