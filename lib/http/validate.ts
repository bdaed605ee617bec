/** Body and query validation that turns zod issues into the spec's `invalid_request` message. */
import type { Context } from "hono";
import type { z } from "zod";
import { ApiError } from "./errors.ts";

/** Formats zod issues as `path: problem` joined by `; `. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((i) => `${i.path.length ? i.path.join(".") : "body"}: ${i.message}`).join("; ");
}

/** Parses `value` with `schema` or throws 400 `invalid_request`. */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new ApiError(400, "invalid_request", formatIssues(result.error.issues));
  }
  return result.data;
}

/** Reads the JSON body (400 `invalid_json` when missing or unparsable), then validates it. */
export async function readJsonBody<S extends z.ZodType>(
  c: Context,
  schema: S,
): Promise<z.output<S>> {
  return validate(schema, await readJson(c));
}

/** Reads the raw JSON body; 400 `invalid_json` when it is missing or not JSON. */
export async function readJson(c: Context): Promise<unknown> {
  let text: string;
  try {
    text = await c.req.text();
  } catch {
    throw new ApiError(400, "invalid_json", "The request body could not be read");
  }
  if (text.trim() === "") throw new ApiError(400, "invalid_json", "The request body is missing");
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, "invalid_json", "The request body is not valid JSON");
  }
}

/** Validates the query string (single values) or throws 400 `invalid_request`. */
export function readQuery<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  return validate(schema, c.req.query());
}
