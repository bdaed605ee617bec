/**
 * What every call answers: the data, or an error as a value whose `code` is typed by the
 * operation and narrowed by `status` (`if (!r.ok && r.status === 429) r.code` lists only that
 * route's 429 codes), from the per-status lists of the API document; and how an HTTP answer
 * becomes one.
 */
import type { components, operations } from "./schema.ts";

/** An operation of the API, by its `operationId`. */
export type OperationId = keyof operations;

type Responses<Op extends OperationId> = operations[Op]["responses"];
type JsonOf<R> = R extends { content: { "application/json": infer Body } } ? Body
  : never;

/** The 200 answer of an operation. */
export type Answer<Op extends OperationId> = JsonOf<
  Responses<Op>[200 & keyof Responses<Op>]
>;

/** An error the service answered, with the codes the document lists for its status. */
export type ServiceError<Op extends OperationId> = {
  [S in keyof Responses<Op>]: S extends 200 ? never
    : JsonOf<Responses<Op>[S]> extends { error: { code: infer Code } }
      ? { ok: false; status: S; code: Code; message: string }
    : never;
}[keyof Responses<Op>];

/**
 * An error of the client itself: no answer (`network_error`), a wait that ran out (`timeout`), or
 * an answer that is not the service's (`invalid_response` for a success status without its JSON,
 * `http_error` for an error status without its error body, from a proxy in between). `status` is
 * 0, so a check of `status` narrows to the service's own errors; `httpStatus` is the answer's.
 */
export type ClientError = {
  ok: false;
  status: 0;
  code: "network_error" | "timeout" | "invalid_response" | "http_error";
  message: string;
  httpStatus: number | null;
};

/** The outcome of one call. */
export type Result<Op extends OperationId, Data = Answer<Op>> =
  | { ok: true; status: 200; data: Data }
  | ServiceError<Op>
  | ClientError;

/** Every error code of the service. */
export type ServiceErrorCode = ServiceError<OperationId>["code"];

/** One event of the feed, of any type. */
export type FeedEvent = components["schemas"]["EventFeed"]["events"][number];

/** An event type. */
export type EventType = FeedEvent["type"];

/** openapi-fetch's answer, its body read as text. */
export type Raw = { data?: unknown; error?: unknown; response: Response };

/** Turns openapi-fetch's answer (read as text) into a result. */
export function toResult<Op extends OperationId>(raw: Raw): Result<Op> {
  const { status } = raw.response;
  const text = typeof raw.data === "string" ? raw.data : raw.error;
  const body = typeof text === "string" ? parseJson(text) : text;
  if (raw.response.ok) {
    if (status === 200 && typeof body === "object" && body !== null) {
      return { ok: true, status: 200, data: body } as Result<Op>;
    }
    return clientError(
      status,
      "invalid_response",
      "The answer is not the service's JSON",
    );
  }
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (typeof error?.code === "string" && typeof error.message === "string") {
    return {
      ok: false,
      status,
      code: error.code,
      message: error.message,
    } as Result<Op>;
  }
  return clientError(
    status,
    "http_error",
    `HTTP ${status} without the service's error body`,
  );
}

function clientError<Op extends OperationId>(
  httpStatus: number,
  code: "invalid_response" | "http_error",
  message: string,
): Result<Op> {
  const error: ClientError = { ok: false, status: 0, code, message, httpStatus };
  return error;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
