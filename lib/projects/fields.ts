/** Reading dashboard fields the same way whether they came from a form (strings) or from JSON. */
import { ApiError } from "../../core/api_error.ts";

/** Fields of a request body, from JSON or from a form (form values are strings, or string arrays when repeated). */
export type ActionFields = Record<string, unknown>;

/**
 * A text field, trimmed: undefined when absent, null when JSON sent null, and the marker
 * `NOT_TEXT` for anything else (a number, an object, a file).
 */
export function readText(value: unknown): string | undefined | null {
  if (Array.isArray(value)) value = value[value.length - 1];
  if (value === undefined || value === null) return value;
  if (typeof value !== "string") return NOT_TEXT;
  return value.trim();
}

/** What `readText` returns for a value that is not text; no real field value equals it. */
export const NOT_TEXT = "\u0000not text\u0000";

/**
 * A yes/no field: JSON booleans, or a form checkbox (`on`, `true`, `1`; a hidden `false` before it
 * when unchecked). Undefined when absent, null when not a yes/no value.
 */
export function readFlag(value: unknown): boolean | undefined | null {
  if (Array.isArray(value)) value = value[value.length - 1];
  if (value === undefined) return undefined;
  if (typeof value === "boolean") return value;
  if (typeof value !== "string") return null;
  const text = value.trim().toLowerCase();
  if (["on", "true", "1", "yes"].includes(text)) return true;
  if (["", "off", "false", "0", "no"].includes(text)) return false;
  return null;
}

/** Splits an `invalid_settings` message back into its problems (to merge several validators' answers). */
export function problemsOf(error: unknown): string[] | null {
  if (!(error instanceof ApiError) || error.code !== "invalid_settings") return null;
  return error.message.split("; ").filter((p) => p.length > 0);
}

/** One problem per field name the form does not have (a typo, or a probe), so nothing is saved. */
export function unknownFields(
  fields: Record<string, unknown>,
  known: (name: string) => boolean,
): string[] {
  return Object.keys(fields).filter((name) => name !== "form" && !known(name))
    .map((name) => `${name.slice(0, 40)}: is not a field of this form`);
}

/** Keeps only the named text fields of a body (for redrawing a refused form). */
export function pickText(
  fields: Record<string, unknown>,
  names: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = readText(fields[name]);
    if (typeof value === "string" && value !== NOT_TEXT) out[name] = value.slice(0, 200);
  }
  return out;
}
