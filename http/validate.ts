/** Body and query validation that turns zod issues into the spec's `invalid_request` message. */
import type { Context } from "hono";
import { z } from "zod";
import { ApiError } from "../core/api_error.ts";
import { issueText } from "../lib/issue_text.ts";

/** Parses `value` with `schema` or throws 400 `invalid_request`. */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new ApiError("invalid_request", issueText(result.error.issues, { whole: "body" }));
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

/**
 * Reads the raw JSON body; 400 `invalid_json` when it is missing, not sent as JSON
 * (`Content-Type: application/json`, or another `+json` type), or not JSON. A body sent as
 * `text/plain` (what `fetch` labels a bare string) is refused even when it parses: the document
 * says JSON, and a type browsers may send across sites without asking is never taken as JSON.
 */
export async function readJson(c: Context): Promise<unknown> {
  let text: string;
  try {
    text = await c.req.text();
  } catch {
    throw new ApiError("invalid_json", "The request body could not be read");
  }
  if (text.trim() === "") throw new ApiError("invalid_json", "The request body is missing");
  if (!isJsonMediaType(c.req.header("content-type"))) {
    throw new ApiError(
      "invalid_json",
      "The request body must be sent as JSON, with the header Content-Type: application/json",
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError("invalid_json", "The request body is not valid JSON");
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
        throw new ApiError("invalid_request", `${path}: must be well-formed Unicode`);
      }
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    if (depth >= MAX_JSON_DEPTH) {
      throw new ApiError("invalid_request", `${path}: nested too deeply`);
    }
    for (const [name, child] of Object.entries(value)) {
      const childPath = path === "body" ? name : `${path}.${name}`;
      if (!name.isWellFormed()) {
        throw new ApiError("invalid_request", `${path}: names must be well-formed Unicode`);
      }
      // Copied onto a plain object, this name would replace its prototype.
      if (name === "__proto__") {
        throw new ApiError("invalid_request", `${path}: __proto__ is not allowed`);
      }
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
}

/** True for `application/json` and `application/<name>+json`, with any parameters. */
function isJsonMediaType(header: string | undefined): boolean {
  const type = header?.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/**
 * Validates the query string against an object schema, or throws 400 `invalid_request`. Values
 * are read as the document describes them: a list (an array field) takes repeated parameters and
 * comma-separated ones alike (`types=tx&types=watch`, `types=tx,watch`); an integer field takes
 * digits; any other parameter given twice is refused rather than one of its values dropped.
 */
export function readQuery<S extends z.ZodObject>(c: Context, schema: S): z.output<S> {
  const values: Record<string, unknown> = {};
  for (const [name, all] of Object.entries(c.req.queries())) {
    const field = unwrap(schema.shape[name]);
    if (field instanceof z.ZodArray) {
      values[name] = all.flatMap((value) => value.split(","));
      continue;
    }
    if (all.length > 1) throw new ApiError("invalid_request", `${name}: must be given once`);
    const value = all[0]!;
    if (field instanceof z.ZodNumber) {
      if (!/^-?[0-9]{1,16}$/.test(value)) {
        throw new ApiError("invalid_request", `${name}: must be a whole number`);
      }
      values[name] = Number(value);
    } else values[name] = value;
  }
  return validate(schema, values);
}

/** The schema under `.optional()` and `.default()`. */
function unwrap(schema: unknown): unknown {
  let inner = schema;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodDefault) inner = inner.unwrap();
  return inner;
}
