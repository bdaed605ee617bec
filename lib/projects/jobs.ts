/** The handler of project administration's job kind (`job_payloads.ts`): a rotation's last step. */
import type { JobHandler } from "../job_handler.ts";
import type { AppContext } from "../context.ts";
import { log } from "../../core/log.ts";
import type { RevokeGameKeyJob } from "./job_payloads.ts";
import { retireReplacedKey } from "./game_key.ts";

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

/** Handlers of `revoke_game_key`. */
export const projectJobHandlers = { revoke_game_key: runRevokeGameKey };
