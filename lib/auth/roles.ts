/**
 * What each role may do in a project's dashboard: every page and action names one capability, and
 * a role has it when it is at least the capability's role (roles are ordered, `ROLES` in
 * `kv/members.ts`: viewer < developer < admin < owner).
 *
 * - viewer: reads every page, changes nothing.
 * - developer: API keys, settings, watches, test pings, webhooks, and policy changes that do not
 *   loosen a limit.
 * - admin: everything but exporting the wallet's key, deleting the project and handing ownership
 *   over: the managed wallet, policy changes that loosen a limit, the team, withdrawals, the
 *   game's Roblox connection (connect, disconnect, install and rotate its API key).
 * - owner (one per project): all of it.
 *
 * `lib/projects/access.ts` is the one function pages and actions call with their capability.
 */
import { type Role, ROLES } from "../../kv/members.ts";
import { ApiError } from "../../core/api_error.ts";

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
  connect: "admin",
  export_key: "owner",
  delete: "owner",
  transfer: "owner",
} as const satisfies Record<string, Role>;

/** Something a page or action needs a role for. */
export type Capability = keyof typeof CAPABILITIES;

/** 403 `insufficient_role`: the member's `role` is below `needed` for `what` (default "This"). */
export function insufficientRole(role: Role, needed: Role, what = "This"): ApiError {
  const who = needed === "owner"
    ? "the project's owner"
    : needed === "admin"
    ? "an admin or the owner"
    : "a developer, an admin or the owner";
  return new ApiError(403, "insufficient_role", `${what} needs ${who}; your role is ${role}`);
}

/** True when `role` has `capability`. */
export function roleAllows(role: Role, capability: Capability): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(CAPABILITIES[capability]);
}
