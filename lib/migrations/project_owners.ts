/**
 * Projects made before teams had no members: their creator owned them by `createdBy`. Each active
 * project without any member gets its creator as its owner (the member record and its index
 * entry; the creator's owned count already counts it), in one commit checked on the member key,
 * so instances running this together add the owner once. No team change can race it: a project
 * without members has nobody who may change its team.
 *
 * Instances of the previous version create such projects until the last of them stops, so this
 * also runs in the minute sweep. A project's id is a ULID of its creation, so after one complete
 * pass (recorded with its start time) a later pass only reads projects created from 10 minutes
 * before that start on (a margin for the clocks of other instances).
 */
import { ulidFloor } from "../../core/ids.ts";
import type { Project } from "../../kv/projects.ts";
import { addFounder, listMembers, memberKey } from "../../kv/members.ts";
import type { MigrationStep } from "./step.ts";

const PASS_KEY: Deno.KvKey = ["store_migration_passes", "project_owners"];
const CLOCK_MARGIN_MS = 10 * 60_000;

/** Makes the creator of every project without members its owner. */
export const addProjectOwners: MigrationStep = async ({ kv, clock }) => {
  const started = clock.now();
  const pass = await kv.get<{ startedAt: number }>(PASS_KEY);
  const from = pass.value ? ulidFloor(pass.value.startedAt - CLOCK_MARGIN_MS) : "";
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
  await kv.set(PASS_KEY, { startedAt: started });
  return { changed, complete: true };
};
