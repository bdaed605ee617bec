/**
 * The request log: one entry per `/v1` call of a project whose key was recognised, refusals
 * included, kept 7 days, newest first (issue 34: a developer sees why a reward was not sent).
 * Entries are written in batches by `lib/quota/request_log.ts`; each key is unique (its time and an
 * id growing within its instance), so a batch resent over the network writes the same entries
 * again, never more.
 */

/** One call. */
export interface RequestLogEntry {
  at: number;
  method: string;
  /** The route's template (`/v1/tx/{idempotencyKey}`), or the path when no route matched. */
  route: string;
  keyId: string;
  status: number;
  /** The error code answered, null for a success. */
  code: string | null;
  /** Time to the answer. */
  ms: number;
}

/** How long an entry is kept. */
export const REQUEST_LOG_KEPT_MS = 7 * 24 * 60 * 60_000;
// A commit holds at most 1,000 mutations and 800 KB; an entry is about 200 bytes.
const ENTRIES_PER_COMMIT = 500;

// Listed backwards for newest first; ids that grow within one instance order calls of one ms.
function entryKey(projectId: string, at: number, id: string): Deno.KvKey {
  return ["request_log", projectId, at, id];
}

/** Writes `entries` (each with a unique `id`), in as few commits as the store's limits allow. */
export async function appendRequestLog(
  kv: Deno.Kv,
  entries: ReadonlyArray<{ projectId: string; id: string; entry: RequestLogEntry }>,
): Promise<void> {
  for (let i = 0; i < entries.length; i += ENTRIES_PER_COMMIT) {
    const op = kv.atomic();
    for (const { projectId, id, entry } of entries.slice(i, i + ENTRIES_PER_COMMIT)) {
      op.set(entryKey(projectId, entry.at, id), entry, { expireIn: REQUEST_LOG_KEPT_MS });
    }
    await op.commit();
  }
}

/** Which entries a page shows. */
export interface RequestLogFilter {
  outcome?: "ok" | "refused" | "error";
  route?: string;
  keyId?: string;
}

/** The outcome of a status: a success, a refusal (4xx) or a failure of ours (5xx). */
export function outcomeOf(status: number): "ok" | "refused" | "error" {
  return status < 400 ? "ok" : status < 500 ? "refused" : "error";
}

/**
 * Up to `limit` entries matching `filter`, newest first, from `cursor` on; a filter looks at no
 * more than `scan` entries (the page's `cursor` then says where to go on).
 */
export async function listRequestLog(
  kv: Deno.Kv,
  projectId: string,
  options: { now: number; filter: RequestLogFilter; limit: number; scan: number; cursor?: string },
): Promise<{ entries: RequestLogEntry[]; cursor: string | null }> {
  const entries: RequestLogEntry[] = [];
  const { filter } = options;
  const list = kv.list<RequestLogEntry>(
    { prefix: ["request_log", projectId] },
    { limit: options.scan, reverse: true, ...(options.cursor ? { cursor: options.cursor } : {}) },
  );
  let scanned = 0;
  for await (const { value } of list) {
    scanned++;
    if (value.at + REQUEST_LOG_KEPT_MS <= options.now) continue;
    if (filter.outcome && outcomeOf(value.status) !== filter.outcome) continue;
    if (filter.route && value.route !== filter.route) continue;
    if (filter.keyId && value.keyId !== filter.keyId) continue;
    entries.push(value);
    if (entries.length >= options.limit) break;
  }
  const more = entries.length >= options.limit || scanned >= options.scan;
  return { entries, cursor: more ? list.cursor || null : null };
}
