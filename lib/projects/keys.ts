/** A project's API keys as the dashboard manages them: created within the limit, revoked once. */
import type { AppContext } from "../context.ts";
import { ApiError } from "../../core/api_error.ts";
import { log } from "../../core/log.ts";
import {
  API_KEY_SCOPES,
  type ApiKeyRecord,
  type ApiKeyScope,
  createApiKey,
  KeyLimitError,
  MAX_ACTIVE_KEYS_PER_PROJECT,
  revokeApiKey,
} from "../../kv/api_keys.ts";
import type { ActionFields } from "./fields.ts";
import { unknownFields } from "./fields.ts";
import { invalidSettings } from "../issue_text.ts";
import { memberRule } from "../auth/roles.ts";

/**
 * The scopes a key creation asks for: `scopes`, a JSON list of `read` and `pay`, or text listing
 * them with commas (the form's choice, `read,pay`); every scope when absent. 400
 * `invalid_settings` for another value or none.
 */
export function readKeyScopes(fields: ActionFields): ApiKeyScope[] {
  const unknown = unknownFields(fields, (name) => name === "scopes");
  if (unknown.length > 0) throw invalidSettings(unknown);
  const raw = fields.scopes;
  if (raw === undefined) return [...API_KEY_SCOPES];
  const values: unknown[] = Array.isArray(raw)
    ? raw
    : typeof raw === "string"
    ? raw.split(",").map((v) => v.trim())
    : [raw];
  const scopes = API_KEY_SCOPES.filter((scope) => values.includes(scope));
  if (scopes.length !== new Set(values).size || scopes.length === 0) {
    throw invalidSettings([`scopes: must list one or both of ${API_KEY_SCOPES.join(" and ")}`]);
  }
  return scopes;
}

/**
 * Creates a key with `scopes` for a member of the project; the plaintext is returned this once
 * and never stored. 429 `rate_limited` past the developer's hourly creations, 403
 * `key_limit_reached` at the project's active keys.
 */
export async function createProjectKey(
  ctx: AppContext,
  input: { developer: string; projectId: string; scopes: readonly ApiKeyScope[] },
): Promise<{ record: ApiKeyRecord; plaintext: string }> {
  const { projectId, developer } = input;
  // Revoked keys are kept 30 days: creations are capped too, or a project's list would not be.
  await ctx.abuse.take("key_create", developer);
  try {
    const now = ctx.clock.now();
    const created = await createApiKey(ctx.kv, projectId, now, {
      scopes: input.scopes,
      maker: { address: developer, rule: memberRule("keys") },
      audit: (record) => ({
        projectId,
        actor: developer,
        action: "key_created",
        details: { keyId: record.id, preview: record.preview, scopes: record.scopes },
        at: now,
      }),
    });
    log("info", "API key created", {
      projectId,
      keyId: created.record.id,
      scopes: created.record.scopes,
    });
    return created;
  } catch (error) {
    if (!(error instanceof KeyLimitError)) throw error;
    throw new ApiError(
      "key_limit_reached",
      `The project already has ${MAX_ACTIVE_KEYS_PER_PROJECT} active API keys: revoke one first`,
    );
  }
}

/**
 * Revokes a key of this project for `developer`; 404 `key_not_found` when it is unknown here or
 * already revoked.
 */
export async function revokeProjectKey(
  ctx: AppContext,
  input: { developer: string; projectId: string; keyId: string },
): Promise<void> {
  const { developer, projectId, keyId } = input;
  const now = ctx.clock.now();
  const revoked = keyId.length <= 64 &&
    await revokeApiKey(ctx.kv, projectId, keyId, now, {
      audit: (record) => ({
        projectId,
        actor: developer,
        action: "key_revoked",
        details: { keyId, preview: record.preview },
        at: now,
      }),
    });
  if (!revoked) {
    throw new ApiError("key_not_found", "No active API key with this id in the project");
  }
  // Other instances stop accepting it within their 10 s cache; this one at once.
  ctx.apiKeys.forgetProject(projectId);
  log("info", "API key revoked", { projectId, keyId });
}
