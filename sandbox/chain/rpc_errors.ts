// JSON-RPC errors with the real node's codes and messages (agave rpc/src/custom_error.rs and
// jsonrpc-core).

/** A JSON-RPC error answered in the `error` member of a response. */
export class RpcError extends Error {
  code: number;
  data?: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "RpcError";
    this.code = code;
    this.data = data;
  }
}

export function parseError(): RpcError {
  return new RpcError(-32700, "Parse error");
}

export function invalidRequest(message = "Invalid request"): RpcError {
  return new RpcError(-32600, message);
}

export function methodNotFound(): RpcError {
  return new RpcError(-32601, "Method not found");
}

/** `Invalid params: ...` as jsonrpc-core words serde failures. */
export function invalidParams(message: string): RpcError {
  return new RpcError(-32602, message);
}

/** `Invalid param: ...` as the node words a bad value inside well-formed params. */
export function invalidParam(detail: string): RpcError {
  return new RpcError(-32602, `Invalid param: ${detail}`);
}

export function internalError(message = "Internal error"): RpcError {
  return new RpcError(-32603, message);
}

export function minContextSlotNotReached(contextSlot: number): RpcError {
  return new RpcError(-32016, "Minimum context slot has not been reached", { contextSlot });
}
