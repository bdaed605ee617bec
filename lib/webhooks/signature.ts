/**
 * How a webhook is signed: the Standard Webhooks scheme (standardwebhooks.com).
 *
 * - `webhook-id`: the message's id, `<project id>:<event id>`, the same on every attempt and
 *   replay of one event, so a receiver deduplicates by it.
 * - `webhook-timestamp`: when this attempt was signed, in Unix seconds.
 * - `webhook-signature`: `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, one per
 *   secret that signs (two, space-separated, while a rotation's overlap lasts), where the key is
 *   the secret's bytes: the base64 after `whsec_`.
 *
 * Chosen over Roblox's `roblox-signature: t=<unix>,v1=<base64>` because a receiver needs no code
 * of its own: the Standard Webhooks libraries (TypeScript, Python, Go, Rust, PHP, Ruby, Java, C#,
 * Elixir) and Svix's verify it as it is; it carries an id to deduplicate by, which at-least-once
 * delivery needs; and it defines several signatures in one header, which a secret rotation needs.
 * The signed content is the same idea as Roblox's (a timestamp, then the raw body), so a studio
 * that verifies Roblox's webhooks already has the HMAC half.
 */
import { createHmac } from "node:crypto";

/** The prefix of a signing secret. */
const SECRET_PREFIX = "whsec_";
/** Random bytes in a signing secret. */
const SECRET_BYTES = 32;

/** A new signing secret: `whsec_` and 32 random bytes in base64. */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));
}

/** The message id of an event of a project: the same for every attempt and replay. */
export function webhookMessageId(projectId: string, eventId: string): string {
  return `${projectId}:${eventId}`;
}

/** The signature headers of one attempt, signed with each of `secrets` (the current one first). */
export function signatureHeaders(
  input: { messageId: string; timestamp: number; body: string; secrets: readonly string[] },
): Record<string, string> {
  const signed = `${input.messageId}.${input.timestamp}.${input.body}`;
  const signatures = input.secrets.map((secret) =>
    `v1,${createHmac("sha256", keyOf(secret)).update(signed, "utf8").digest("base64")}`
  );
  return {
    "webhook-id": input.messageId,
    "webhook-timestamp": String(input.timestamp),
    "webhook-signature": signatures.join(" "),
  };
}

// The HMAC key of a secret: the bytes its base64 part stands for.
function keyOf(secret: string): Uint8Array {
  return Uint8Array.from(atob(secret.slice(SECRET_PREFIX.length)), (c) => c.charCodeAt(0));
}

function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}
