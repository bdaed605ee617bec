import { type Context, Hono } from "hono";
import { z } from "zod";
import type { AppContext } from "../../lib/context.ts";
import {
  clearCookie,
  LINK_RETURN_COOKIE,
  OAUTH_FLOW_COOKIE,
  readSignedCookie,
  setSignedCookie,
} from "../../http/cookies.ts";
import {
  authorizeUrl,
  createPkcePair,
  exchangeCode,
  fetchPlayer,
  IdpError,
  type IdpTokens,
  revokeToken,
} from "../../lib/auth/idp_client.ts";
import { DEFAULT_NEXT, parseNextPath, withErrorCode } from "../../lib/auth/next_path.ts";
import {
  getOauthApp,
  hasOauthApp,
  OAUTH_CALLBACK_PATH,
  type OauthApp,
  oauthRedirectUri,
} from "../../lib/auth/oauth_app.ts";
import { startPlayerSession } from "../../http/player_session.ts";
import { timingSafeEqual } from "../../core/hash.ts";
import { randomToken } from "../../core/ids.ts";
import { log } from "../../core/log.ts";
import { getActiveProjectBySlug, getProject } from "../../kv/projects.ts";

const flowSchema = z.object({
  state: z.string().min(1),
  verifier: z.string().min(43),
  next: z.string(),
  projectId: z.string(),
});

/** Player sign-in through the project's own identity-provider app: `/auth/idp/start` and `/callback`. */
export function idpRoutes(ctx: AppContext): Hono {
  const redirectUri = oauthRedirectUri(ctx.config.baseUrl);

  function redirect(c: Context, location: string): Response {
    c.header("cache-control", "no-store");
    return c.redirect(location, 302);
  }

  return new Hono()
    .get("/auth/idp/start", async (c) => {
      const next = parseNextPath(c.req.query("next"));
      if (!next) return redirect(c, DEFAULT_NEXT);
      // The dashboard signs in with a wallet, not the identity provider.
      if (next.kind === "dashboard") return redirect(c, next.path);
      const project = await getActiveProjectBySlug(ctx.kv, next.slug);
      if (!project) return redirect(c, next.path);
      if (!hasOauthApp(project)) {
        return redirect(c, withErrorCode(next.path, "oauth_not_configured"));
      }
      const state = randomToken(24);
      const pkce = await createPkcePair();
      await setSignedCookie(ctx, c, OAUTH_FLOW_COOKIE, {
        state,
        verifier: pkce.verifier,
        next: next.path,
        projectId: project.id,
      });
      await setSignedCookie(ctx, c, LINK_RETURN_COOKIE, { path: next.path });
      return redirect(
        c,
        authorizeUrl(ctx.config.idpUrl, {
          clientId: project.settings.oauthClientId!,
          redirectUri,
          state,
          codeChallenge: pkce.challenge,
        }),
      );
    })
    .get(OAUTH_CALLBACK_PATH, async (c) => {
      const parsed = flowSchema.safeParse(await readSignedCookie(ctx, c, OAUTH_FLOW_COOKIE));
      if (!parsed.success) {
        clearCookie(c, OAUTH_FLOW_COOKIE);
        return redirect(c, withErrorCode(DEFAULT_NEXT, "oauth_state_mismatch"));
      }
      const flow = parsed.data;
      const fail = (code: string) => redirect(c, withErrorCode(flow.next, code));
      const { code, state, error } = c.req.query();
      // State first: an `error` redirect that does not carry our state was not sent by the
      // provider. Such a callback (a forged link) leaves the flow cookie alone, so it cannot end
      // the sign-in the player has in progress; the provider's own callback still finishes it.
      if (!state || !timingSafeEqual(state, flow.state)) return fail("oauth_state_mismatch");
      // Single use: once the state matched, the flow cookie goes whatever happens next.
      clearCookie(c, OAUTH_FLOW_COOKIE);
      if (error) return fail("idp_denied");
      if (!code) return fail("oauth_state_mismatch");
      const project = await getProject(ctx.kv, flow.projectId);
      if (!project || project.deletedAt !== null) return redirect(c, flow.next);
      let app: OauthApp | null;
      try {
        app = await getOauthApp(ctx, project);
      } catch (e) {
        log("error", "OAuth client secret cannot be decrypted", {
          projectId: project.id,
          error: e,
        });
        return fail("oauth_token_failed");
      }
      if (!app) return fail("oauth_not_configured");
      let tokens: IdpTokens;
      try {
        tokens = await exchangeCode(ctx.config.idpUrl, app, {
          code,
          redirectUri,
          verifier: flow.verifier,
        });
      } catch (e) {
        return fail(idpFailure(e, project.id, "oauth_token_failed"));
      }
      try {
        const user = await fetchPlayer(ctx.config.idpUrl, tokens.accessToken);
        await startPlayerSession(ctx, c, { projectId: project.id, user });
        log("info", "Player signed in", { projectId: project.id, userId: user.id });
        clearCookie(c, LINK_RETURN_COOKIE);
        return redirect(c, flow.next);
      } catch (e) {
        return fail(idpFailure(e, project.id, "oauth_userinfo_failed"));
      } finally {
        // We only needed the identity once; revoking the grant leaves nothing usable behind.
        await revoke(ctx.config.idpUrl, app, tokens.refreshToken ?? tokens.accessToken, project.id);
      }
    });
}

function idpFailure(error: unknown, projectId: string, fallback: string): string {
  log("warn", "Player sign-in failed", { projectId, error });
  return error instanceof IdpError ? error.code : fallback;
}

async function revoke(idpUrl: string, app: OauthApp, token: string, projectId: string) {
  if (!(await revokeToken(idpUrl, app, token))) {
    log("warn", "Identity-provider token could not be revoked", { projectId });
  }
}
