// JSON-RPC 2.0 dispatch (single and batch requests) over a table of method handlers.
import { parseJson } from "./json.ts";
import {
  internalError,
  invalidRequest,
  methodNotFound,
  parseError,
  RpcError,
} from "./rpc_errors.ts";
import type { LedgerState } from "./state.ts";

export type RpcHandler = (state: LedgerState, params: unknown[]) => unknown;

type Response = {
  jsonrpc: "2.0";
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
};

function errorResponse(id: unknown, error: RpcError): Response {
  const body: Response["error"] = { code: error.code, message: error.message };
  if (error.data !== undefined) body.data = error.data;
  return { jsonrpc: "2.0", error: body, id };
}

async function handleOne(
  state: LedgerState,
  methods: Record<string, RpcHandler>,
  request: unknown,
): Promise<Response> {
  if (
    typeof request !== "object" || request === null || Array.isArray(request) ||
    (request as { jsonrpc?: unknown }).jsonrpc !== "2.0" ||
    typeof (request as { method?: unknown }).method !== "string"
  ) {
    return errorResponse(null, invalidRequest());
  }
  const { id = null, method, params } = request as {
    id?: unknown;
    method: string;
    params?: unknown;
  };
  const handler = Object.hasOwn(methods, method) ? methods[method] : undefined;
  if (!handler) return errorResponse(id, methodNotFound());
  try {
    // Solana methods take positional params; DAS methods take one named-params object.
    const list = Array.isArray(params)
      ? params
      : typeof params === "object" && params
      ? [params]
      : [];
    const result = await handler(state, list);
    return { jsonrpc: "2.0", result, id };
  } catch (e) {
    if (e instanceof RpcError) return errorResponse(id, e);
    state.options.log({ event: "rpc_internal_error", method, error: String(e) });
    return errorResponse(id, internalError());
  }
}

/** Answers a JSON-RPC body (single request or batch); null when nothing is to be sent. */
export async function dispatchJsonRpc(
  state: LedgerState,
  methods: Record<string, RpcHandler>,
  body: string,
): Promise<unknown> {
  let request: unknown;
  try {
    request = parseJson(body);
  } catch {
    return errorResponse(null, parseError());
  }
  if (Array.isArray(request)) {
    if (request.length === 0) return errorResponse(null, invalidRequest());
    const out = [];
    for (const item of request) out.push(await handleOne(state, methods, item));
    return out;
  }
  return handleOne(state, methods, request);
}
