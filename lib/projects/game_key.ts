/**
 * The API key the dashboard installs into a connected game's secrets, and its rotation.
 *
 * Install: a key is created (`keys.ts`), sealed for the universe's public key
 * (`lib/crypto/sealed_box.ts`) and written as the secret `blocklink` (or the id chosen), created
 * or updated, with `domain` the service's host. Its plaintext exists only in this call: never
 * stored, shown or logged. If the secret cannot be written the new key is revoked at once, so a
 * failed install leaves the game with the key it had.
 *
 * Rotation, one guided flow whose state is `gameKey.replacing`: (1) install a new key under the
 * same secret id; (2) restart the servers with the bleed-off minutes chosen (servers read secrets
 * only when they start); (3) the `revoke_game_key` job revokes the old key once the bleed-off
 * and a minute more have passed, when no server can still be using it. A restart that fails
 * keeps the old key valid; rotating again resumes at the restart.
 */
import { base64 } from "@scure/base";
import { ApiError } from "../../core/api_error.ts";
import { log } from "../../core/log.ts";
import { apiKeyKey, type ApiKeyRecord, type ApiKeyScope, revokeApiKey } from "../../kv/api_keys.ts";
import type { InstalledGameKey, Project, RobloxConnection } from "../../kv/projects.ts";
import { updateRobloxConnection } from "../../kv/roblox_tokens.ts";
import { sealBox } from "../crypto/sealed_box.ts";
import { fetchSecretsPublicKey, putSecret, restartServers } from "../roblox/open_cloud.ts";
import type { AppContext } from "../context.ts";
import { createProjectKey } from "./keys.ts";
import { addRevokeGameKeyJob } from "./job_payloads.ts";

/** The secret id the Luau SDK reads by default. */
export const DEFAULT_GAME_SECRET_ID = "blocklink";
/** Bleed-off minutes Roblox accepts. */
export const BLEED_OFF_MINUTES = { min: 1, max: 60, default: 10 } as const;
/** Time after the bleed-off before the old key is revoked. */
const REVOKE_MARGIN_MS = 60_000;
const SECRET_ID = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

type ConnectedGame = RobloxConnection & { universeId: string };

function connectedGame(project: Project): ConnectedGame {
  const connection = project.settings.robloxConnection;
  if (!connection || connection.status !== "active" || !connection.universeId) {
    throw new ApiError(
      "not_connected",
      connection?.status === "lost"
        ? "The Roblox connection was lost: reconnect the game first"
        : "Connect the game with Roblox and choose its experience first",
    );
  }
  return connection as ConnectedGame;
}

/** Validates a secret id: letters, digits and _, 1 to 64, not starting with a digit. */
export function validateSecretId(secretId: string): string {
  if (!SECRET_ID.test(secretId)) {
    throw new ApiError(
      "invalid_settings",
      "secretId: must be 1 to 64 letters, digits or _, not starting with a digit",
    );
  }
  return secretId;
}

/** Installs a new API key into the connected game's secrets; 409 when one is installed already. */
export async function installGameKey(
  ctx: AppContext,
  input: { project: Project; developer: string; scopes: readonly ApiKeyScope[]; secretId: string },
): Promise<InstalledGameKey> {
  const game = connectedGame(input.project);
  if (game.gameKey) {
    throw new ApiError(
      "game_key_installed",
      "The game already has a key installed by the dashboard: rotate it instead",
    );
  }
  return await installNewKey(ctx, { ...input, game, replacing: null });
}

/**
 * Runs the rotation's next steps: installs a new key (unless one is already waiting for its
 * restart), restarts the servers with `bleedOffMinutes`, and schedules the old key's revocation.
 */
export async function rotateGameKey(
  ctx: AppContext,
  input: { project: Project; developer: string; bleedOffMinutes: number },
): Promise<InstalledGameKey> {
  const { project, developer, bleedOffMinutes } = input;
  const game = connectedGame(project);
  if (
    !Number.isInteger(bleedOffMinutes) || bleedOffMinutes < BLEED_OFF_MINUTES.min ||
    bleedOffMinutes > BLEED_OFF_MINUTES.max
  ) {
    throw new ApiError("invalid_settings", "bleedOffMinutes: must be a whole number from 1 to 60");
  }
  let key = game.gameKey;
  if (!key) throw new ApiError("no_game_key", "Install a key in the game first");
  if (key.replacing?.restartedAt) {
    throw new ApiError(
      "rotation_in_progress",
      "The servers were restarted already: the old key is revoked once they have moved",
    );
  }
  if (!key.replacing) {
    const old = (await ctx.kv.get<ApiKeyRecord>(apiKeyKey(project.id, key.keyId))).value;
    key = await installNewKey(ctx, {
      project,
      developer,
      game,
      scopes: old?.scopes ?? ["read", "pay"],
      secretId: key.secretId,
      replacing: key.keyId,
    });
  }
  const oldKeyId = key.replacing!.keyId;
  await restartServers(ctx, project.id, { universeId: game.universeId, bleedOffMinutes });
  const restartedAt = ctx.clock.now();
  const revokeAt = restartedAt + bleedOffMinutes * 60_000 + REVOKE_MARGIN_MS;
  const saved = await updateGameKey(
    ctx,
    project.id,
    game.grantId,
    (current) =>
      current?.keyId === key!.keyId && current.replacing?.restartedAt === null
        ? { ...current, replacing: { keyId: oldKeyId, restartedAt, revokeAt } }
        : null,
    {
      audit: {
        actor: developer,
        action: "servers_restarted",
        details: {
          universeId: game.universeId,
          bleedOffMinutes,
          revokeAt,
          replacedKeyId: oldKeyId,
        },
      },
      beforeCommit: (op) =>
        addRevokeGameKeyJob(op, {
          type: "revoke_game_key",
          projectId: project.id,
          keyId: oldKeyId,
          rotatedBy: developer,
        }, { runAt: revokeAt }),
    },
  );
  if (!saved) {
    throw new ApiError("rotation_in_progress", "The rotation changed meanwhile: reload the page");
  }
  log("info", "Game servers restarted for a key rotation", {
    projectId: project.id,
    universeId: game.universeId,
    bleedOffMinutes,
    revokeAt,
  });
  return saved;
}

async function installNewKey(
  ctx: AppContext,
  input: {
    project: Project;
    developer: string;
    game: ConnectedGame;
    scopes: readonly ApiKeyScope[];
    secretId: string;
    replacing: string | null;
  },
): Promise<InstalledGameKey> {
  const { project, developer, game } = input;
  const secretId = validateSecretId(input.secretId);
  const publicKey = await fetchSecretsPublicKey(ctx, project.id, game.universeId);
  const { record, plaintext } = await createProjectKey(ctx, {
    developer,
    projectId: project.id,
    scopes: input.scopes,
  });
  let outcome: "created" | "updated";
  try {
    outcome = await putSecret(ctx, project.id, {
      universeId: game.universeId,
      secret: {
        id: secretId,
        sealed: base64.encode(sealBox(plaintext, publicKey.key)),
        keyId: publicKey.keyId,
        domain: new URL(ctx.config.baseUrl).hostname,
      },
    });
  } catch (error) {
    // Never reached the game: a key nobody holds is revoked at once.
    const now = ctx.clock.now();
    await revokeApiKey(ctx.kv, project.id, record.id, now, {
      audit: () => ({
        projectId: project.id,
        actor: developer,
        action: "key_revoked",
        details: { keyId: record.id, preview: record.preview, reason: "not installed in the game" },
        at: now,
      }),
    });
    ctx.apiKeys.forgetProject(project.id);
    throw error;
  }
  const installedAt = ctx.clock.now();
  const installed: InstalledGameKey = {
    keyId: record.id,
    preview: record.preview,
    secretId,
    installedAt,
    installedBy: developer,
    replacing: input.replacing
      ? { keyId: input.replacing, restartedAt: null, revokeAt: null }
      : null,
  };
  await updateGameKey(ctx, project.id, game.grantId, () => installed, {
    audit: {
      actor: developer,
      action: "game_key_installed",
      details: {
        keyId: record.id,
        preview: record.preview,
        secretId,
        universeId: game.universeId,
        secret: outcome,
      },
    },
  });
  log("info", "API key installed in the game", {
    projectId: project.id,
    universeId: game.universeId,
    keyId: record.id,
    secretId,
    secret: outcome,
  });
  return installed;
}

// Writes the connection's game key (while it is still the grant `grantId`) with its audit entry.
async function updateGameKey(
  ctx: AppContext,
  projectId: string,
  grantId: string,
  change: (current: InstalledGameKey | null) => InstalledGameKey | null,
  options: {
    audit: {
      actor: string;
      action: "game_key_installed" | "servers_restarted";
      details: Record<string, unknown>;
    };
    beforeCommit?: (op: Deno.AtomicOperation) => void;
  },
): Promise<InstalledGameKey | null> {
  let written: InstalledGameKey | null = null;
  const at = ctx.clock.now();
  await updateRobloxConnection(ctx.kv, projectId, (project) => {
    const connection = project.settings.robloxConnection;
    if (connection?.grantId !== grantId) return null;
    written = change(connection.gameKey);
    if (!written) return null;
    return {
      ...project,
      settings: { ...project.settings, robloxConnection: { ...connection, gameKey: written } },
    };
  }, {
    audit: () => ({ projectId, ...options.audit, at }),
    beforeCommit: options.beforeCommit,
  });
  return written;
}
