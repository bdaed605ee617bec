/** A project's own identity-provider OAuth app: client ID in clear, client secret encrypted at rest. */
import type { Project } from "../../kv/projects.ts";
import { decryptSecretText, encryptSecret, type SealBinding } from "../crypto/encryption.ts";
import type { SecretKeys } from "../crypto/secret_keys.ts";

/** Where the identity provider sends a player back after sign-in: our route, on every project. */
export const OAUTH_CALLBACK_PATH = "/auth/idp/callback";

/** The redirect URI each project registers with its Roblox OAuth app. */
export function oauthRedirectUri(baseUrl: string): string {
  return `${baseUrl}${OAUTH_CALLBACK_PATH}`;
}

/** The credentials the token and revoke endpoints need. */
export interface OauthApp {
  clientId: string;
  clientSecret: string;
}

// Sealed as an OAuth client secret of this project, so neither another project's secret nor
// this project's publishing key copied into the field decrypts.
function secretBinding(projectId: string): SealBinding {
  return { purpose: "oauth_client_secret", context: projectId };
}

/** Encrypts a client secret for `project.settings.oauthClientSecretEnc` (the dashboard saves it). */
export function encryptOauthClientSecret(
  ctx: { keys: SecretKeys },
  projectId: string,
  clientSecret: string,
): Promise<string> {
  return encryptSecret(ctx.keys, clientSecret, secretBinding(projectId));
}

/** True when the project saved both a client ID and a client secret. */
export function hasOauthApp(project: Project): boolean {
  return Boolean(project.settings.oauthClientId && project.settings.oauthClientSecretEnc);
}

/** Decrypts the project's OAuth app; null when it has none saved. Throws if the secret cannot be decrypted. */
export async function getOauthApp(
  ctx: { keys: SecretKeys },
  project: Project,
): Promise<OauthApp | null> {
  const { oauthClientId, oauthClientSecretEnc } = project.settings;
  if (!oauthClientId || !oauthClientSecretEnc) return null;
  const clientSecret = await decryptSecretText(
    ctx.keys,
    oauthClientSecretEnc,
    secretBinding(project.id),
  );
  return { clientId: oauthClientId, clientSecret };
}
