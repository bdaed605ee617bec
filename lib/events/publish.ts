/** Test pings: one event sent at once, the same way the job worker publishes every other event. */
import { addDelivery, trimDeliveries } from "../../kv/deliveries.ts";
import { getProject } from "../../kv/projects.ts";
import type { EventContext } from "./runtime.ts";
import { log } from "../../core/log.ts";
import { must } from "../../core/must.ts";
import { describeAnswer } from "./deliver.ts";
import { recordEvents } from "./record.ts";
import { publishToTarget } from "./publish_to_target.ts";
import { encodeEventMessage } from "./message.ts";
import { answerStatus, isRetryable } from "./messaging_client.ts";
import { publishTargetOf } from "./settings.ts";
import { takePingRoom } from "./ping_room.ts";

/** What the dashboard shows after a test ping. */
export type TestPingResult =
  | { ok: true }
  | { ok: false; status: number | null; message: string };

/**
 * Sends a `ping` event now, encoded and posted exactly like any event, and returns the platform's
 * answer. One attempt, not retried: the developer sees a 429 or 5xx as it is and can try again.
 * A project with a cap on messages a minute counts the ping toward it, and is refused while the
 * cap is full (`ping_room.ts`).
 * The ping a dashboard member (`actor`) sends is recorded in the audit log with its event.
 */
export async function sendTestPing(
  ctx: EventContext,
  projectId: string,
  options: { actor?: string } = {},
): Promise<TestPingResult> {
  // Read fresh: the developer may have saved the settings a moment ago.
  const target = publishTargetOf(await getProject(ctx.kv, projectId));
  if (!target) {
    return {
      ok: false,
      status: null,
      message: "Events are off: save a universe ID and a publishing API key first",
    };
  }
  if (target.messagesPerMinute !== null) {
    const room = await takePingRoom(ctx, projectId, { cap: target.messagesPerMinute });
    if (!room.ok) {
      log("info", "Test ping refused: the cap on messages a minute is full", { projectId });
      return { ok: false, status: null, message: room.message };
    }
  }
  // The ping is recorded in the feed first, so its message carries its id like any event.
  const at = ctx.clock.now();
  const { actor } = options;
  const recorded = await recordEvents(ctx, projectId, [{ type: "ping", at }], {
    deliver: false,
    audit: actor === undefined ? undefined : { projectId, actor, action: "ping_sent", at },
  });
  const event = must(recorded[0], "the recorded ping");
  const fields = { projectId, eventType: "ping", eventId: event.id };
  const answer = await publishToTarget(ctx, projectId, {
    target,
    message: encodeEventMessage(event),
  });
  const status = answerStatus(answer);
  const accepted = answer.kind === "accepted";
  const message = describeAnswer(answer);
  const op = ctx.kv.atomic();
  addDelivery(op, projectId, {
    at: ctx.clock.now(),
    type: "ping",
    eventId: event.id,
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
