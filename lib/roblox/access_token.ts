/**
 * A connected game's access token for Open Cloud, shared by every instance.
 *
 * Access tokens last 15 minutes; a refresh token works once and rotates, and one spent twice
 * ends the grant. So the stored access token is used while it has a minute left, and otherwise
 * exactly one instance refreshes: the one that takes the lease (`kv/roblox_tokens.ts`); the
 * others wait until the stored tokens change, then use the new access token. The new pair is
 * committed before it is used. Roblox refusing the refresh token (revoked, expired, reused) ends
 * the connection (`lost`: the settings page offers "Reconnect", events stop until then); a
 * network error or a 5xx ends the lease and leaves the tokens to the next try.
 */
import {
  commitRefreshedTokens,
  getRobloxTokensEntry,
  refreshLeaseEnd,
  releaseRefreshLease,
  type RobloxTokens,
  takeRefreshLease,
  updateRobloxConnection,
} from "../../kv/roblox_tokens.ts";
import { getProject } from "../../kv/projects.ts";
import { decryptSecretText, encryptSecret } from "../crypto/encryption.ts";
import { refreshTokens } from "../auth/idp_client.ts";
import type { BaseContext } from "../base_context.ts";
import { log } from "../../core/log.ts";
import { appOfConnection } from "./connect_app.ts";

/** What asking for an access token came to. */
export type AccessTokenResult =
  | { kind: "token"; token: string }
  /** Not connected (or disconnected meanwhile). */
  | { kind: "none" }
  /** Roblox refused the grant: reconnect. */
  | { kind: "lost" }
  /** The refresh could not be made now; the tokens are kept for the next try. */
  | { kind: "unavailable"; reason: string };

/** A stored access token is refreshed once it has less than this left. */
const EARLY_MS = 60_000;
/** Longer than any refresh (the IdP client's timeout is 10 s), so a live holder keeps it. */
const LEASE_TTL_MS = 30_000;
const WAIT_STEP_MS = 50;
const ROUNDS = 20;

/** Sealing of a connected game's tokens, bound to their project. */
export function tokenBinding(projectId: string, kind: "access" | "refresh") {
  return {
    purpose: kind === "access" ? "roblox_access_token" : "roblox_refresh_token",
    context: projectId,
  } as const;
}

/**
 * The project's access token, refreshed first when it is about to expire (or is `stale`: one
 * Open Cloud refused) by exactly one instance at a time.
 */
export async function getAccessToken(
  ctx: BaseContext,
  projectId: string,
  options: { stale?: string } = {},
): Promise<AccessTokenResult> {
  for (let round = 0; round < ROUNDS; round++) {
    const tokens = await getRobloxTokensEntry(ctx.kv, projectId);
    if (!tokens.value) return { kind: "none" };
    const entry = tokens as Deno.KvEntry<RobloxTokens>;
    const access = await decryptSecretText(
      ctx.keys,
      entry.value.accessTokenEnc,
      tokenBinding(projectId, "access"),
    );
    const fresh = entry.value.accessExpiresAt - EARLY_MS > ctx.clock.now();
    if (fresh && access !== options.stale) return { kind: "token", token: access };
    const lease = await takeRefreshLease(ctx.kv, entry, {
      holder: crypto.randomUUID(),
      now: ctx.clock.now(),
      ttlMs: LEASE_TTL_MS,
    });
    if (!lease) {
      await waitForOtherRefresh(ctx, projectId, entry.versionstamp);
      // A stale token another instance has since replaced is not stale any more.
      continue;
    }
    return await refreshHeld(ctx, projectId, { tokens: entry, lease });
  }
  return { kind: "unavailable", reason: "The tokens kept changing while refreshing" };
}

// Polls until the stored tokens change or the holder's lease ends (its holder died).
async function waitForOtherRefresh(ctx: BaseContext, projectId: string, seen: string) {
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    const now = await getRobloxTokensEntry(ctx.kv, projectId);
    if (now.versionstamp !== seen) return;
    const end = await refreshLeaseEnd(ctx.kv, projectId);
    if (end === null || end <= ctx.clock.now()) return;
  }
}

async function refreshHeld(
  ctx: BaseContext,
  projectId: string,
  held: Parameters<typeof commitRefreshedTokens>[1],
): Promise<AccessTokenResult> {
  const project = await getProject(ctx.kv, projectId);
  const connection = project?.settings.robloxConnection;
  if (!project || !connection || connection.grantId !== held.tokens.value.grantId) {
    await releaseRefreshLease(ctx.kv, held.lease);
    return { kind: "none" };
  }
  const app = await appOfConnection(ctx, project, connection);
  if (!app) {
    await loseConnection(ctx, projectId, held.tokens, "The OAuth app it was made with changed");
    return { kind: "lost" };
  }
  const refreshToken = await decryptSecretText(
    ctx.keys,
    held.tokens.value.refreshTokenEnc,
    tokenBinding(projectId, "refresh"),
  );
  const outcome = await refreshTokens(ctx.config.idpUrl, app, refreshToken);
  if (outcome.kind === "unavailable") {
    await releaseRefreshLease(ctx.kv, held.lease);
    log("warn", "Roblox token refresh failed; will try again", {
      projectId,
      reason: outcome.reason,
    });
    return { kind: "unavailable", reason: outcome.reason };
  }
  if (outcome.kind === "refused") {
    await loseConnection(
      ctx,
      projectId,
      held.tokens,
      `Roblox refused the grant (${outcome.error})`,
    );
    return { kind: "lost" };
  }
  const now = ctx.clock.now();
  const next = await sealTokens(ctx, projectId, {
    grantId: held.tokens.value.grantId,
    accessToken: outcome.tokens.accessToken,
    refreshToken: outcome.tokens.refreshToken,
    expiresIn: outcome.tokens.expiresIn,
    now,
  });
  if (!(await commitRefreshedTokens(ctx.kv, held, next, ctx.keys.current.id))) {
    // Disconnected or reconnected meanwhile: the pair belonged to a grant that is gone.
    log("warn", "Roblox tokens refreshed for a connection that ended meanwhile", { projectId });
    return { kind: "none" };
  }
  log("info", "Roblox tokens refreshed", { projectId, grantId: next.grantId });
  return { kind: "token", token: outcome.tokens.accessToken };
}

/** Seals a token pair for the store; the access token lasts `expiresIn` seconds (15 minutes if unsaid). */
export async function sealTokens(
  ctx: Pick<BaseContext, "keys">,
  projectId: string,
  tokens: {
    grantId: string;
    accessToken: string;
    refreshToken: string;
    expiresIn: number | null;
    now: number;
  },
): Promise<RobloxTokens> {
  return {
    grantId: tokens.grantId,
    accessTokenEnc: await encryptSecret(
      ctx.keys,
      tokens.accessToken,
      tokenBinding(projectId, "access"),
    ),
    accessExpiresAt: tokens.now + (tokens.expiresIn ?? 899) * 1_000,
    refreshTokenEnc: await encryptSecret(
      ctx.keys,
      tokens.refreshToken,
      tokenBinding(projectId, "refresh"),
    ),
    refreshExpiresAt: tokens.now + 90 * 24 * 3_600_000,
    refreshedAt: tokens.now,
  };
}

// The grant is over: the connection shows "Reconnect" and its tokens go, in one commit.
async function loseConnection(
  ctx: BaseContext,
  projectId: string,
  tokens: Deno.KvEntry<RobloxTokens>,
  reason: string,
) {
  const at = ctx.clock.now();
  const lost = await updateRobloxConnection(ctx.kv, projectId, (project) => {
    const connection = project.settings.robloxConnection;
    if (!connection || connection.grantId !== tokens.value.grantId) return null;
    const settings = {
      ...project.settings,
      robloxConnection: { ...connection, status: "lost" as const, lostAt: at },
    };
    return { ...project, settings };
  }, {
    tokens: null,
    ifTokens: tokens,
    audit: (project) => ({
      projectId,
      actor: "roblox",
      action: "roblox_connection_lost",
      details: { universeId: project.settings.robloxConnection?.universeId ?? null, reason },
      at,
    }),
  });
  if (lost) {
    log("warn", "Roblox connection lost: reconnect from the settings page", { projectId, reason });
  }
}
