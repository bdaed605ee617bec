/**
 * Projects made before teams had no members: their creator owned them by `createdBy`. Each active
 * project without any member gets its creator as its owner (`addMissingFounder`, which instances
 * running this together do once). The dashboard does the same for one project its creator asks
 * for (`lib/projects/access.ts`), so such a project is never answered as missing to them.
 *
 * Instances of the previous version create such projects until the last of them stops, so this
 * also runs in the minute sweep (`addRecentProjectOwners`), over the projects created since the
 * time it is given only: a project's id is a ULID of its creation.
 */
import { ulidFloor } from "../../core/ids.ts";
import type { Project } from "../../kv/projects.ts";
import { addMissingFounder } from "../../kv/members.ts";
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
    if (project.deletedAt === null && await addMissingFounder(kv, project)) changed++;
  }
  return { changed, complete: true };
}
