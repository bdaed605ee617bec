/** The handler of project administration's job kind (`job_payloads.ts`): a rotation's last step. */
import type { JobHandler } from "../job_handler.ts";
import type { AppContext } from "../context.ts";
import { log } from "../../core/log.ts";
import type { RevokeGameKeyJob } from "./job_payloads.ts";
import { revokeApiKey } from "../../kv/api_keys.ts";
import { updateRobloxConnection } from "../../kv/roblox_tokens.ts";

/** Revokes the key a rotation replaced; idempotent (a key revoked already is left as it is). */
const runRevokeGameKey: JobHandler<RevokeGameKeyJob, AppContext> = async (run) => {
  const revoked = await retireReplacedKey(run.ctx, run.payload);
  log("info", "Replaced game key revoked after the servers' bleed-off", {
    ...run.logFields,
    keyId: run.payload.keyId,
    revoked,
  });
  return { kind: "done" };
};

/** The `revoke_game_key` job's effect: revokes the replaced key, and ends the rotation. */
async function retireReplacedKey(
  ctx: AppContext,
  job: { projectId: string; keyId: string; rotatedBy: string },
): Promise<boolean> {
  const now = ctx.clock.now();
  const revoked = await revokeApiKey(ctx.kv, job.projectId, job.keyId, now, {
    audit: (record) => ({
      projectId: job.projectId,
      actor: job.rotatedBy,
      action: "game_key_retired",
      details: { keyId: job.keyId, preview: record.preview },
      at: now,
    }),
  });
  ctx.apiKeys.forgetProject(job.projectId);
  await updateRobloxConnection(ctx.kv, job.projectId, (project) => {
    const connection = project.settings.robloxConnection;
    if (connection?.gameKey?.replacing?.keyId !== job.keyId) return null;
    const gameKey = { ...connection.gameKey, replacing: null };
    return {
      ...project,
      settings: { ...project.settings, robloxConnection: { ...connection, gameKey } },
    };
  });
  return revoked;
}

/** Handlers of `revoke_game_key`. */
export const projectJobHandlers = { revoke_game_key: runRevokeGameKey };
