/** A developer's projects as the dashboard changes them: ownership, creation within the limit, deletion. */
import type { Cluster } from "../../core/cluster.ts";
import type { AppContext } from "../context.ts";
import { ApiError, projectNotFound } from "../../core/api_error.ts";
import { log } from "../../core/log.ts";
import {
  createProject,
  deleteProject,
  getProject,
  MAX_PROJECTS_PER_DEVELOPER,
  type Project,
  ProjectLimitError,
} from "../../kv/projects.ts";
import type { ActionFields } from "./fields.ts";
import { invalidSettings, NOT_TEXT, readText } from "./fields.ts";
import { nameProblem } from "../names.ts";

/** Longest project name accepted. */
export const MAX_PROJECT_NAME_LENGTH = 60;
const CLUSTERS: readonly Cluster[] = ["devnet", "mainnet"];

/**
 * Returns the developer's active project; 404 `project_not_found` when it does not exist, was
 * deleted, or belongs to someone else (the same answer, so ids of other projects leak nothing).
 */
export async function getOwnedProject(
  ctx: AppContext,
  developer: string,
  projectId: string,
): Promise<Project> {
  if (projectId.length === 0 || projectId.length > 64) throw projectNotFound();
  const project = await getProject(ctx.kv, projectId);
  if (!project || project.deletedAt !== null || project.createdBy !== developer) {
    throw projectNotFound();
  }
  return project;
}

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
 * Creates a project for the developer from `{ name, cluster }`: 400 `invalid_settings` for a bad
 * field, 403 `project_limit_reached` at the limit. The cluster is fixed from now on.
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
    const project = await createProject(ctx.kv, {
      name,
      cluster: cluster as Cluster,
      createdBy: developer,
      now: ctx.clock.now(),
    });
    log("info", "Project created", { projectId: project.id, cluster: project.cluster, developer });
    return project;
  } catch (error) {
    if (!(error instanceof ProjectLimitError)) throw error;
    throw new ApiError(
      403,
      "project_limit_reached",
      `You already have ${MAX_PROJECTS_PER_DEVELOPER} projects: delete one to create another`,
    );
  }
}

/** Deletes the developer's project: its keys stop working and its linking page shows the no-game page. */
export async function deleteDeveloperProject(
  ctx: AppContext,
  developer: string,
  projectId: string,
): Promise<Project> {
  const project = await getOwnedProject(ctx, developer, projectId);
  await ctx.abuse.take("project_change", developer);
  if (!await deleteProject(ctx.kv, project.id, ctx.clock.now())) throw projectNotFound();
  // Other instances drop the project within their 10 s key cache; this one at once.
  ctx.apiKeys.forgetProject(project.id);
  ctx.events.targets.delete(project.id);
  log("info", "Project deleted", { projectId: project.id, developer });
  return project;
}
