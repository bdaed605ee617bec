/**
 * `deno task dev`: a ready playground with nothing to configure. Starts the sandbox Solana
 * cluster and the Roblox stand-ins in this process, then the service pointed at them.
 */
import { loadConfig } from "./lib/config.ts";
import { startService } from "./service.ts";
import { openKv } from "./kv/open_kv.ts";
import { startChain } from "./sandbox/chain/mod.ts";
import { startMessagingStandIn, startOauthStandIn } from "./sandbox/roblox/mod.ts";
import { startWebhookReceiver } from "./sandbox/webhooks/receiver.ts";
import {
  exampleRecipient,
  registerSandboxConnectApp,
  seedDemoProject,
} from "./tasks/demo_project.ts";
import { randomToken } from "./core/ids.ts";

const env = Deno.env.toObject();
// The sandbox chain starts empty each run, so the store does too unless KV_PATH says otherwise;
// a fresh store needs no SECRET kept from an earlier run, so none is written to ./data.
const freshStore = env.KV_PATH === undefined;
const chain = await startChain({ port: freePort(Number(env.CHAIN_PORT ?? 8899)) });
const oauth = await startOauthStandIn();
const messaging = await startMessagingStandIn({ checkAccessToken: oauth.checkAccessToken });
// The service's own app for connecting games on the stand-in: "Connect with Roblox" works in
// every project with nothing to configure.
const connectApp = { clientId: "blocklink-connect", clientSecret: randomToken() };
const webhooks = await startWebhookReceiver();
const config = loadConfig({
  // The demo's webhook endpoint is the receiver above, on this machine.
  WEBHOOKS_ALLOW_LOOPBACK: "1",
  ...env,
  SECRET: env.SECRET ?? (freshStore ? randomToken() : undefined),
  RPC_URL_DEVNET: chain.rpcUrl,
  RPC_URL_MAINNET: chain.rpcUrl,
  DAS_URL_DEVNET: chain.dasUrl,
  DAS_URL_MAINNET: chain.dasUrl,
  IDP_URL: oauth.idpUrl,
  PUBLISH_URL: messaging.url,
  ROBLOX_CONNECT_CLIENT_ID: connectApp.clientId,
  ROBLOX_CONNECT_CLIENT_SECRET: connectApp.clientSecret,
});
registerSandboxConnectApp(oauth, config);
const kvPath = env.KV_PATH ?? `${await Deno.makeTempDir({ prefix: "blocklink-dev-" })}/dev.kv`;
const kv = await openKv(kvPath);
// Loopback only: the playground allows webhooks to loopback and holds a demo key anyone could use.
const service = await startService({ kv, config: { ...config, kvPath }, hostname: "127.0.0.1" });
const demo = await seedDemoProject(service.ctx, {
  chain,
  messaging,
  oauth,
  ...(config.webhooksAllowLoopback ? { webhooks } : {}),
});

console.log(`
Blocklink playground
  Service            ${config.baseUrl}   (health: ${config.baseUrl}/health)
  API reference      ${config.baseUrl}/docs   (OpenAPI: ${config.baseUrl}/openapi.json)
  Sandbox Solana RPC ${chain.rpcUrl}   (DAS: ${chain.dasUrl})
  Roblox OAuth       ${oauth.idpUrl}
  Messaging inbox    ${messaging.url}/_inbox.html   (Open Cloud: publish, secrets, restarts)
  Webhook inbox      ${webhooks.url}/_inbox.html
`);
printDemo(config.baseUrl, await exampleRecipient());

function printDemo(base: string, to: string) {
  const key = demo.apiKey;
  const post = (kind: string, body: Record<string, unknown>) =>
    `curl -X POST -H "x-api-key: ${key}" -H "content-type: application/json" \\\n` +
    `    -d '${JSON.stringify({ to: { address: to }, ...body })}' ${base}/v1/tx/${kind}`;
  const wallet = demo.walletAddress ?? "none (WALLET_PROVIDER=none)";
  console.log([
    `Demo project "${demo.project.name}" (devnet)`,
    `  Dashboard          ${base}/dashboard (sign in with the sandbox key form and this key)`,
    `  Developer key      ${demo.developerKey}`,
    `  Developer address  ${demo.developerAddress}`,
    `  API key            ${key}`,
    `  Managed wallet     ${wallet} (10 SOL, 1,000 demo tokens)`,
    `  Token mint         ${demo.mint ?? "none"} (6 decimals, minted by the managed wallet)`,
    `  Policy             1 SOL and 100 tokens per transaction, 5 SOL an hour in all`,
    `  Webhook endpoint   ${demo.webhook?.url ?? "none (WEBHOOKS_ALLOW_LOOPBACK=0)"}`,
    `  Signing secret     ${demo.webhook?.secret ?? "none"}`,
    `  Linking page       ${base}/link/${demo.project.slug} (Roblox stand-in players)`,
    `  Connect the game   ${base}/dashboard/projects/${demo.project.id}/settings#roblox`,
    "",
    "Try it:",
    `  curl -H "x-api-key: ${key}" ${base}/v1/project`,
    `  ${post("transfer-sol", { amount: "0.1", idempotencyKey: "demo-sol-1" })}`,
    `  ${post("mint-token", { mint: demo.mint, amount: "5", idempotencyKey: "demo-mint-1" })}`,
    "",
  ].join("\n"));
}

function freePort(preferred: number): number {
  try {
    const listener = Deno.listen({ port: preferred, hostname: "127.0.0.1" });
    listener.close();
    return preferred;
  } catch {
    return 0;
  }
}
