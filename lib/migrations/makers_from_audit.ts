/**
 * Keys and webhook endpoints made before their maker was recorded name none, so removing or
 * demoting that member withdrew nothing. Their maker is in the audit log (`key_created`,
 * `webhook_endpoint_added`, kept a year): each such record gets the entry's actor as `createdBy`,
 * in a commit checked on the record. One the log no longer holds stays nobody's (never guessed).
 *
 * Instances of the previous version make keys and endpoints without a maker until the last of
 * them stops, so this also runs in the minute sweep over the entries written since the time it is
 * given (an audit entry's id is a ULID of its time).
 */
import { commitWithRetry, RETRY } from "../../core/commit_retry.ts";
import { ulidFloor } from "../../core/ids.ts";
import type { AuditEntry } from "../../kv/audit_log.ts";
import { apiKeyKey } from "../../kv/api_keys.ts";
import { webhookEndpointKey } from "../../kv/webhooks.ts";
import type { Project } from "../../kv/projects.ts";
import type { MigrationStep, StepResult } from "./step.ts";

/** The record each kind of entry names: its key in the store. */
const MADE: Partial<Record<AuditEntry["action"], (entry: AuditEntry) => Deno.KvKey | null>> = {
  key_created: (e) =>
    typeof e.details.keyId === "string" ? apiKeyKey(e.projectId, e.details.keyId) : null,
  webhook_endpoint_added: (e) =>
    typeof e.details.endpointId === "string"
      ? webhookEndpointKey(e.projectId, e.details.endpointId)
      : null,
};

/** Names the maker of every key and endpoint the audit log says who made. */
export const addMakersFromAudit: MigrationStep = async ({ kv }) =>
  await addMakers(kv, kv.list<AuditEntry>({ prefix: ["audit_log"] }));

/** The same for what was made since `since`: what the previous version may still make. */
export async function addRecentMakers(deps: { kv: Deno.Kv }, since: number): Promise<StepResult> {
  let changed = 0;
  for await (const { value: project } of deps.kv.list<Project>({ prefix: ["projects"] })) {
    if (project.deletedAt !== null) continue;
    const recent = deps.kv.list<AuditEntry>({
      start: ["audit_log", project.id, ulidFloor(since)],
      end: ["audit_log", project.id, "\uffff"],
    });
    changed += (await addMakers(deps.kv, recent)).changed;
  }
  return { changed, complete: true };
}

async function addMakers(
  kv: Deno.Kv,
  entries: Deno.KvListIterator<AuditEntry>,
): Promise<StepResult> {
  let changed = 0;
  for await (const { value: entry } of entries) {
    const key = MADE[entry.action]?.(entry);
    if (!key) continue;
    const named = await commitWithRetry("name a maker", async () => {
      const record = await kv.get<{ createdBy?: string }>(key);
      if (record.value === null || record.value.createdBy !== undefined) return false;
      const committed = await kv.atomic().check(record)
        .set(key, { ...record.value, createdBy: entry.actor }).commit();
      return committed.ok ? true : RETRY;
    });
    if (named) changed++;
  }
  return { changed, complete: true };
}
