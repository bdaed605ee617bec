/**
 * How a validation problem is worded for people: `path: problem`, several joined by `; `. The path
 * is the field's names joined by dots (`to.userId`, `userIds.3`), or, in a form's message, with
 * list positions in brackets (`allowedMints[0].mint`); an empty path names the whole input.
 */

import { ApiError } from "../core/api_error.ts";

/** A problem as zod reports it, as far as its wording needs. */
interface Issue {
  path: readonly PropertyKey[];
  message: string;
}

/** How to write paths: the name of the whole input, and how list positions read. */
interface IssueWording {
  whole: string;
  positions?: "dotted" | "bracketed";
}

function pathText(path: readonly PropertyKey[], wording: IssueWording): string {
  if (path.length === 0) return wording.whole;
  if (wording.positions !== "bracketed") return path.map(String).join(".");
  return path.map((part, i) =>
    typeof part === "number" ? `[${part}]` : `${i === 0 ? "" : "."}${String(part)}`
  ).join("");
}

/** Each issue as `path: problem`. */
export function issueLines(issues: readonly Issue[], wording: IssueWording): string[] {
  return issues.map((issue) => `${pathText(issue.path, wording)}: ${issue.message}`);
}

/** The issues as one message: `path: problem; path: problem`. */
export function issueText(issues: readonly Issue[], wording: IssueWording): string {
  return issueLines(issues, wording).join("; ");
}

/** 400 `invalid_settings` listing each field and problem as `field: problem; ...` (dashboard forms). */
export function invalidSettings(problems: readonly string[]): ApiError {
  return new ApiError("invalid_settings", problems.join("; "));
}

// A form field's path as `issueText` writes it: names with list positions in brackets.
const FIELD_PATH = /^([A-Za-z_]\w*(?:\[\d+\])*(?:\.[A-Za-z_]\w*(?:\[\d+\])*)*): (.+)$/s;

/**
 * A `field: problem; ...` message split back into each field's problem, for a page that says it
 * next to the field; what names no field (a problem holding `; ` of its own continues the one
 * before) stays in `rest`. The first problem of a field wins.
 */
export function problemsByField(
  message: string,
): { fields: Record<string, string>; rest: string[] } {
  const fields: Record<string, string> = {};
  const rest: string[] = [];
  let last: { field: string } | { rest: number } | null = null;
  for (const piece of message.split("; ")) {
    const match = FIELD_PATH.exec(piece);
    if (match) {
      const [, field = "", problem = ""] = match;
      if (!Object.hasOwn(fields, field)) fields[field] = problem;
      last = { field };
    } else if (last && "field" in last) {
      fields[last.field] += `; ${piece}`;
    } else if (last && "rest" in last) {
      rest[last.rest] += `; ${piece}`;
    } else {
      last = { rest: rest.push(piece) - 1 };
    }
  }
  return { fields, rest };
}
