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
  return new ApiError(400, "invalid_settings", problems.join("; "));
}
