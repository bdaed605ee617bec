/**
 * Exports of a project's managed wallet key: when and by whom, never the key. The record is kept
 * for the project's life (the project shows that its key left the service), and its recent export
 * times count against the daily limit in the commit that spends the export's statement, so
 * concurrent exports never pass it.
 */
import { addAuditEntry, type AuditInput } from "./audit_log.ts";

/** A project's exports as stored. */
export interface KeyExports {
  /** Times of the exports in the last 24 hours (older ones are dropped on each export). */
  recent: number[];
  lastAt: number;
  /** The owner's wallet address that exported last. */
  lastBy: string;
  /** Exports ever made. */
  total: number;
}

/** The rolling window the daily limit counts in. */
export const KEY_EXPORT_WINDOW_MS = 24 * 3_600_000;

function keyExportsKey(projectId: string): Deno.KvKey {
  return ["key_exports", projectId];
}

/** The project's export record with its versionstamp (null value: never exported). */
export function getKeyExports(
  kv: Deno.Kv,
  projectId: string,
): Promise<Deno.KvEntryMaybe<KeyExports>> {
  return kv.get<KeyExports>(keyExportsKey(projectId));
}

/** Exports within the window before `now`. */
export function exportsToday(record: KeyExports | null, now: number): number {
  return (record?.recent ?? []).filter((at) => at > now - KEY_EXPORT_WINDOW_MS).length;
}

/**
 * Adds one export to `op`, checked on the record as read (`entry`), with its audit entry: the
 * commit that spends the export's statement.
 */
export function addKeyExport(
  op: Deno.AtomicOperation,
  entry: Deno.KvEntryMaybe<KeyExports>,
  options: { by: string; at: number; audit: AuditInput },
): void {
  const { by, at } = options;
  const recent = (entry.value?.recent ?? []).filter((t) => t > at - KEY_EXPORT_WINDOW_MS);
  const record: KeyExports = {
    recent: [...recent, at],
    lastAt: at,
    lastBy: by,
    total: (entry.value?.total ?? 0) + 1,
  };
  op.check(entry).set(entry.key, record);
  addAuditEntry(op, options.audit);
}
