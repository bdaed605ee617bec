/** A project's own identity-provider OAuth app: client ID in clear, client secret encrypted at rest. */
import type { Project } from "../../kv/projects.ts";
import type { AppContext } from "../context.ts";
import { decryptSecretText, encryptSecret } from "../crypto/encryption.ts";

/** The credentials the token and revoke endpoints need. */
export interface OauthApp {
  clientId: string;
  clientSecret: string;
}

// Bound to the project id (as the publishing key is), so a secret copied to another project's
// record does not decrypt.
function secretContext(projectId: string): string {
  return projectId;
}

/** Encrypts a client secret for `project.settings.oauthClientSecretEnc` (the dashboard saves it). */
export function encryptOauthClientSecret(
  ctx: AppContext,
  projectId: string,
  clientSecret: string,
): Promise<string> {
  return encryptSecret(ctx.keys, clientSecret, secretContext(projectId));
}

/** True when the project saved both a client ID and a client secret. */
export function hasOauthApp(project: Project): boolean {
  return Boolean(project.settings.oauthClientId && project.settings.oauthClientSecretEnc);
}

/** Decrypts the project's OAuth app; null when it has none saved. Throws if the secret cannot be decrypted. */
export async function getOauthApp(ctx: AppContext, project: Project): Promise<OauthApp | null> {
  const { oauthClientId, oauthClientSecretEnc } = project.settings;
  if (!oauthClientId || !oauthClientSecretEnc) return null;
  const clientSecret = await decryptSecretText(
    ctx.keys,
    oauthClientSecretEnc,
    secretContext(project.id),
  );
  return { clientId: oauthClientId, clientSecret };
}
