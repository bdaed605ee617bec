/** The `deliver_event` and `publish_batch` job handlers: the background half of publishing. */
import { addDelivery, type DeliveryOutcome, trimDeliveries } from "../../kv/deliveries.ts";
import { addEventJob, type DeliverEventJob, type PublishBatchJob } from "./job_payloads.ts";
import type { JobOutcome, JobRun } from "../job_handler.ts";
import type { EventContext } from "./runtime.ts";
import { log } from "../../core/log.ts";
import { must } from "../../core/must.ts";
import { publishToTarget } from "./publish_to_target.ts";
import { encodeEventMessage } from "./message.ts";
import { answerStatus, isRetryable, type PublishAnswer } from "./messaging_client.ts";
import type { RecordedEvent } from "../../core/events.ts";
import { publishTargetFor } from "./settings.ts";

/** Attempts per event, the first included. */
export const MAX_DELIVERY_ATTEMPTS = 4;
/** Waits before the 2nd, 3rd and 4th attempts. */
export const RETRY_DELAYS_MS = [500, 1_000, 2_000] as const;

/** Fields identifying an event in logs (type and id, and the tx or reward key, or watch name). */
function eventLogFields(event: RecordedEvent): Record<string, unknown> {
  const fields: Record<string, unknown> = { eventType: event.type, eventId: event.id };
  if ("key" in event) fields.key = event.key;
  if (event.type === "watch") fields.watch = event.name;
  return fields;
}

/** Describes an answer for logs and the delivery log, without echoing anything secret. */
export function describeAnswer(answer: PublishAnswer): string {
  switch (answer.kind) {
    case "accepted":
      return "Accepted";
    case "http":
      return `The messaging service answered HTTP ${answer.status}`;
    case "timeout":
      return "The messaging service did not answer in time";
    case "network":
      return `Could not reach the messaging service: ${answer.error}`;
    case "no_credential":
      return answer.reason;
  }
}

/** Runs one publish attempt of a `deliver_event` job and logs the delivery when it ends. */
export async function runDeliverEvent(
  run: JobRun<DeliverEventJob, EventContext>,
): Promise<JobOutcome> {
  const { ctx, payload, attempt } = run;
  const { projectId, event } = payload;
  const fields = { ...run.logFields, ...eventLogFields(event), attempt };
  const finish = (outcome: DeliveryOutcome, status: number | null, error: string | null) => {
    addDelivery(run.op, projectId, {
      at: ctx.clock.now(),
      type: event.type,
      eventId: event.id,
      outcome,
      attempts: attempt,
      status,
      error,
    });
    // Trimming reads the whole log, so it runs on about one delivery in ten.
    const afterCommit = Math.random() < 0.1 ? () => trimDeliveries(ctx.kv, projectId) : undefined;
    return afterCommit;
  };

  const target = await publishTargetFor(ctx, projectId);
  if (!target) {
    log("info", "Event not published: events are off", fields);
    return { kind: "done", afterCommit: finish("skipped", null, "Events are off") };
  }
  const answer = await publishToTarget(ctx, projectId, {
    target,
    message: encodeEventMessage(event),
  });
  const status = answerStatus(answer);
  if (answer.kind === "accepted") {
    log("info", "Event published", { ...fields, status });
    return { kind: "done", afterCommit: finish("delivered", status, null) };
  }
  const reason = describeAnswer(answer);
  if (isRetryable(answer) && attempt < MAX_DELIVERY_ATTEMPTS) {
    log("warn", "Event publish failed; will retry", { ...fields, status, reason });
    const delay = must(RETRY_DELAYS_MS[attempt - 1], `retry delay after attempt ${attempt}`);
    return { kind: "retry", at: ctx.clock.now() + delay, error: reason };
  }
  const outcome = isRetryable(answer) ? "gave_up" : "rejected";
  log("error", "Event dropped", { ...fields, status, reason, outcome });
  return { kind: "done", afterCommit: finish(outcome, status, reason) };
}

/** Fans a batch of recorded events out into one `deliver_event` job each, in the batch job's own commit. */
export function runPublishBatch(
  run: JobRun<PublishBatchJob, EventContext>,
): Promise<JobOutcome> {
  for (const event of run.payload.events) {
    addEventJob(run.op, { type: "deliver_event", projectId: run.payload.projectId, event }, {
      runAt: run.now,
    });
  }
  return Promise.resolve({ kind: "done", afterCommit: () => run.ctx.jobWaker.wake() });
}
