/**
 * The request log: the project's `/v1` calls of the last 7 days, refusals included, filterable by
 * outcome, route and key, so a developer can see why a payout was not sent.
 */
import type { VNode } from "preact";
import type { Project } from "../../kv/projects.ts";
import type { ApiKeyRecord } from "../../kv/api_keys.ts";
import type { RequestLogEntry, RequestLogFilter } from "../../kv/request_log.ts";
import { type FrameData, ProjectFrame } from "./frame.tsx";
import { Cell } from "./cell.tsx";

/** What the request log page shows. */
interface RequestsPageData extends FrameData {
  project: Project;
  routes: readonly string[];
  keys: readonly ApiKeyRecord[];
  filter: RequestLogFilter;
  entries: RequestLogEntry[];
  /** Where the next page starts, when there may be more. */
  next: string | null;
}

const OUTCOMES = [
  { value: "", label: "All" },
  { value: "refused", label: "Refused (4xx)" },
  { value: "error", label: "Errors (5xx)" },
  { value: "ok", label: "Succeeded" },
] as const;

/** `2026-11-28 13:40:05 UTC`. */
function formatSecond(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** The request log page body. */
export function RequestsPage(data: RequestsPageData): VNode {
  const { filter } = data;
  const keyName = (id: string) => {
    const key = data.keys.find((k) => k.id === id);
    return key ? `${key.preview}…` : "a deleted key";
  };
  const nextHref = data.next && `?${new URLSearchParams({
    ...(filter.outcome ? { outcome: filter.outcome } : {}),
    ...(filter.route ? { route: filter.route } : {}),
    ...(filter.keyId ? { key: filter.keyId } : {}),
    cursor: data.next,
  })}`;
  return (
    <ProjectFrame data={data} project={data.project} tab="requests">
      <section class="card" aria-labelledby="requests-heading">
        <h2 id="requests-heading">Request log</h2>
        <p class="hint">
          Every call to the game API with one of this project's keys in the last 7 days, refused
          ones included, newest first. Successful reads of the event feed are not listed.
        </p>
        <form method="get" data-testid="request-filter" class="row3">
          <label>
            Outcome
            <select name="outcome">
              {OUTCOMES.map((o) => (
                <option key={o.value} value={o.value} selected={(filter.outcome ?? "") === o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Route
            <select name="route">
              <option value="">All routes</option>
              {data.routes.map((r) => (
                <option key={r} value={r} selected={filter.route === r}>{r}</option>
              ))}
            </select>
          </label>
          <label>
            API key
            <select name="key">
              <option value="">All keys</option>
              {data.keys.map((k) => (
                <option key={k.id} value={k.id} selected={filter.keyId === k.id}>
                  {k.preview}…
                </option>
              ))}
            </select>
          </label>
          <button type="submit">Filter</button>
        </form>
        {data.entries.length === 0
          ? <p class="empty" data-testid="no-requests">No call matches in what was searched.</p>
          : (
            <table class="list stack" data-testid="request-list">
              <thead>
                <tr>
                  <th>Time</th>
                  <th>Route</th>
                  <th>Key</th>
                  <th>Status</th>
                  <th>Code</th>
                  <th>Took</th>
                </tr>
              </thead>
              <tbody>
                {data.entries.map((e, i) => (
                  <tr key={i}>
                    <Cell label="Time">{formatSecond(e.at)}</Cell>
                    <Cell label="Route">
                      <span class="mono">{e.method} {e.route}</span>
                    </Cell>
                    <Cell label="Key">
                      <span class="mono">{keyName(e.keyId)}</span>
                    </Cell>
                    <Cell label="Status">{e.status}</Cell>
                    <Cell label="Code">
                      {e.code
                        ? <span class="mono">{e.code}</span>
                        : <span class="muted">none</span>}
                    </Cell>
                    <Cell label="Took">{e.ms} ms</Cell>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        {nextHref && (
          <p>
            <a href={nextHref} data-testid="requests-next">Older calls</a>
          </p>
        )}
      </section>
    </ProjectFrame>
  );
}
