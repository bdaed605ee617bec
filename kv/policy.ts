/** Transaction policies: one per project, replaced whole when the dashboard saves it. */
import { addAuditEntry, type AuditInput } from "./audit_log.ts";

/** A mint the project may send or mint, with its per-transaction maximum. */
export interface MintAllowance {
  mint: string;
  maxPerTransaction: string;
  /** Most of it one player may have in unpaid rewards (`kv/rewards.ts`); absent or null: no cap. */
  maxHeldPerPlayer?: string | null;
}

/** An hourly amount budget for one asset across all recipients. */
interface AssetBudget {
  /** `SOL` or a mint address. */
  asset: string;
  amount: string;
}

/** A project's transaction policy as stored. */
export interface TxPolicy {
  /** Max SOL per transfer; SOL transfers are disabled while it is null. */
  maxSolPerTransfer: string | null;
  allowedMints: MintAllowance[];
  /** Most transactions one recipient wallet may receive in a rolling hour; null means no limit. */
  perRecipientPerHour: number | null;
  /** Most transactions one player may receive in a rolling hour, across all their wallets. */
  perPlayerPerHour: number | null;
  hourlyBudgets: AssetBudget[];
  /**
   * Most SOL one player may have in unpaid rewards (`kv/rewards.ts`); absent (policies saved before
   * rewards) or null: no cap.
   */
  maxHeldSolPerPlayer?: string | null;
}

/** The policy of a project that never saved one: nothing may be sent. */
export function emptyPolicy(): TxPolicy {
  return {
    maxSolPerTransfer: null,
    allowedMints: [],
    perRecipientPerHour: null,
    perPlayerPerHour: null,
    hourlyBudgets: [],
  };
}

/** Key of a project's transaction policy. */
export function policyKey(projectId: string): Deno.KvKey {
  return ["tx_policies", projectId];
}

/** Returns the project's policy; a project that never saved one gets the empty policy. */
export async function getPolicy(kv: Deno.Kv, projectId: string): Promise<TxPolicy> {
  return (await kv.get<TxPolicy>(policyKey(projectId))).value ?? emptyPolicy();
}

/** Returns the project's policy entry (versionstamp null while it never saved one). */
export function getPolicyEntry(
  kv: Deno.Kv,
  projectId: string,
): Promise<Deno.KvEntryMaybe<TxPolicy>> {
  return kv.get<TxPolicy>(policyKey(projectId));
}

/**
 * Replaces the policy read as `entry` with `policy`, already validated (`lib/tx/request/policy.ts`), with
 * its audit entry; false when the stored policy changed since it was read.
 */
export async function replacePolicy(
  kv: Deno.Kv,
  entry: Deno.KvEntryMaybe<TxPolicy>,
  policy: TxPolicy,
  options: { audit?: AuditInput | undefined } = {},
): Promise<boolean> {
  const op = kv.atomic().check(entry).set(entry.key, policy);
  if (options.audit) addAuditEntry(op, options.audit);
  return (await op.commit()).ok;
}
