/** A project's API keys as the dashboard manages them: created within the limit, revoked once. */
import type { AppContext } from "../context.ts";
import { ApiError } from "../../core/api_error.ts";
import { log } from "../../core/log.ts";
import {
  type ApiKeyRecord,
  createApiKey,
  KeyLimitError,
  MAX_ACTIVE_KEYS_PER_PROJECT,
  revokeApiKey,
} from "../../kv/api_keys.ts";

/**
 * Creates a key for the developer's project; the plaintext is returned this once and never
 * stored. 429 `rate_limited` past the developer's hourly creations, 403 `key_limit_reached` at the
 * project's active keys.
 */
export async function createProjectKey(
  ctx: AppContext,
  input: { developer: string; projectId: string },
): Promise<{ record: ApiKeyRecord; plaintext: string }> {
  const { projectId } = input;
  // Revoked keys are kept 30 days: creations are capped too, or a project's list would not be.
  await ctx.abuse.take("key_create", input.developer);
  try {
    const created = await createApiKey(ctx.kv, projectId, ctx.clock.now());
    log("info", "API key created", { projectId, keyId: created.record.id });
    return created;
  } catch (error) {
    if (!(error instanceof KeyLimitError)) throw error;
    throw new ApiError(
      403,
      "key_limit_reached",
      `The project already has ${MAX_ACTIVE_KEYS_PER_PROJECT} active API keys: revoke one first`,
    );
  }
}

/** Revokes a key of this project; 404 `key_not_found` when it is unknown here or already revoked. */
export async function revokeProjectKey(
  ctx: AppContext,
  projectId: string,
  keyId: string,
): Promise<void> {
  const revoked = keyId.length <= 64 &&
    await revokeApiKey(ctx.kv, projectId, keyId, ctx.clock.now());
  if (!revoked) {
    throw new ApiError(404, "key_not_found", "No active API key with this id in the project");
  }
  // Other instances stop accepting it within their 10 s cache; this one at once.
  ctx.apiKeys.forgetProject(projectId);
  log("info", "API key revoked", { projectId, keyId });
}
