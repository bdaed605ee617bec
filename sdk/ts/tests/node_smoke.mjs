// The built package in Node (run by tests/v1/sdk_ts_test.ts against a running service): the key
// from BLOCKLINK_API_KEY, a read, a typed error, a key, and the key never shown by inspect.
import { inspect } from "node:util";
import { Blocklink, idempotencyKey } from "../dist/mod.js";

const blocklink = new Blocklink({ baseUrl: process.env.BLOCKLINK_URL });
const project = await blocklink.getProject();
if (!project.ok) throw new Error(`getProject: ${project.code}`);
const unlinked = await blocklink.transferSol({
  to: { userId: 424242 },
  amount: "0.001",
  idempotencyKey: idempotencyKey("node-smoke", 424242),
});
const shown = inspect(blocklink, { showHidden: true, depth: 10 }) + JSON.stringify(blocklink);
console.log(JSON.stringify({
  project: project.data.id,
  unlinked: [unlinked.ok, unlinked.status, unlinked.ok ? null : unlinked.code],
  key: idempotencyKey("round-reward", 42, 1001),
  keyShown: shown.includes(process.env.BLOCKLINK_API_KEY),
}));
