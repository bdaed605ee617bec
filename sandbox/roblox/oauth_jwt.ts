import { base64urlnopad } from "@scure/base";

/** Signs ID tokens with a fresh ES256 key, as Roblox does, and publishes the key as a JWKS. */
export interface IdTokenSigner {
  sign(claims: Record<string, unknown>): Promise<string>;
  jwks(): { keys: JsonWebKey[] };
}

const encoder = new TextEncoder();

function encodeJson(value: unknown) {
  return base64urlnopad.encode(encoder.encode(JSON.stringify(value)));
}

/** Creates a signer whose key lives as long as the stand-in. */
export async function createIdTokenSigner(): Promise<IdTokenSigner> {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ]);
  const kid = crypto.randomUUID();
  const publicJwk = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const jwk = { kty: publicJwk.kty, crv: publicJwk.crv, x: publicJwk.x, y: publicJwk.y };
  return {
    async sign(claims) {
      const input = `${encodeJson({ alg: "ES256", typ: "JWT", kid })}.${encodeJson(claims)}`;
      // WebCrypto's ECDSA output is already the raw r||s form that JWS expects.
      const signature = await crypto.subtle.sign(
        { name: "ECDSA", hash: "SHA-256" },
        pair.privateKey,
        encoder.encode(input),
      );
      return `${input}.${base64urlnopad.encode(new Uint8Array(signature))}`;
    },
    jwks: () => ({ keys: [{ ...jwk, kid, alg: "ES256", use: "sig" } as JsonWebKey] }),
  };
}
