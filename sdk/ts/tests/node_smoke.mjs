// The built package in Node (run by tests/v1/sdk_ts_test.ts against a running service): the key
// from BLOCKLINK_API_KEY, a read, a typed error, a key, the key never shown by inspect, and the
// webhook verifier under Node's Web Crypto (tests/webhooks/ verify it against real deliveries).
import { createHmac } from "node:crypto";
import { inspect } from "node:util";
import { Blocklink, idempotencyKey, verifyWebhook } from "../dist/mod.js";

const blocklink = new Blocklink({ baseUrl: process.env.BLOCKLINK_URL });
const project = await blocklink.getProject();
if (!project.ok) throw new Error(`getProject: ${project.code}`);
const unlinked = await blocklink.transferSol({
  to: { userId: 424242 },
  amount: "0.001",
  idempotencyKey: idempotencyKey("node-smoke", 424242),
});
const shown = inspect(blocklink, { showHidden: true, depth: 10 }) + JSON.stringify(blocklink);
// Signed here as the Standard Webhooks scheme says, independently of the service's code.
const secretBytes = Buffer.alloc(32, 7);
const body = JSON.stringify({ id: "1", type: "wallet_linked", createdAt: 1, userId: 42 });
const now = Math.floor(Date.now() / 1000);
const signature = createHmac("sha256", secretBytes).update(`p:1.${now}.${body}`).digest("base64");
const headers = new Headers({
  "webhook-id": "p:1",
  "webhook-timestamp": String(now),
  "webhook-signature": `v1,${signature}`,
});
const secret = `whsec_${secretBytes.toString("base64")}`;
const verified = await verifyWebhook(secret, headers, body);
const forged = await verifyWebhook(secret, headers, `${body} `).then(() => true, () => false);

console.log(JSON.stringify({
  project: project.data.id,
  unlinked: [unlinked.ok, unlinked.status, unlinked.ok ? null : unlinked.code],
  key: idempotencyKey("round-reward", 42, 1001),
  keyShown: shown.includes(process.env.BLOCKLINK_API_KEY),
  webhook: [verified.type, forged],
}));
