// The node's HTTP face: JSON-RPC at "/", DAS at "/das", control API at "/control".
import { Hono } from "hono";
import { cors } from "hono/cors";
import { controlApp } from "./control.ts";
import type { FaultScope } from "./faults.ts";
import type { ChainFaults } from "./faults.ts";
import { stringifyJson } from "./json.ts";
import { dispatchJsonRpc, type RpcHandler } from "./rpc_dispatch.ts";
import type { LedgerState } from "./state.ts";

/** Answer of an armed HTTP fault, or null when none applies to this endpoint. */
function httpFault(state: LedgerState, endpoint: FaultScope): Response | null {
  const f = state.faults;
  if (f.httpNext <= 0 || (f.httpScope !== "all" && f.httpScope !== endpoint)) return null;
  f.httpNext -= 1;
  state.options.log({
    event: "fault_applied",
    fault: f.httpFault.mode === "close" ? "http_close" : "http_status",
    endpoint,
    status: f.httpFault.mode === "status" ? f.httpFault.status : null,
    remaining: f.httpNext,
  });
  if (f.httpFault.mode === "status") {
    return new Response(`Service unavailable (sandbox fault)`, { status: f.httpFault.status });
  }
  // Deno.serve cannot drop a connection before answering; announcing a body and ending the
  // stream empty makes the server cut the connection, which clients see as a network failure.
  const body = new ReadableStream({ pull: (controller) => controller.close() });
  return new Response(body, { status: 200, headers: { "content-length": "1024" } });
}

export function createChainApp(
  state: LedgerState,
  faults: ChainFaults,
  methods: { rpc: Record<string, RpcHandler>; das: Record<string, RpcHandler> },
): Hono {
  const app = new Hono();
  app.use("*", cors());
  const rpc =
    (endpoint: "rpc" | "das", table: Record<string, RpcHandler>) =>
    async (c: { req: { raw: Request } }) => {
      const fault = httpFault(state, endpoint);
      if (fault) return fault;
      const answer = await dispatchJsonRpc(state, table, await c.req.raw.text());
      return new Response(stringifyJson(answer), {
        headers: { "content-type": "application/json; charset=utf-8" },
      });
    };
  app.post("/", rpc("rpc", methods.rpc));
  app.post("/das", rpc("das", methods.das));
  app.get("/health", (c) => c.text("ok"));
  app.route("/control", controlApp(state, faults));
  return app;
}
