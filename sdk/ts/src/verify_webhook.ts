/**
 * Verifies a Blocklink webhook (Standard Webhooks signature) with Web Crypto only: runs as it is in
 * Deno, Node 18+, Bun and Cloudflare Workers. Pass the raw body text, before any JSON parsing.
 * Returns the event, or throws. With the client (`@blocklink/client`, which exports this function),
 * `verifyWebhook<FeedEvent>(...)` types the event as the feed's.
 */
export async function verifyWebhook<
  Event = { id: string; type: string; createdAt: number; [field: string]: unknown },
>(
  secret: string, // whsec_... from the dashboard
  headers: Headers,
  body: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): Promise<Event> {
  const id = headers.get("webhook-id");
  const timestamp = headers.get("webhook-timestamp");
  const signatures = headers.get("webhook-signature");
  if (!id || !timestamp || !signatures) throw new Error("Missing webhook headers");
  // A replayed old request is refused: the timestamp is signed too.
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > 5 * 60) {
    throw new Error("Webhook timestamp is more than 5 minutes away");
  }
  const bytes = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey(
    "raw",
    bytes(secret.replace(/^whsec_/, "")),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["verify"],
  );
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  // During a secret rotation two signatures come: one matching is enough.
  for (const entry of signatures.split(" ")) {
    const [version, signature] = entry.split(",");
    if (version !== "v1" || !signature) continue;
    // crypto.subtle.verify compares in constant time.
    if (await crypto.subtle.verify("HMAC", key, bytes(signature), signed)) return JSON.parse(body);
  }
  throw new Error("No valid webhook signature");
}
