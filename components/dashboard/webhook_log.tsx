/**
 * The webhook delivery log: one row per delivery of an event to an endpoint, newest first, with a
 * filter (a GET form), "Load more" (a link) and a Replay button per row (a form post).
 */
import type { VNode } from "preact";
import type { Project } from "../../kv/projects.ts";
import type { WebhookDelivery, WebhookDeliveryStatus } from "../../kv/webhook_deliveries.ts";
import type { WebhookEndpointView } from "../../lib/webhooks/endpoints.ts";
import type { Flash } from "../../http/flash.ts";
import { FlashFor } from "./frame.tsx";
import { formatTime } from "./format.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { Cell, ListHead } from "./cell.tsx";

/** The statuses a delivery can be filtered by, in the order the filter lists them. */
export const WEBHOOK_LOG_STATUSES: readonly WebhookDeliveryStatus[] = [
  "failed",
  "retrying",
  "delivered",
  "queued",
];

/** One page of the log with its filter. */
export interface WebhookLogData {
  deliveries: WebhookDelivery[];
  /** Filters: null shows every endpoint, every status. */
  endpointId: string | null;
  status: WebhookDeliveryStatus | null;
  /** The delivery this page starts after (null: the newest). */
  after: string | null;
  /** Cursor of the next, older page; null at the oldest. */
  next: string | null;
}

const STATUS_BADGE: Record<WebhookDeliveryStatus, string> = {
  delivered: "badge ok",
  failed: "badge err",
  retrying: "badge",
  queued: "badge",
};

/** The delivery log card. */
export function WebhookLog(
  { project, flash, endpoints, log }: {
    project: Project;
    flash: Flash | null;
    endpoints: WebhookEndpointView[];
    log: WebhookLogData;
  },
): VNode {
  const path = projectPath(project.id, "webhooks");
  const query = (after: string | null) => {
    const params = new URLSearchParams();
    if (log.endpointId) params.set("endpoint", log.endpointId);
    if (log.status) params.set("status", log.status);
    if (after) params.set("after", after);
    const text = params.toString();
    return `${path}${text ? `?${text}` : ""}#log`;
  };
  return (
    <section class="card" id="log" aria-labelledby="webhook-log-heading">
      <h2 id="webhook-log-heading">Delivery log</h2>
      <p class="muted">
        Each delivery of an event to an endpoint, newest first: the last 1,000, for 7 days. Replay
        sends the event again (same id, signed anew) once your receiver is fixed.
      </p>
      <FlashFor flash={flash} form="webhook-log" />
      <form method="get" action={`${path}#log`} data-testid="webhook-log-filter">
        <div class="grid">
          <div>
            <label for="log-endpoint">Endpoint</label>
            <select id="log-endpoint" name="endpoint">
              <option value="" selected={log.endpointId === null}>Any</option>
              {endpoints.map((e) => (
                <option value={e.id} selected={log.endpointId === e.id}>{e.url}</option>
              ))}
            </select>
          </div>
          <div>
            <label for="log-status">Status</label>
            <div class="row2">
              <select id="log-status" name="status">
                <option value="" selected={log.status === null}>Any</option>
                {WEBHOOK_LOG_STATUSES.map((s) => (
                  <option value={s} selected={log.status === s}>{s}</option>
                ))}
              </select>
              <button type="submit">Filter</button>
            </div>
          </div>
        </div>
      </form>
      {log.after && (
        <p class="muted">
          Showing older deliveries. <a href={query(null)}>Back to the newest</a>
        </p>
      )}
      {log.deliveries.length === 0
        ? <p class="empty" data-testid="no-webhook-deliveries">No deliveries match.</p>
        : (
          <table class="list stack" data-testid="webhook-delivery-list">
            <ListHead columns={["Time", "Event", "Endpoint", "Status", "Answer"]} />
            <tbody>
              {log.deliveries.map((d) => <DeliveryRow key={d.id} delivery={d} path={path} />)}
            </tbody>
          </table>
        )}
      {log.next && (
        <p class="actions">
          <a class="button secondary" href={query(log.next)} data-testid="webhook-log-more">
            Load more
          </a>
        </p>
      )}
    </section>
  );
}

function DeliveryRow({ delivery: d, path }: { delivery: WebhookDelivery; path: string }): VNode {
  return (
    <tr data-delivery-id={d.id}>
      <Cell label="Time">
        {formatTime(d.updatedAt)}
        {d.trigger !== "event" && <div class="hint">{d.trigger}</div>}
      </Cell>
      <Cell label="Event">
        <span class="mono">{d.eventType ?? "?"}</span>
        <div class="hint mono">id {d.eventId}</div>
      </Cell>
      <Cell label="Endpoint">
        <span class="mono">{new URL(d.url).host}</span>
      </Cell>
      <Cell label="Status">
        <span class={STATUS_BADGE[d.status]} data-testid="webhook-delivery-status">{d.status}</span>
        <div class="hint">
          {d.attempts} attempt{d.attempts === 1 ? "" : "s"}
          {d.nextAttemptAt !== null && d.status === "retrying" &&
            `, next ${formatTime(d.nextAttemptAt)}`}
        </div>
      </Cell>
      <Cell label="Answer">
        {d.responseStatus !== null && `HTTP ${d.responseStatus}`}
        {d.durationMs !== null && <span class="hint">{` in ${d.durationMs} ms`}</span>}
        {d.error && <div class="hint">{d.error}</div>}
        {d.answer && <div class="hint mono" title="The start of the answer">{d.answer}</div>}
      </Cell>
      <Cell label="">
        <form method="post" action={`${path}/deliveries/${d.id}/replay`} class="inline">
          <button type="submit" class="secondary" data-testid="replay-delivery">Replay</button>
        </form>
      </Cell>
    </tr>
  );
}
