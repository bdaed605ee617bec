/**
 * The transaction policy saved from the dashboard: a developer may tighten any limit, but a change
 * that loosens one (`policyLoosenings`) needs an admin or the owner. The change is judged on the
 * policy it replaces, which the commit checks, and recorded in the audit log with the policy
 * before and after.
 */
import type { AppContext } from "../context.ts";
import { log } from "../../core/log.ts";
import type { TxPolicy } from "../../kv/policy.ts";
import { policyLoosenings, savePolicy } from "../tx/request/policy.ts";
import { insufficientRole, roleAllows } from "../auth/roles.ts";
import type { ProjectAccess } from "./access.ts";
import { policyInputOf } from "./policy_form.ts";
import type { ActionFields } from "./fields.ts";

/** Saves the policy posted by a member with `access`; 403 `insufficient_role` for a loosening below admin. */
export async function saveDashboardPolicy(
  ctx: AppContext,
  access: ProjectAccess,
  fields: ActionFields,
): Promise<TxPolicy> {
  const { project, developer, role } = access;
  const now = ctx.clock.now();
  const policy = await savePolicy(ctx.kv, project.id, policyInputOf(fields), {
    guard: (before, after) => {
      const loosened = policyLoosenings(before, after);
      if (loosened.length === 0 || roleAllows(role, "loosen_policy")) return;
      throw insufficientRole(role, "admin", `Loosening a limit (${loosened.join(", ")})`);
    },
    audit: (before, after) => ({
      projectId: project.id,
      actor: developer,
      action: "policy_saved",
      details: { before, after },
      at: now,
    }),
  });
  ctx.apiKeys.forgetProject(project.id);
  log("info", "Transaction policy saved", {
    projectId: project.id,
    solEnabled: policy.maxSolPerTransfer !== null,
    mints: policy.allowedMints.length,
  });
  return policy;
}
