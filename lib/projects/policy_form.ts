/**
 * The transaction policy form. JSON bodies carry the policy as it is stored; an HTML form names
 * list rows `allowedMints[0].mint`, `allowedMints[0].maxPerTransaction` (and
 * `allowedMints[0].maxHeldPerPlayer`, the rewards' cap), `hourlyBudgets[0].asset`,
 * `hourlyBudgets[0].amount`, and a row left blank is no row, so a page can offer empty rows to
 * fill in and a row is removed by clearing it.
 */
import type { TxPolicy } from "../../kv/policy.ts";
import type { ActionFields } from "./fields.ts";
import { unknownFields } from "./fields.ts";
import { invalidSettings } from "../issue_text.ts";

const ROW_FIELD = /^(allowedMints|hourlyBudgets)\[(\d{1,3})\]\.([A-Za-z]+)$/;
const ROW_KEYS = {
  allowedMints: ["mint", "maxPerTransaction", "maxHeldPerPlayer"],
  hourlyBudgets: ["asset", "amount"],
} as const;

const POLICY_FIELDS = [
  "maxSolPerTransfer",
  "maxHeldSolPerPlayer",
  "perRecipientPerHour",
  "perPlayerPerHour",
  "allowedMints",
  "hourlyBudgets",
];

/**
 * Turns form or JSON fields into the policy input `savePolicy` validates; 400 `invalid_settings`
 * for a field the policy does not have (an absent field clears its limit, so a body of strangers
 * must not pass as an empty policy).
 */
export function policyInputOf(fields: ActionFields): Record<string, unknown> {
  const unknown = unknownFields(
    fields,
    (name) => POLICY_FIELDS.includes(name) || ROW_FIELD.test(name),
  );
  if (unknown.length > 0) throw invalidSettings(unknown);
  const input: Record<string, unknown> = {};
  const rows: Record<keyof typeof ROW_KEYS, Map<number, Record<string, unknown>>> = {
    allowedMints: new Map(),
    hourlyBudgets: new Map(),
  };
  for (const [name, raw] of Object.entries(fields)) {
    const value = Array.isArray(raw) && typeof raw[0] === "string" ? raw[raw.length - 1] : raw;
    const row = ROW_FIELD.exec(name);
    if (!row) {
      input[name] = value;
      continue;
    }
    const [, match = "", index, key = ""] = row;
    // ROW_FIELD only matches the lists ROW_KEYS names.
    const list = match as keyof typeof ROW_KEYS;
    const keys: readonly string[] = ROW_KEYS[list];
    if (!keys.includes(key)) continue;
    const entries = rows[list];
    const entry = entries.get(Number(index)) ?? {};
    entry[key] = value;
    entries.set(Number(index), entry);
  }
  for (const [list, entries] of Object.entries(rows)) {
    if (entries.size === 0 || input[list] !== undefined) continue;
    input[list] = [...entries.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, entry]) => entry)
      .filter((entry) =>
        Object.values(entry).some((v) => typeof v !== "string" || v.trim() !== "")
      );
  }
  return input;
}

/** The form's text values for a policy, as the page pre-fills them. */
export function policyFormValues(policy: TxPolicy): Record<string, string> {
  const values: Record<string, string> = {
    maxSolPerTransfer: policy.maxSolPerTransfer ?? "",
    maxHeldSolPerPlayer: policy.maxHeldSolPerPlayer ?? "",
    perRecipientPerHour: policy.perRecipientPerHour?.toString() ?? "",
    perPlayerPerHour: policy.perPlayerPerHour?.toString() ?? "",
  };
  policy.allowedMints.forEach((m, i) => {
    values[`allowedMints[${i}].mint`] = m.mint;
    values[`allowedMints[${i}].maxPerTransaction`] = m.maxPerTransaction;
    values[`allowedMints[${i}].maxHeldPerPlayer`] = m.maxHeldPerPlayer ?? "";
  });
  policy.hourlyBudgets.forEach((b, i) => {
    values[`hourlyBudgets[${i}].asset`] = b.asset;
    values[`hourlyBudgets[${i}].amount`] = b.amount;
  });
  return values;
}

/** Keeps what a refused policy form held, as text, to fill it in again. */
export function policyDraft(fields: ActionFields): Record<string, unknown> {
  const draft: Record<string, string> = {};
  const input = policyInputOf(fields);
  for (
    const name of [
      "maxSolPerTransfer",
      "maxHeldSolPerPlayer",
      "perRecipientPerHour",
      "perPlayerPerHour",
    ]
  ) {
    const value = input[name];
    if (typeof value === "string" || typeof value === "number") draft[name] = String(value);
  }
  for (const list of ["allowedMints", "hourlyBudgets"] as const) {
    const entries = input[list];
    if (!Array.isArray(entries)) continue;
    entries.slice(0, 60).forEach((entry, i) => {
      for (const key of ROW_KEYS[list]) {
        const value = (entry as Record<string, unknown>)?.[key];
        if (typeof value === "string") draft[`${list}[${i}].${key}`] = value.slice(0, 100);
      }
    });
  }
  return draft;
}

/** Number of rows of a list in form values. */
export function rowCount(values: Record<string, unknown>, list: keyof typeof ROW_KEYS): number {
  let count = 0;
  for (const name of Object.keys(values)) {
    const row = ROW_FIELD.exec(name);
    if (row && row[1] === list) count = Math.max(count, Number(row[2]) + 1);
  }
  return count;
}
