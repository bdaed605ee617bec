/**
 * Projects made before teams had no members: their creator owned them by `createdBy`. Each active
 * project without any member gets its creator as its owner (the member record and its index
 * entry; the creator's owned count already counts it), in one commit checked on the member key,
 * so instances running this together add the owner once. No team change can race it: a project
 * without members has nobody who may change its team.
 *
 * Instances of the previous version create such projects until the last of them stops, so this
 * also runs in the minute sweep (`addRecentProjectOwners`), over the projects created since the
 * time it is given only: a project's id is a ULID of its creation.
 */
import { ulidFloor } from "../../core/ids.ts";
import type { Project } from "../../kv/projects.ts";
import { addFounder, listMembers, memberKey } from "../../kv/members.ts";
import type { MigrationStep, StepResult } from "./step.ts";

/** Makes the creator of every project without members its owner. */
export const addProjectOwners: MigrationStep = ({ kv }) => addOwners(kv, "");

/** The same for the projects created since `since`: what the previous version may still create. */
export function addRecentProjectOwners(
  deps: { kv: Deno.Kv },
  since: number,
): Promise<StepResult> {
  return addOwners(deps.kv, ulidFloor(since));
}

async function addOwners(kv: Deno.Kv, from: string): Promise<StepResult> {
  let changed = 0;
  const iter = kv.list<Project>({ start: ["projects", from], end: ["projects", "\uffff"] });
  for await (const { value: project } of iter) {
    if (project.deletedAt !== null) continue;
    if ((await listMembers(kv, project.id)).length > 0) continue;
    const op = kv.atomic()
      .check({ key: memberKey(project.id, project.createdBy), versionstamp: null });
    addFounder(op, { projectId: project.id, owner: project.createdBy, now: project.createdAt });
    if ((await op.commit()).ok) changed++;
  }
  return { changed, complete: true };
}
