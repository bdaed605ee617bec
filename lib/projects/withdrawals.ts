/**
 * What goes with a member's role (the rule is `lib/auth/roles.ts`'s): which of the things they
 * made a removal or a demotion withdraws (`withdrawnWith`), how forms name a key or an endpoint
 * the actor keeps (`holdingRef`), and the log line once the change committed.
 */
import type { AppContext } from "../context.ts";
import { log } from "../../core/log.ts";
import type { Holding } from "../../kv/member_holdings.ts";
import type { MemberChange } from "../../kv/member_changes.ts";
import type { Role } from "../../kv/members.ts";
import { HELD_WITH, mayGrant, roleAllows } from "../auth/roles.ts";

const KEPT_REF = /^(key|endpoint):[0-9A-Z]{26}$/;

/** The refs in `keep` (one or a list; none when absent); null when one names no key or endpoint. */
export function readKeepRefs(keep: unknown): Set<string> | null {
  const refs = keep === undefined ? [] : [keep].flat();
  if (refs.some((ref) => typeof ref !== "string" || !KEPT_REF.test(ref))) return null;
  return new Set(refs as string[]);
}

/** A holding's name in forms and logs: `key:<id>`, `endpoint:<id>`, `invitation:<address>`. */
export function holdingRef(holding: Holding): string {
  if (holding.kind === "key") return `key:${holding.key.id}`;
  if (holding.kind === "endpoint") return `endpoint:${holding.endpoint.id}`;
  return `invitation:${holding.invitation.address}`;
}

/**
 * True when a member left with `role` (null: removed) loses `holding`: an invitation whose role
 * they may no longer grant, a key or endpoint whose capability they lose unless `keep` names it.
 */
export function withdrawnWith(
  role: Role | null,
  keep: ReadonlySet<string> = new Set(),
): (holding: Holding) => boolean {
  return (holding) => {
    if (holding.kind === "invitation") return !mayGrant(role, holding.invitation.role);
    const held = role !== null && roleAllows(role, HELD_WITH[holding.kind]);
    return !held && !keep.has(holdingRef(holding));
  };
}

/**
 * Once the change committed: this instance forgets withdrawn keys at once (their records refuse
 * them everywhere, `lib/tx/request/sender.ts`), and one log line says what went.
 */
export function noteWithdrawn(ctx: AppContext, projectId: string, change: MemberChange): void {
  if (change.withdrawn.length === 0) return;
  if (change.withdrawn.some((h) => h.kind === "key")) ctx.apiKeys.forgetProject(projectId);
  log("info", "Member's keys, endpoints and invitations withdrawn", {
    projectId,
    address: change.member.address,
    withdrawn: change.withdrawn.map(holdingRef),
  });
}
