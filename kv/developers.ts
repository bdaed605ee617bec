/** Developer accounts: the account is the wallet address that signed in to the dashboard. */
import { commitWithRetry, RETRY } from "../core/commit_retry.ts";
import { addAuditEntry } from "./audit_log.ts";
import { listMemberProjectIds } from "./members.ts";

/** A developer account as stored. */
export interface Developer {
  address: string;
  createdAt: number;
  lastSignInAt: number;
}

/** Key of a developer account. */
export function developerKey(address: string): Deno.KvKey {
  return ["developers", address];
}

/** Returns the developer account, or null. */
export async function getDeveloper(kv: Deno.Kv, address: string): Promise<Developer | null> {
  return (await kv.get<Developer>(developerKey(address))).value;
}

/**
 * Records a sign-in, creating the account on the first one; `created` says which happened. The
 * sign-in is recorded in the audit log of every project the developer is a member of, in the same
 * commit (at most `MAX_MEMBERSHIPS` entries, `team.ts`).
 */
export async function recordDeveloperSignIn(
  kv: Deno.Kv,
  address: string,
  now: number,
): Promise<{ developer: Developer; created: boolean }> {
  const projectIds = await listMemberProjectIds(kv, address);
  return await commitWithRetry("record developer sign-in", async () => {
    const entry = await kv.get<Developer>(developerKey(address));
    const developer: Developer = entry.value
      ? { ...entry.value, lastSignInAt: now }
      : { address, createdAt: now, lastSignInAt: now };
    const op = kv.atomic().check(entry).set(entry.key, developer);
    for (const projectId of projectIds) {
      addAuditEntry(op, { projectId, actor: address, action: "signed_in", at: now });
    }
    const result = await op.commit();
    if (result.ok) return { developer, created: entry.value === null };
    return RETRY;
  }, { rounds: 10 });
}
