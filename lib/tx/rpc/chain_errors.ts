/**
 * Chain client errors as stored in a failed attempt. The spec wants a simulation rejection in the
 * chain client's coded form: `@solana/kit` production builds word every error as
 * `Solana error #<code>; Decode this error by running \`npx @solana/errors decode -- <code> '<context>'\``,
 * whatever NODE_ENV this process runs with, so the form is built here the same way.
 */
import {
  isSolanaError,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  type SolanaError,
} from "@solana/kit";
import { rpcSignal, type TxTiming } from "./timing.ts";

/** True for the JSON-RPC -32002 answer: the node simulated the transaction and refused it. */
export function isSimulationRejection(error: unknown): error is SolanaError {
  return isSolanaError(
    error,
    SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  );
}

// Bulky simulation details stay out of the stored error; the structured log keeps the logs.
const OMITTED_CONTEXT = new Set(["__code", "logs", "accounts", "innerInstructions", "returnData"]);

/** The coded form of a kit error, followed by the coded form of its cause (the on-chain error). */
export function codedErrorText(error: SolanaError): string {
  const parts = [codedForm(error)];
  const cause = (error as { cause?: unknown }).cause;
  if (isSolanaError(cause)) parts.push(`caused by ${codedForm(cause)}`);
  return parts.join("; ");
}

function codedForm(error: SolanaError): string {
  const context = (error.context ?? {}) as Record<string, unknown>;
  const code = context.__code as number;
  const entries = Object.entries(context).filter(([key, value]) =>
    !OMITTED_CONTEXT.has(key) && value !== null && value !== undefined
  );
  let text =
    `Solana error #${code}; Decode this error by running \`npx @solana/errors decode -- ${code}`;
  if (entries.length) text += ` '${encodeContext(entries)}'`;
  return `${text}\``;
}

// The encoding of @solana/errors' context: URL-style pairs, base64.
function encodeContext(entries: Array<[string, unknown]>): string {
  const text = entries.map(([key, value]) => `${key}=${encodeValue(value)}`).join("&");
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function encodeValue(value: unknown): string {
  if (Array.isArray(value)) return `%5B${value.map(encodeValue).join("%2C%20")}%5D`;
  if (typeof value === "bigint") return `${value}n`;
  if (value !== null && typeof value === "object") {
    return encodeURIComponent(
      JSON.stringify(value, (_k, v) => typeof v === "bigint" ? `${v}n` : v),
    );
  }
  return encodeURIComponent(String(value));
}

/** A short reason for an RPC failure, for `Could not build the transaction: <reason>` and logs. */
export function rpcFailureReason(error: unknown): string {
  if (
    error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError")
  ) {
    return "the RPC node did not answer in time";
  }
  if (isSolanaError(error)) {
    const context = (error.context ?? {}) as Record<string, unknown>;
    if (typeof context.statusCode === "number") {
      return `the RPC node answered HTTP ${context.statusCode}`;
    }
    return error.message;
  }
  if (error instanceof TypeError) return "the RPC node could not be reached";
  return error instanceof Error ? error.message : String(error);
}

/**
 * Tries of a read made before anything is sent: a node's passing 503 should not fail every payout
 * sharing that read.
 */
export const READ_TRIES = 3;
// The wait before the first retry, doubled for each further one.
const FIRST_RETRY_MS = 100;

/**
 * Runs a chain read made before sending (the blockhash, a mint) that concurrent requests share,
 * each try with its own call time-out, trying again after a failed transport (an HTTP 5xx or 429,
 * no connection). It follows no request's deadline: the first request's must not cut the read
 * short for the others; each waits for it only until its own (`abortable`). A node's JSON-RPC
 * error answer is not retried: it would answer the same.
 */
export async function retryRead<T>(
  read: (abortSignal: AbortSignal) => Promise<T>,
  options: { timing: TxTiming },
): Promise<T> {
  for (let tried = 1;; tried++) {
    try {
      return await read(rpcSignal(options.timing));
    } catch (error) {
      if (tried >= READ_TRIES || !isTransportFailure(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, FIRST_RETRY_MS * 2 ** (tried - 1)));
    }
  }
}

/** True for a failed transport: no connection, or an HTTP 5xx or 429 instead of an answer. */
export function isTransportFailure(error: unknown): boolean {
  if (error instanceof TypeError) return true;
  if (!isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) return false;
  const status = (error.context as { statusCode?: number }).statusCode ?? 0;
  return status === 429 || status >= 500;
}
