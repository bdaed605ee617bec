/**
 * The playground's demo project (`deno task dev`): owned by a throwaway developer key, with an API
 * key, a funded managed wallet, a token mint it controls allowed in its policy, an OAuth app and
 * publishing key registered on the Roblox stand-ins, and a webhook endpoint on the sandbox's
 * receiver, so a newcomer can call `/v1` and watch events arrive at once.
 */
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { AuthorityType, getSetAuthorityInstruction } from "@solana-program/token";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import type { AppContext } from "../lib/context.ts";
import { saveProjectSettings } from "../lib/projects/settings.ts";
import { createProjectWallet } from "../lib/projects/wallet.ts";
import { createApiKey } from "../kv/api_keys.ts";
import { recordDeveloperSignIn } from "../kv/developers.ts";
import { savePolicy } from "../lib/tx/request/policy.ts";
import { createProject, type Project } from "../kv/projects.ts";
import {
  airdrop,
  createFundedSigner,
  createMint,
  type FixtureChain,
  mintTo,
  sendInstructions,
} from "../sandbox/chain/fixtures.ts";
import type { MessagingStandIn } from "../sandbox/roblox/messaging.ts";
import type { OauthStandIn } from "../sandbox/roblox/oauth.ts";
import type { WebhookReceiver } from "../sandbox/webhooks/receiver.ts";
import { addWebhookEndpoint } from "../lib/webhooks/endpoints.ts";
import { connectRedirectUri } from "../lib/roblox/connect_app.ts";
import type { Config } from "../lib/config.ts";

/** Universe ID of the demo experience on the messaging stand-in. */
export const DEMO_UNIVERSE_ID = "1000001";
const DEMO_DECIMALS = 6;
const DEMO_SOL = 10_000_000_000n;
const DEMO_TOKENS = 1_000_000_000n; // 1,000 tokens of 6 decimals

/** What the playground prints about the demo. */
export interface DemoProject {
  project: Project;
  /** The demo developer's secret key, base58 of 64 bytes (secret then public), as wallets export it. */
  developerKey: string;
  developerAddress: string;
  apiKey: string;
  /** Null when managed wallets are turned off. */
  walletAddress: string | null;
  /** Null when managed wallets are turned off. */
  mint: string | null;
  /** The webhook endpoint on the sandbox's receiver and its signing secret; null without one. */
  webhook: { url: string; secret: string } | null;
}

/**
 * Registers the service's app for connecting games (`robloxConnectApp`, which `deno task dev`
 * generates) on the OAuth stand-in, so "Connect with Roblox" works in every project with nothing
 * to configure.
 */
export function registerSandboxConnectApp(
  oauth: OauthStandIn,
  config: Pick<Config, "baseUrl" | "serviceName" | "robloxConnectApp">,
): void {
  if (!config.robloxConnectApp) return;
  oauth.registerClient({
    ...config.robloxConnectApp,
    redirectUris: [connectRedirectUri(config.baseUrl)],
    name: `${config.serviceName} (connect your game)`,
  });
}

/** Creates and funds the demo project on the sandbox cluster and the Roblox stand-ins. */
export async function seedDemoProject(
  ctx: AppContext,
  sandbox: {
    chain: FixtureChain;
    messaging: MessagingStandIn;
    oauth: OauthStandIn;
    /** A receiver on this machine (needs `WEBHOOKS_ALLOW_LOOPBACK`). */
    webhooks?: WebhookReceiver;
  },
): Promise<DemoProject> {
  const secret = ed25519.utils.randomSecretKey();
  const publicKey = ed25519.getPublicKey(secret);
  const developerAddress = base58.encode(publicKey);
  const developerKey = base58.encode(new Uint8Array([...secret, ...publicKey]));
  const now = ctx.clock.now();
  await recordDeveloperSignIn(ctx.kv, developerAddress, now);
  let project = await createProject(ctx.kv, {
    name: "Demo Game",
    cluster: "devnet",
    createdBy: developerAddress,
    now,
  });
  const { plaintext: apiKey } = await createApiKey(ctx.kv, project.id, now);

  const clientId = `demo-${project.id.toLowerCase()}`;
  const clientSecret = crypto.randomUUID();
  sandbox.oauth.registerClient({
    clientId,
    clientSecret,
    redirectUris: [`${ctx.config.baseUrl}/auth/idp/callback`],
    name: project.name,
  });
  const publishingKey = `demo-publishing-key-${crypto.randomUUID()}`;
  sandbox.messaging.registerKey(publishingKey, DEMO_UNIVERSE_ID);
  // Offered on the consent page when the game is connected with Roblox from its settings.
  sandbox.oauth.addUniverse({ id: DEMO_UNIVERSE_ID, name: project.name });
  await saveProjectSettings(ctx, project, {
    oauthClientId: clientId,
    oauthClientSecret: clientSecret,
    universeId: DEMO_UNIVERSE_ID,
    publishingKey,
  });

  let walletAddress: string | null = null;
  let mint: string | null = null;
  if (ctx.wallets.name !== "none") {
    walletAddress = await createProjectWallet(ctx, project.id);
    await airdrop(sandbox.chain, walletAddress as Address, DEMO_SOL);
    mint = await createDemoMint(sandbox.chain, walletAddress as Address);
    await savePolicy(ctx.kv, project.id, {
      maxSolPerTransfer: "1",
      allowedMints: [{ mint, maxPerTransaction: "100" }],
      perRecipientPerHour: "60",
      perPlayerPerHour: "60",
      hourlyBudgets: [{ asset: "SOL", amount: "5" }],
    });
  }
  let webhook: DemoProject["webhook"] = null;
  if (sandbox.webhooks) {
    const added = await addWebhookEndpoint(ctx, {
      projectId: project.id,
      url: `${sandbox.webhooks.url}/demo`,
      actor: developerAddress,
    });
    webhook = { url: added.endpoint.url, secret: added.secret };
  }
  project = { ...project, walletAddress };
  return { project, developerKey, developerAddress, apiKey, walletAddress, mint, webhook };
}

/** A Token mint holding 1,000 tokens in the managed wallet, whose mint authority is that wallet. */
async function createDemoMint(chain: FixtureChain, wallet: Address): Promise<string> {
  const payer = await createFundedSigner(chain);
  const mint = await createMint(chain, { payer, decimals: DEMO_DECIMALS });
  await mintTo(chain, {
    payer,
    mint,
    authority: payer,
    owner: wallet,
    amount: DEMO_TOKENS,
    decimals: DEMO_DECIMALS,
  });
  // Handing the mint authority over lets the game API mint too (`/v1/tx/mint-token`).
  await sendInstructions(chain, [
    getSetAuthorityInstruction({
      owned: mint,
      owner: payer,
      authorityType: AuthorityType.MintTokens,
      newAuthority: wallet,
    }),
  ], { feePayer: payer });
  return mint;
}

/** A fresh address to send to in the printed examples. */
export async function exampleRecipient(): Promise<string> {
  return (await generateKeyPairSigner()).address;
}
