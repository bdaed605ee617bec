/** Watched addresses as the dashboard manages them: validation, limits, add, remove, list. */
import { isAddress } from "@solana/kit";
import {
  createWatch,
  deleteWatch,
  listWatchesByProject,
  type Watch,
  WatchConflictError,
} from "../../kv/watches.ts";
import { getProject } from "../../kv/projects.ts";
import type { AuditInput } from "../../kv/audit_log.ts";
import type { BaseContext } from "../base_context.ts";
import { ApiError, projectNotFound } from "../../core/api_error.ts";
import { log } from "../../core/log.ts";
import { ULID_PATTERN } from "../../core/ids.ts";
import { nameProblem } from "../names.ts";
import { addWatchPoll } from "./job_payloads.ts";

/** Most watches one project may have. */
export const MAX_WATCHES_PER_PROJECT = 20;
/** Longest watch name, in characters. */
export const MAX_WATCH_NAME_LENGTH = 32;

/** What the dashboard shows of a watch. */
export interface WatchView {
  id: string;
  name: string;
  address: string;
  createdAt: number;
  /** When the last successful poll ended; null before the first. */
  polledAt: number | null;
}

/** Validates a watch; throws 400 `invalid_settings` listing each bad field. */
export function validateWatch(input: { name?: unknown; address?: unknown }): {
  name: string;
  address: string;
} {
  const problems: string[] = [];
  const name = typeof input.name === "string" ? input.name.trim() : "";
  const address = typeof input.address === "string" ? input.address.trim() : "";
  if (!name) problems.push("name: is required");
  else if (Array.from(name).length > MAX_WATCH_NAME_LENGTH) {
    problems.push(`name: must be at most ${MAX_WATCH_NAME_LENGTH} characters`);
  } else {
    const problem = nameProblem(name);
    if (problem) problems.push(`name: ${problem}`);
  }
  if (!address) problems.push("address: is required");
  else if (!isAddress(address)) {
    problems.push("address: must be a Solana address (base58, 32 bytes)");
  }
  if (problems.length > 0) throw new ApiError("invalid_settings", problems.join("; "));
  return { name, address };
}

async function requireProject(ctx: BaseContext, projectId: string): Promise<void> {
  const project = await getProject(ctx.kv, projectId);
  if (!project || project.deletedAt !== null) {
    throw projectNotFound();
  }
}

function watchAudit(
  watch: Watch,
  actor: string,
  action: "watch_added" | "watch_removed",
): AuditInput {
  const details = { watchId: watch.id, name: watch.name, address: watch.address };
  return { projectId: watch.projectId, actor, action, details, at: watch.createdAt };
}

function view(watch: Watch): WatchView {
  const { id, name, address, createdAt, polledAt } = watch;
  return { id, name, address, createdAt, polledAt };
}

/**
 * Adds a watch and starts its poll loop; its first poll only records where the history ends. A
 * dashboard member's addition (`actor`) is recorded in the audit log with it.
 */
export async function addWatch(
  ctx: BaseContext,
  projectId: string,
  input: { name?: unknown; address?: unknown },
  options: { actor?: string } = {},
): Promise<WatchView> {
  const { name, address } = validateWatch(input);
  await requireProject(ctx, projectId);
  const { actor } = options;
  try {
    const watch = await createWatch(ctx.kv, {
      projectId,
      name,
      address,
      now: ctx.clock.now(),
      max: MAX_WATCHES_PER_PROJECT,
      addPollJob: (op, watch) => addWatchPoll(op, watch, watch.createdAt),
      audit: actor === undefined ? undefined : (watch) => watchAudit(watch, actor, "watch_added"),
    });
    ctx.jobWaker.wake();
    log("info", "Watch added", { projectId, watch: name, address });
    return view(watch);
  } catch (error) {
    if (!(error instanceof WatchConflictError)) throw error;
    const message = error.reason === "name_taken"
      ? "name: another watch already has this name"
      : error.reason === "address_taken"
      ? `address: already watched${error.other ? ` as ${error.other}` : ""}`
      : `watches: at most ${MAX_WATCHES_PER_PROJECT} per project`;
    throw new ApiError("invalid_settings", message);
  }
}

/**
 * Removes a watch by id and stops its polling (recorded in the audit log for `actor`); returns
 * it, or null when the project has no such watch.
 */
export async function removeWatch(
  ctx: BaseContext,
  projectId: string,
  watchId: string,
  options: { actor?: string } = {},
): Promise<WatchView | null> {
  // The id comes from a path: anything but a watch id is no watch, and never part of a key.
  if (!ULID_PATTERN.test(watchId)) return null;
  const { actor } = options;
  const now = ctx.clock.now();
  const removed = await deleteWatch(ctx.kv, projectId, watchId, {
    audit: actor === undefined
      ? undefined
      : (watch) => ({ ...watchAudit(watch, actor, "watch_removed"), at: now }),
  });
  if (!removed) return null;
  log("info", "Watch removed", { projectId, watchId, watch: removed.name });
  return view(removed);
}

/** Lists a project's watches, oldest first. */
export async function listWatches(ctx: BaseContext, projectId: string): Promise<WatchView[]> {
  return (await listWatchesByProject(ctx.kv, projectId)).map(view);
}
