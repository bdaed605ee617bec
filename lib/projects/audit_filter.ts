/**
 * The audit log's filters as the page and the export read them from a query: `action`, `actor`
 * (a wallet address), `from` and `to` (UTC days, `to` included) and `before` (a page cursor). A
 * value that is none of these is ignored, so a hand-edited link still shows a page.
 */
import { AUDIT_ACTIONS, type AuditAction, type AuditFilter } from "../../kv/audit_log.ts";
import { ULID_PATTERN } from "../../core/ids.ts";
import { decodeAddress } from "../auth/siws.ts";

const DAY_MS = 24 * 3_600_000;
const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** The filters read from a query: for the store, as text for the form, and as a query string. */
export interface ParsedAuditFilter {
  filter: AuditFilter;
  text: { action: AuditAction | null; actor: string; from: string; to: string };
  /** `?action=...` with the filters that apply (no cursor), or `""` when none does. */
  query: string;
}

/** Reads the filters from a query's values. */
export function parseAuditFilter(query: (name: string) => string | undefined): ParsedAuditFilter {
  const action = AUDIT_ACTIONS.find((a) => a === query("action")) ?? null;
  const actor = (query("actor") ?? "").trim();
  const from = dayStart(query("from"));
  const to = dayStart(query("to"));
  const before = query("before");
  const text = {
    action,
    actor: decodeAddress(actor) ? actor : "",
    from: from === null ? "" : query("from")!,
    to: to === null ? "" : query("to")!,
  };
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(text)) if (value) params.set(name, value);
  return {
    filter: {
      action: action ?? undefined,
      actor: text.actor || undefined,
      from: from ?? undefined,
      to: to === null ? undefined : to + DAY_MS,
      before: before && ULID_PATTERN.test(before) ? before : undefined,
    },
    text,
    query: params.size > 0 ? `?${params}` : "",
  };
}

function dayStart(text: string | undefined): number | null {
  if (!text || !DAY_PATTERN.test(text)) return null;
  const time = Date.parse(`${text}T00:00:00Z`);
  return Number.isNaN(time) ? null : time;
}
