/** A developer's projects as the dashboard changes them: creation within the limit of owned projects, deletion. */
import type { Cluster } from "../../core/cluster.ts";
import type { AppContext } from "../context.ts";
import { ApiError, projectNotFound } from "../../core/api_error.ts";
import { log } from "../../core/log.ts";
import {
  createProject,
  deleteProject,
  type Project,
  ProjectLimitError,
} from "../../kv/projects.ts";
import { MAX_PROJECTS_PER_DEVELOPER } from "../../kv/members.ts";
import type { ActionFields } from "./fields.ts";
import { NOT_TEXT, readText } from "./fields.ts";
import { invalidSettings } from "../issue_text.ts";
import { disconnect } from "../roblox/connection.ts";
import { nameProblem } from "../names.ts";
import { authorizeProject } from "./access.ts";

/** Longest project name accepted. */
export const MAX_PROJECT_NAME_LENGTH = 60;
const CLUSTERS: readonly Cluster[] = ["devnet", "mainnet"];

/** Checks a project name; returns the trimmed name or pushes a problem. */
export function validateProjectName(value: unknown, problems: string[]): string | undefined {
  const name = readText(value);
  if (name === NOT_TEXT) problems.push("name: must be text");
  else if (name === undefined || name === null || name === "") {
    problems.push("name: must not be empty");
  } else if (name.length > MAX_PROJECT_NAME_LENGTH) {
    problems.push(`name: must be at most ${MAX_PROJECT_NAME_LENGTH} characters`);
  } else {
    const problem = nameProblem(name);
    if (!problem) return name;
    problems.push(`name: ${problem}`);
  }
  return undefined;
}

/**
 * Creates a project owned by the developer from `{ name, cluster }`: 400 `invalid_settings` for a
 * bad field, 403 `project_limit_reached` when they own the most allowed. The cluster is fixed.
 */
export async function createDeveloperProject(
  ctx: AppContext,
  developer: string,
  fields: ActionFields,
): Promise<Project> {
  const problems: string[] = [];
  const name = validateProjectName(fields.name, problems);
  const cluster = readText(fields.cluster);
  if (!CLUSTERS.includes(cluster as Cluster)) problems.push("cluster: must be devnet or mainnet");
  if (problems.length > 0 || name === undefined) throw invalidSettings(problems);
  await ctx.abuse.take("project_change", developer);
  try {
    const now = ctx.clock.now();
    const project = await createProject(ctx.kv, {
      name,
      cluster: cluster as Cluster,
      createdBy: developer,
      now,
      audit: { actor: developer, action: "project_created", details: { name, cluster }, at: now },
    });
    log("info", "Project created", { projectId: project.id, cluster: project.cluster, developer });
    return project;
  } catch (error) {
    if (!(error instanceof ProjectLimitError)) throw error;
    throw new ApiError(
      "project_limit_reached",
      `You already own ${MAX_PROJECTS_PER_DEVELOPER} projects: delete one (or hand it over) to create another`,
    );
  }
}

/**
 * Deletes a project its owner asks to delete, naming it as typed (400 `invalid_settings` for
 * another name: a deletion cannot be undone): a game connected through Roblox is disconnected
 * (its grant revoked), its keys stop working, its linking page shows the no-game page and it
 * leaves every member's list.
 */
export async function deleteDeveloperProject(
  ctx: AppContext,
  developer: string,
  projectId: string,
  typedName: unknown,
): Promise<Project> {
  const { project } = await authorizeProject(ctx, { developer, projectId, can: "delete" });
  if (typeof typedName !== "string" || typedName.trim() !== project.name) {
    throw invalidSettings([`name: type the project's name, ${project.name}, to delete it`]);
  }
  await ctx.abuse.take("project_change", developer);
  // A connected game's grant would outlive the project: revoked at Roblox first (502, nothing
  // deleted, when Roblox does not confirm it).
  await disconnect(ctx, { project, developer });
  const now = ctx.clock.now();
  const deleted = await deleteProject(ctx.kv, project.id, now, {
    audit: {
      projectId: project.id,
      actor: developer,
      action: "project_deleted",
      details: { name: project.name },
      at: now,
    },
  });
  if (!deleted) throw projectNotFound();
  // Other instances drop the project within their 10 s key cache; this one at once.
  ctx.apiKeys.forgetProject(project.id);
  ctx.events.targets.delete(project.id);
  log("info", "Project deleted", { projectId: project.id, developer });
  return project;
}
