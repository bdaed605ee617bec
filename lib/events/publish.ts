/** Publishing events: callers write a delivery job and move on; the job worker does the sending. */
import { addDelivery, trimDeliveries } from "../../kv/deliveries.ts";
import { addJob, enqueueJob } from "../../kv/jobs.ts";
import { getProject } from "../../kv/projects.ts";
import type { AppContext } from "../context.ts";
import { log } from "../log.ts";
import { describeAnswer, eventLogFields } from "./deliver.ts";
import { publishToTarget } from "./publish_to_target.ts";
import { answerStatus, isRetryable } from "./messaging_client.ts";
import { publishTargetOf } from "./publish_targets.ts";
import type { ServiceEvent } from "./types.ts";

/**
 * Publishes an event in the background: writes a delivery job and returns (no-op when the
 * project's events are off). Never throws: a lost event must not fail the caller's request.
 */
export async function publishEvent(
  ctx: AppContext,
  projectId: string,
  event: ServiceEvent,
): Promise<void> {
  const fields = { projectId, ...eventLogFields(event) };
  try {
    if (!await ctx.events.targets.get(projectId)) {
      log("debug", "Event not published: events are off", fields);
      return;
    }
    await enqueueJob(ctx.kv, { type: "deliver_event", projectId, event }, {
      runAt: ctx.clock.now(),
    });
    ctx.jobWaker.wake();
  } catch (error) {
    log("error", "Event could not be queued", { ...fields, error });
  }
}

/**
 * Adds the event's delivery job to the caller's atomic operation (so e.g. a status change and its
 * event land together); returns false and adds nothing when events are off. With `id` the job is
 * unique (one more check in `op`). Call `ctx.jobWaker.wake()` after a successful commit.
 */
export async function addEventDelivery(
  ctx: AppContext,
  op: Deno.AtomicOperation,
  projectId: string,
  event: ServiceEvent,
  options: { id?: string } = {},
): Promise<boolean> {
  if (!await ctx.events.targets.get(projectId)) return false;
  addJob(op, { type: "deliver_event", projectId, event }, {
    id: options.id,
    runAt: ctx.clock.now(),
  });
  return true;
}

/** What the dashboard shows after a test ping. */
export type TestPingResult =
  | { ok: true }
  | { ok: false; status: number | null; message: string };

/**
 * Sends a `ping` event now, encoded and posted exactly like any event, and returns the platform's
 * answer. One attempt, not retried: the developer sees a 429 or 5xx as it is and can try again.
 */
export async function sendTestPing(ctx: AppContext, projectId: string): Promise<TestPingResult> {
  // Read fresh: the developer may have saved the settings a moment ago.
  const target = publishTargetOf(await getProject(ctx.kv, projectId));
  if (!target) {
    return {
      ok: false,
      status: null,
      message: "Events are off: save a universe ID and a publishing API key first",
    };
  }
  const event: ServiceEvent = { type: "ping", at: ctx.clock.now() };
  const fields = { projectId, eventType: "ping" };
  const answer = await publishToTarget(ctx, projectId, { target, event });
  if (!answer) {
    log("error", "Test ping not sent: the publishing key cannot be decrypted", fields);
    return { ok: false, status: null, message: "The saved publishing key cannot be decrypted" };
  }
  const status = answerStatus(answer);
  const accepted = answer.kind === "accepted";
  const message = describeAnswer(answer);
  const op = ctx.kv.atomic();
  addDelivery(op, projectId, {
    at: ctx.clock.now(),
    type: "ping",
    outcome: accepted ? "delivered" : isRetryable(answer) ? "gave_up" : "rejected",
    attempts: 1,
    status,
    error: accepted ? null : message,
  });
  await op.commit();
  await trimDeliveries(ctx.kv, projectId);
  log(accepted ? "info" : "warn", "Test ping sent", { ...fields, status, accepted });
  return accepted ? { ok: true } : { ok: false, status, message };
}
