/** Transaction policies: one per project, replaced whole when the dashboard saves it. */
import { emptyPolicy, type TxPolicy, validatePolicy } from "../lib/tx/policy.ts";

/** Key of a project's transaction policy. */
export function policyKey(projectId: string): Deno.KvKey {
  return ["tx_policies", projectId];
}

/** Returns the project's policy; a project that never saved one gets the empty policy. */
export async function getPolicy(kv: Deno.Kv, projectId: string): Promise<TxPolicy> {
  return (await kv.get<TxPolicy>(policyKey(projectId))).value ?? emptyPolicy();
}

/** Validates (400 `invalid_settings`) and stores the project's policy; returns what was stored. */
export async function savePolicy(
  kv: Deno.Kv,
  projectId: string,
  input: unknown,
): Promise<TxPolicy> {
  const policy = validatePolicy(input);
  await kv.set(policyKey(projectId), policy);
  return policy;
}
