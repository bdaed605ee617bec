/**
 * Request body limits, applied app-wide so a new route is bounded without asking: 64 KB under
 * `/dashboard/` (forms with a policy or settings) and for `POST /v1/tx/batch` (50 payouts of up to
 * about 400 bytes each), 16 KB everywhere else (every other JSON body the API takes is far
 * smaller). A body announced by `Content-Length` is refused before it is read; one
 * sent without it (chunked) is counted while it streams in and refused at the limit. Both answer
 * 413 `payload_too_large`.
 *
 * A chunked body that fits is read whole and handed on in a new request built from the method,
 * URL, headers and those bytes. Hono's own `bodyLimit` builds it from the request itself
 * (`new Request(raw, { body })`), which copies `request.signal`: reading that signal makes
 * Deno.serve warn about its legacy abort behaviour to everyone running the service.
 */
import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../core/api_error.ts";

// Largest JSON body, in bytes.
const JSON_BODY_LIMIT = 16 * 1024;
// Largest dashboard form body, and batch of payouts, in bytes.
const LARGE_BODY_LIMIT = 64 * 1024;

// The paths whose bodies may be that large.
function takesLargeBody(path: string): boolean {
  return path.startsWith("/dashboard/") || path === "/v1/tx/batch";
}

function tooLarge(maxSize: number): never {
  throw new ApiError("payload_too_large", `The request body is larger than ${maxSize / 1024} KB`);
}

/** Reads a body sent without a length, at most `maxSize` bytes, and hands the bytes on. */
async function readBounded(c: Context, body: ReadableStream<Uint8Array>, maxSize: number) {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxSize) {
      await reader.cancel();
      tooLarge(maxSize);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  const { method, url, headers } = c.req.raw;
  c.req.raw = new Request(url, { method, headers, body: bytes });
}

function limitOf(maxSize: number): MiddlewareHandler {
  return async function limit(c, next) {
    const { headers, body } = c.req.raw;
    const length = headers.get("content-length");
    if (length !== null && !headers.has("transfer-encoding")) {
      if (Number.parseInt(length, 10) > maxSize) tooLarge(maxSize);
    } else if (body !== null) {
      await readBounded(c, body, maxSize);
    }
    await next();
  };
}

/** Middleware bounding every request body by its path's limit. */
export function bodyLimits(): MiddlewareHandler {
  const json = limitOf(JSON_BODY_LIMIT);
  const large = limitOf(LARGE_BODY_LIMIT);
  return function bodyLimits(c, next) {
    // Most requests carry no body; they skip the path test and the limiter's own layer.
    if (c.req.raw.body === null) return next();
    return takesLargeBody(c.req.path) ? large(c, next) : json(c, next);
  };
}
