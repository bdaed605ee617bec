/**
 * Structured logging: one JSON object per line, so logs stay machine-readable on any host.
 *
 * Every URL in a line is cut to its scheme and host before it is written: RPC provider URLs carry
 * API keys in their user info, path or query, and errors from HTTP clients quote the URL they
 * failed on, so no caller has to remember to scrub them.
 */

/** Severity of a log line. */
type LogLevel = "debug" | "info" | "warn" | "error";

/** Fields attached to a log line; never put secrets here. */
export type LogFields = Record<string, unknown>;

/** Writes one JSON log line to stdout (errors and warnings to stderr). */
export function log(level: LogLevel, msg: string, fields: LogFields = {}): void {
  if (level === "debug" && Deno.env.get("LOG_LEVEL") !== "debug") return;
  const line = redactUrls(
    JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }, replacer),
  );
  if (level === "error" || level === "warn") console.error(line);
  else console.log(line);
}

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

// Runs on the JSON text, where a URL ends at a quote, a backslash escape or whitespace.
const URL_PATTERN = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>\\()]+/gi;

/** Replaces each URL by its scheme and host; any user info, path or query becomes `/…`. */
function redactUrls(text: string): string {
  return text.replace(URL_PATTERN, (match) => {
    let url: URL;
    try {
      url = new URL(match);
    } catch {
      return "[url]";
    }
    const hidden = url.username !== "" || url.password !== "" ||
      `${url.pathname}${url.search}${url.hash}`.replace(/^\/$/, "") !== "";
    return `${url.protocol}//${url.host}${hidden ? "/…" : ""}`;
  });
}
