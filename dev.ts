/**
 * `deno task dev`: a ready playground with nothing to configure. Starts the sandbox Solana
 * cluster and the Roblox stand-ins in this process, then the service pointed at them.
 */
import { loadConfig } from "./lib/config.ts";
import { startService } from "./lib/service.ts";
import { openKv } from "./kv/open_kv.ts";
import { startChain } from "./sandbox/chain/mod.ts";
import { startMessagingStandIn, startOauthStandIn } from "./sandbox/roblox/mod.ts";

const env = Deno.env.toObject();
const chain = await startChain({ port: await freePort(Number(env.CHAIN_PORT ?? 8899)) });
const messaging = await startMessagingStandIn();
const oauth = await startOauthStandIn();
const config = loadConfig({
  ...env,
  RPC_URL_DEVNET: chain.rpcUrl,
  RPC_URL_MAINNET: chain.rpcUrl,
  DAS_URL_DEVNET: chain.dasUrl,
  DAS_URL_MAINNET: chain.dasUrl,
  IDP_URL: oauth.idpUrl,
  PUBLISH_URL: messaging.url,
});
// The sandbox chain starts empty each run, so the store does too unless KV_PATH says otherwise.
const kvPath = env.KV_PATH ?? `${await Deno.makeTempDir({ prefix: "blocklink-dev-" })}/dev.kv`;
const kv = await openKv(kvPath);
await startService({ kv, config: { ...config, kvPath } });

console.log(`
Blocklink playground
  Service            ${config.baseUrl}   (health: ${config.baseUrl}/health)
  Sandbox Solana RPC ${chain.rpcUrl}   (DAS: ${chain.dasUrl})
  Roblox OAuth       ${oauth.idpUrl}
  Messaging inbox    ${messaging.url}/_inbox.html
`);

async function freePort(preferred: number): Promise<number> {
  try {
    const listener = Deno.listen({ port: preferred, hostname: "127.0.0.1" });
    listener.close();
    return preferred;
  } catch {
    return 0;
  }
}
