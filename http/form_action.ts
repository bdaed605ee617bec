/**
 * Dashboard form actions: one handler serves a browser's plain form post (answered with a 303
 * redirect back and a flash message) and a script's JSON request (answered with JSON, errors as
 * `{ error: { code, message } }` with the spec's status).
 */
import type { Context, Handler } from "hono";
import type { AppContext } from "../lib/context.ts";
import { ApiError } from "../core/api_error.ts";
import { readJson } from "./validate.ts";
import { getDeveloperSession } from "./developer_session.ts";
import { type Flash, setFlash } from "./flash.ts";
import { signInPath } from "./dashboard_paths.ts";
import { problemsByField } from "../lib/issue_text.ts";
import type { ActionFields } from "../lib/projects/fields.ts";

/** What a successful action answers. */
export interface ActionResult {
  /** The JSON answer for scripts. */
  json: unknown;
  status?: 200 | 201;
  /** The message a browser sees on the page it lands on. */
  flash: Flash;
  /** Where a browser goes next. */
  redirect: string;
  /**
   * A page to answer a browser with instead of the redirect: for a secret shown once, which must
   * not travel in the flash cookie (the flash then goes unused).
   */
  page?: (c: Context) => Response | Promise<Response>;
}

/** What an action handler gets. */
export interface ActionInput {
  c: Context;
  developer: string;
  fields: ActionFields;
}

/** How one action behaves. */
export interface ActionOptions {
  /** The page a browser returns to when the action fails (and signs in to first). */
  back: (c: Context) => string;
  /** Which form on that page the error belongs to (a page with several names them in a `form` field). */
  form?: string | ((fields: ActionFields) => string | undefined);
  /** What to fill the form with again after an error; must leave secrets out. */
  draft?: (fields: ActionFields) => Record<string, unknown>;
  /** False for actions without fields: the body is not read. */
  readBody?: boolean;
}

/** Codes whose message lists `field: problem` (`lib/issue_text.ts`). */
const FIELD_ERRORS = new Set(["invalid_settings", "invalid_request"]);

/** A `field: problem; ...` message as the flash of a form: the problems by field, and a summary. */
function fieldMessage(message: string): Pick<Flash, "message" | "fields"> {
  const { fields, rest } = problemsByField(message);
  const count = Object.keys(fields).length;
  if (count === 0) return { message };
  const summary = count === 1 ? "1 field needs a change" : `${count} fields need a change`;
  return { message: [`Not saved: ${summary}`, ...rest].join(". "), fields };
}

/** The form a message belongs to. */
function formOf(options: ActionOptions, fields: ActionFields): string | undefined {
  return typeof options.form === "function" ? options.form(fields) : options.form;
}

/** True when the caller is a script that wants JSON rather than a browser page. */
export function wantsJson(c: Context): boolean {
  const accept = c.req.header("accept") ?? "";
  if (accept.includes("application/json")) return true;
  const type = c.req.header("content-type") ?? "";
  return type.includes("application/json") && !accept.includes("text/html");
}

/** Reads a JSON object body or form fields; an absent body is no fields. */
async function readActionFields(c: Context): Promise<ActionFields> {
  const type = (c.req.header("content-type") ?? "").toLowerCase();
  if (type.includes("application/json")) {
    const body = await readJson(c);
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new ApiError("invalid_request", "body: must be a JSON object");
    }
    return body as ActionFields;
  }
  if (type.includes("application/x-www-form-urlencoded") || type.includes("multipart/form-data")) {
    let parsed: Record<string, unknown>;
    try {
      parsed = await c.req.parseBody({ all: true });
    } catch {
      throw new ApiError("invalid_request", "body: the form could not be read");
    }
    for (const [name, value] of Object.entries(parsed)) {
      const values = Array.isArray(value) ? value : [value];
      if (values.some((v) => typeof v !== "string")) {
        throw new ApiError("invalid_request", `${name}: files are not accepted`);
      }
    }
    return parsed;
  }
  return {};
}

/**
 * Wraps an action: checks the developer session (401 `not_signed_in`, or a redirect to sign-in
 * for a browser), reads the body, runs it, and answers as the caller wants. Put the same-origin
 * middleware before it, so a foreign post is refused before anything else.
 */
export function dashboardAction(
  ctx: AppContext,
  options: ActionOptions,
  run: (input: ActionInput) => Promise<ActionResult>,
): Handler {
  return async function dashboardAction(c) {
    const json = wantsJson(c);
    const developer = await getDeveloperSession(ctx, c);
    if (!developer) {
      if (json) throw new ApiError("not_signed_in", "Sign in to the dashboard first");
      return c.redirect(signInPath(options.back(c)), 303);
    }
    let fields: ActionFields = {};
    try {
      if (options.readBody !== false) fields = await readActionFields(c);
      const result = await run({ c, developer, fields });
      if (json) return c.json(result.json, result.status ?? 200);
      if (result.page) return await result.page(c);
      await setFlash(ctx, c, developer, result.flash);
      return c.redirect(result.redirect, 303);
    } catch (error) {
      if (json || !(error instanceof ApiError)) throw error;
      // A browser sees the message on the page it came from, never the code; a refused field's
      // problem goes next to that field (the JSON answer keeps the `field: problem` message).
      const gone = error.code === "project_not_found";
      const form = gone ? undefined : formOf(options, fields);
      await setFlash(ctx, c, developer, {
        kind: "error",
        ...(form !== undefined && FIELD_ERRORS.has(error.code)
          ? fieldMessage(error.message)
          : { message: error.message }),
        form,
        draft: gone ? undefined : options.draft?.(fields),
      });
      return c.redirect(gone ? "/dashboard" : options.back(c), 303);
    }
  };
}
