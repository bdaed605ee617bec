/**
 * A refused form's problems, each in words next to its field (the flash's `fields`, from a
 * `field: problem` message): the input gets `aria-invalid` and `aria-describedby` pointing at the
 * problem under it, and the form's notice lists them with each field's name in words.
 */
import type { VNode } from "preact";
import type { Flash } from "../../http/flash.ts";
import { ownValue } from "../../islands/_own_value.ts";

/** Which flash and form a field belongs to. */
export interface FieldRef {
  flash: Flash | null;
  form: string;
  name: string;
}

// Words that read in capitals.
const ACRONYMS: Readonly<Record<string, string>> = {
  sol: "SOL",
  id: "ID",
  url: "URL",
  oauth: "OAuth",
};

/** A field's path in words: `allowedMints[0].maxPerTransaction` reads "Allowed mints 1, max per transaction". */
export function fieldLabel(path: string): string {
  const text = path.split(".").map((part) =>
    part.replace(/\[(\d+)\]/g, (_, i) => ` ${Number(i) + 1}`)
      .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
      .toLowerCase()
      .split(" ")
      .map((word) => ownValue(ACRONYMS, word) ?? word)
      .join(" ")
  ).join(", ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function problemOf({ flash, form, name }: FieldRef): string | null {
  if (!flash?.fields || flash.form !== form) return null;
  return ownValue(flash.fields, name) ?? null;
}

function errorId({ form, name }: FieldRef): string {
  return `${form}-${name}-error`.replace(/[^A-Za-z0-9_-]/g, "-");
}

/** The input's attributes: invalid and described by its problem when the field was refused. */
export function fieldAria(field: FieldRef): Record<string, string> {
  return problemOf(field) === null
    ? {}
    : { "aria-invalid": "true", "aria-describedby": errorId(field) };
}

/** The field's problem in words, for under the input (nothing when it was not refused). */
export function FieldError(field: FieldRef): VNode | null {
  const problem = problemOf(field);
  if (problem === null) return null;
  return (
    <p class="field-error" id={errorId(field)}>
      {problem.charAt(0).toUpperCase() + problem.slice(1)}.
    </p>
  );
}
