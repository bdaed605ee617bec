/** Structured logging: one JSON object per line, so logs stay machine-readable on any host. */

/** Severity of a log line. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Fields attached to a log line; never put secrets here. */
export type LogFields = Record<string, unknown>;

/** Writes one JSON log line to stdout (errors and warnings to stderr). */
export function log(level: LogLevel, msg: string, fields: LogFields = {}): void {
  if (level === "debug" && Deno.env.get("LOG_LEVEL") !== "debug") return;
  const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }, replacer);
  if (level === "error" || level === "warn") console.error(line);
  else console.log(line);
}

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}
