/**
 * What each role may do in a project's dashboard: every page and action names one capability, and
 * a role has it when it is at least the capability's role (roles are ordered, `ROLES` in
 * `kv/members.ts`: viewer < developer < admin < owner).
 *
 * - viewer: reads every page, changes nothing.
 * - developer: API keys, settings, watches, test pings, webhooks, and policy changes that do not
 *   loosen a limit.
 * - admin: everything but exporting the wallet's key, deleting the project and handing ownership
 *   over: the managed wallet, policy changes that loosen a limit, the team, withdrawals,
 *   cancelling rewards held for players, the game's Roblox connection (connect, disconnect, install and rotate its API key).
 * - owner (one per project): all of it.
 *
 * `lib/projects/access.ts` is the one function pages and actions call with their capability.
 *
 * What a member makes lasts only while they could make it again: a key while their role has
 * `keys`, a webhook endpoint while it has `webhooks`, an invitation while they may grant its role
 * (`mayGrant`). Removing or demoting a member withdraws the rest in the same commit
 * (`lib/projects/withdrawals.ts`), unless the actor keeps a key or an endpoint. The commit of
 * every team change, key creation and endpoint addition checks its actor's entry (`memberRule`).
 */
import { type MemberRule, type Role, ROLES } from "../../kv/members.ts";
import { ApiError, projectNotFound } from "../../core/api_error.ts";

/** Each capability and the weakest role that has it. */
export const CAPABILITIES = {
  view: "viewer",
  keys: "developer",
  settings: "developer",
  policy: "developer",
  watches: "developer",
  ping: "developer",
  webhooks: "developer",
  loosen_policy: "admin",
  wallet: "admin",
  team: "admin",
  withdraw: "admin",
  cancel_rewards: "admin",
  connect: "admin",
  export_key: "owner",
  delete: "owner",
  transfer: "owner",
} as const satisfies Record<string, Role>;

/** Something a page or action needs a role for. */
export type Capability = keyof typeof CAPABILITIES;

/** The capability a member must keep to keep what they made of each kind. */
export const HELD_WITH = {
  key: "keys",
  endpoint: "webhooks",
} as const satisfies Record<string, Capability>;

/** 403 `insufficient_role`: the member's `role` is below `needed` for `what` (default "This"). */
export function insufficientRole(role: Role, needed: Role, what = "This"): ApiError {
  const who = needed === "owner"
    ? "the project's owner"
    : needed === "admin"
    ? "an admin or the owner"
    : "a developer, an admin or the owner";
  return new ApiError("insufficient_role", `${what} needs ${who}; your role is ${role}`);
}

/** True when `role` has `capability`. */
export function roleAllows(role: Role, capability: Capability): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(CAPABILITIES[capability]);
}

/** True when a member with `role` (null: no member) may give `granted` to someone: invite or promote. */
export function mayGrant(role: Role | null, granted: Role): boolean {
  return role !== null && roleAllows(role, "team") && ROLES.indexOf(role) >= ROLES.indexOf(granted);
}

/**
 * The rule a commit applies to the acting member's entry as it reads it: still a member (else 404
 * `project_not_found`, as `authorizeProject` answers) whose role has `can` and, when given, may
 * grant `grants` (else 403 `insufficient_role`). So a member removed or demoted while their change
 * was on its way changes nothing.
 */
export function memberRule(can: Capability, grants?: Role): MemberRule {
  return (member) => {
    if (!member) throw projectNotFound();
    if (!roleAllows(member.role, can)) throw insufficientRole(member.role, CAPABILITIES[can]);
    if (grants && !mayGrant(member.role, grants)) throw insufficientRole(member.role, grants);
  };
}
