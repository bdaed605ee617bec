/**
 * An endpoint's signing secrets at rest (AES-256-GCM under SECRET, sealed as `webhook_secret`s of
 * the project) and the rotation rule: after a rotation the secret before keeps signing beside the
 * new one for 24 hours, so a receiver can deploy the new secret before the old one stops.
 */
import type { WebhookEndpoint } from "../../kv/webhooks.ts";
import { decryptSecretText, encryptSecret, type SealBinding } from "../crypto/encryption.ts";
import type { SecretKeys } from "../crypto/secret_keys.ts";

/** How long the secret before a rotation keeps signing. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

function binding(projectId: string): SealBinding {
  return { purpose: "webhook_secret", context: projectId };
}

/** Seals a signing secret of one of the project's endpoints under the current SECRET. */
export function sealSigningSecret(
  keys: SecretKeys,
  projectId: string,
  secret: string,
): Promise<string> {
  return encryptSecret(keys, secret, binding(projectId));
}

/**
 * The secrets that sign a delivery at `now`: the current one, then the one before while its
 * overlap lasts. Null when one cannot be opened (sealed under a SECRET this instance lacks).
 */
export async function signingSecrets(
  keys: SecretKeys,
  endpoint: WebhookEndpoint,
  now: number,
): Promise<string[] | null> {
  const sealed = [endpoint.secretEnc];
  if (endpoint.previous && now < endpoint.previous.until) sealed.push(endpoint.previous.secretEnc);
  try {
    return await Promise.all(
      sealed.map((value) => decryptSecretText(keys, value, binding(endpoint.projectId))),
    );
  } catch {
    return null;
  }
}

/**
 * The secrets of an endpoint after a rotation at `now` to `nextEnc`: the current secret becomes
 * the one before for 24 hours (any older one stops at once), or stops at once with `dropPrevious`
 * (a secret that leaked).
 */
export function rotatedSecrets(
  endpoint: WebhookEndpoint,
  input: { nextEnc: string; now: number; dropPrevious: boolean },
): Pick<WebhookEndpoint, "secretEnc" | "previous" | "rotatedAt"> {
  return {
    secretEnc: input.nextEnc,
    previous: input.dropPrevious
      ? null
      : { secretEnc: endpoint.secretEnc, until: input.now + ROTATION_OVERLAP_MS },
    rotatedAt: input.now,
  };
}
