/** Body and query validation that turns zod issues into the spec's `invalid_request` message. */
import type { Context } from "hono";
import type { z } from "zod";
import { ApiError } from "../core/api_error.ts";
import { issueText } from "../lib/issue_text.ts";

/** Parses `value` with `schema` or throws 400 `invalid_request`. */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new ApiError(400, "invalid_request", issueText(result.error.issues, { whole: "body" }));
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
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError(400, "invalid_json", "The request body is not valid JSON");
  }
  assertWellFormed(value);
  return value;
}

/** Deepest nesting a body may have; no body the service takes comes close. */
const MAX_JSON_DEPTH = 32;

/**
 * Throws 400 `invalid_request` for a body nested deeper than `MAX_JSON_DEPTH`, or holding a string
 * (or property name) that is not well-formed Unicode: JSON escapes can carry lone surrogates, which
 * KV keys would fold into U+FFFD, so two different strings would share one key.
 */
function assertWellFormed(body: unknown): void {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [
    { value: body, path: "body", depth: 0 },
  ];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === "string") {
      if (!value.isWellFormed()) {
        throw new ApiError(400, "invalid_request", `${path}: must be well-formed Unicode`);
      }
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    if (depth >= MAX_JSON_DEPTH) {
      throw new ApiError(400, "invalid_request", `${path}: nested too deeply`);
    }
    for (const [name, child] of Object.entries(value)) {
      const childPath = path === "body" ? name : `${path}.${name}`;
      if (!name.isWellFormed()) {
        throw new ApiError(400, "invalid_request", `${path}: names must be well-formed Unicode`);
      }
      // Copied onto a plain object, this name would replace its prototype.
      if (name === "__proto__") {
        throw new ApiError(400, "invalid_request", `${path}: __proto__ is not allowed`);
      }
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
}

/** Validates the query string (single values) or throws 400 `invalid_request`. */
export function readQuery<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  return validate(schema, c.req.query());
}
