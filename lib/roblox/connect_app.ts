/**
 * The Roblox OAuth app a project connects its game through: its own (a second, private app whose
 * client ID and secret it saves in its settings), else the service's (`ROBLOX_CONNECT_CLIENT_ID`).
 * The app must register `{BASE_URL}/dashboard/roblox/callback` and the scopes below.
 */
import type { Project, RobloxConnection } from "../../kv/projects.ts";
import type { OauthApp } from "../auth/oauth_app.ts";
import { decryptSecretText, encryptSecret, type SealBinding } from "../crypto/encryption.ts";
import type { BaseContext } from "../base_context.ts";

/** What connecting asks for: who authorized, publishing, the game's secrets, restarting servers. */
export const CONNECT_SCOPES = [
  "openid",
  "profile",
  "universe-messaging-service:publish",
  "universe.secret:read",
  "universe.secret:write",
  "universe:write",
] as const;

/** Where Roblox sends the member back after the consent page: one route for every project. */
export const CONNECT_CALLBACK_PATH = "/dashboard/roblox/callback";

/** The redirect URI the connecting app registers. */
export function connectRedirectUri(baseUrl: string): string {
  return `${baseUrl}${CONNECT_CALLBACK_PATH}`;
}

// Sealed as this project's connecting app's secret: the sign-in app's secret never opens as it.
function secretBinding(projectId: string): SealBinding {
  return { purpose: "roblox_app_secret", context: projectId };
}

/** Encrypts a connecting app's client secret for `settings.connectClientSecretEnc`. */
export function encryptConnectClientSecret(
  ctx: Pick<BaseContext, "keys">,
  projectId: string,
  clientSecret: string,
): Promise<string> {
  return encryptSecret(ctx.keys, clientSecret, secretBinding(projectId));
}

/** The app a new connection of the project goes through, or null when there is none to use. */
export async function connectAppFor(
  ctx: Pick<BaseContext, "keys" | "config">,
  project: Project,
): Promise<{ app: OauthApp; kind: RobloxConnection["app"] } | null> {
  const { connectClientId, connectClientSecretEnc } = project.settings;
  if (connectClientId && connectClientSecretEnc) {
    const clientSecret = await decryptSecretText(
      ctx.keys,
      connectClientSecretEnc,
      secretBinding(project.id),
    );
    return { app: { clientId: connectClientId, clientSecret }, kind: "project" };
  }
  const service = ctx.config.robloxConnectApp;
  return service ? { app: service, kind: "service" } : null;
}

/**
 * The app an existing connection's tokens belong to; null when that app is no longer configured
 * (its client ID changed or was removed), so its tokens cannot be used any more.
 */
export async function appOfConnection(
  ctx: Pick<BaseContext, "keys" | "config">,
  project: Project,
  connection: RobloxConnection,
): Promise<OauthApp | null> {
  if (connection.app === "service") {
    const service = ctx.config.robloxConnectApp;
    return service?.clientId === connection.clientId ? service : null;
  }
  const found = await connectAppFor(ctx, project);
  return found?.kind === "project" && found.app.clientId === connection.clientId ? found.app : null;
}
