/** A project's audit log: who changed what and when, filtered by action, member and dates, with a JSON export. */
import type { VNode } from "preact";
import { AUDIT_ACTIONS, type AuditAction, type AuditEntry } from "../../kv/audit_log.ts";
import type { Project } from "../../kv/projects.ts";
import { type FrameData, ProjectFrame } from "./frame.tsx";
import { formatTime, shortAddress } from "./format.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { Cell } from "./cell.tsx";
import { AUDIT_LABELS, describeAuditEntry } from "./audit_text.ts";

/** The filters as typed in the form (dates as `YYYY-MM-DD`). */
export interface AuditFilterText {
  action: AuditAction | null;
  actor: string;
  from: string;
  to: string;
}

/** What the audit page shows. */
interface AuditPageData extends FrameData {
  project: Project;
  filter: AuditFilterText;
  entries: AuditEntry[];
  /** Cursor of the next (older) page; null at the end. */
  next: string | null;
  /** True when the page stopped looking before it was full: older entries are not searched yet. */
  searchedPart: boolean;
  /** The query string of the filters, for the export and the next page. */
  query: string;
}

/** The audit log page body. */
export function AuditPage(data: AuditPageData): VNode {
  const { project, filter } = data;
  const base = projectPath(project.id, "audit");
  const more = (extra: string) => `${data.query}${data.query ? "&" : "?"}${extra}`;
  return (
    <ProjectFrame data={data} project={project} tab="audit">
      <section class="card" aria-labelledby="audit-heading">
        <h2 id="audit-heading">Audit log</h2>
        <p class="muted">
          Every change made from the dashboard, with who made it and when, kept one year. Secrets
          are never written here: only that they changed.
        </p>
        <form method="get" action={base} class="filters" data-testid="audit-filters">
          <div class="grid">
            <div>
              <label for="audit-action">Action</label>
              <select id="audit-action" name="action">
                <option value="">Every action</option>
                {AUDIT_ACTIONS.map((action) => (
                  <option key={action} value={action} selected={action === filter.action}>
                    {AUDIT_LABELS[action]}
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label for="audit-actor">Member (wallet)</label>
              <input id="audit-actor" name="actor" value={filter.actor} spellcheck={false} />
            </div>
            <div>
              <label for="audit-from">From (UTC)</label>
              <input id="audit-from" name="from" type="date" value={filter.from} />
            </div>
            <div>
              <label for="audit-to">To (UTC, included)</label>
              <input id="audit-to" name="to" type="date" value={filter.to} />
            </div>
          </div>
          <div class="actions">
            <button type="submit">Filter</button>
            <a class="button secondary" href={base}>Clear</a>
            <a class="button secondary" href={`${base}/export${data.query}`} data-testid="export">
              Export as JSON
            </a>
          </div>
        </form>
        {data.entries.length === 0
          ? (
            <p class="empty" data-testid="no-audit">
              {data.searchedPart
                ? "No entries match among the latest searched."
                : "No entries match."}
            </p>
          )
          : (
            <table class="list stack" data-testid="audit-list">
              <thead>
                <tr>
                  <th>When</th>
                  <th>Who</th>
                  <th>What</th>
                  <th>Details</th>
                </tr>
              </thead>
              <tbody>
                {data.entries.map((entry) => (
                  <tr key={entry.id} data-action={entry.action}>
                    <Cell label="When">{formatTime(entry.at)}</Cell>
                    <Cell label="Who" mono>
                      <span title={entry.actor}>{shortAddress(entry.actor)}</span>
                    </Cell>
                    <Cell label="What">{AUDIT_LABELS[entry.action] ?? entry.action}</Cell>
                    <Cell label="Details">
                      {describeAuditEntry(entry)}
                      {Object.keys(entry.details).length > 0 && (
                        <details>
                          <summary>All details</summary>
                          <pre class="mono">{JSON.stringify(entry.details, null, 2)}</pre>
                        </details>
                      )}
                    </Cell>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        {data.next && data.searchedPart && (
          <p class="muted" data-testid="audit-unsearched">
            Older entries were not searched yet.{" "}
            <a href={`${base}${more(`before=${data.next}`)}`} data-testid="audit-continue">
              Continue searching
            </a>
          </p>
        )}
        {data.next && !data.searchedPart && (
          <p>
            <a href={`${base}${more(`before=${data.next}`)}`} data-testid="audit-older">
              Older entries
            </a>
          </p>
        )}
      </section>
    </ProjectFrame>
  );
}
