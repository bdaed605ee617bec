import { Hono, type MiddlewareHandler } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { ApiError } from "../../core/api_error.ts";
import { readJsonBody } from "../../http/validate.ts";
import { ensureTxConfirmJob } from "../../lib/tx/follow/confirm_job.ts";
import {
  isUsableKey,
  toRequestInput,
  txBatchSchema,
  txBodySchema,
} from "../../lib/tx/request/request_body.ts";
import { handleTxRequest } from "../../lib/tx/handle_request.ts";
import { handleTxBatch } from "../../lib/tx/handle_batch.ts";
import { TX_ROUTE_KINDS } from "../../core/events.ts";
import { getTxRequest } from "../../kv/tx_requests.ts";
import { txResultOf } from "../../lib/tx/lifecycle/result.ts";
import { afterAdmission, type V1Env } from "./guard.ts";
import { type Deadline, foldSignal, startDeadline } from "../../lib/tx/rpc/timing.ts";

type TxEnv = { Variables: V1Env["Variables"] & { deadline: Deadline } };

/**
 * Starts the request's answer deadline on its arrival, before the key and quota checks, so the
 * route answers within `answerWithinMs` of receiving it whatever they and the RPC take.
 */
function arrived(ctx: AppContext): MiddlewareHandler<TxEnv> {
  return async function arrived(c, next) {
    c.set("deadline", startDeadline(ctx.tx.timing));
    await next();
  };
}

/** The three transaction routes and the batch route (`pay` scope), and the status route (`read`). */
export function txRoutes(
  ctx: AppContext,
  guards: { read: MiddlewareHandler<V1Env>; pay: MiddlewareHandler<V1Env> },
): Hono<TxEnv> {
  const app = new Hono<TxEnv>();
  for (const kind of TX_ROUTE_KINDS) {
    app.post(`/tx/${kind}`, arrived(ctx), guards.pay, async (c) => {
      const caller = { projectId: c.get("project").id, keyId: c.get("keyId") };
      const deadline = c.get("deadline");
      const admission = c.get("admission");
      admission.foldUntil(foldSignal(deadline));
      const result = await afterAdmission(admission, async (admission) => {
        const input = toRequestInput(await readJsonBody(c, txBodySchema(kind)));
        return await handleTxRequest(ctx, caller, kind, input, { deadline, admission });
      });
      return c.json(result);
    });
  }
  app.post("/tx/batch", arrived(ctx), guards.pay, async (c) => {
    const caller = { projectId: c.get("project").id, keyId: c.get("keyId") };
    const deadline = c.get("deadline");
    const admission = c.get("admission");
    admission.foldUntil(foldSignal(deadline));
    const items = await afterAdmission(admission, async (admission) => {
      const { items } = await readJsonBody(c, txBatchSchema);
      const batch = items.map((item) => ({ kind: item.kind, input: toRequestInput(item) }));
      return await handleTxBatch(ctx, caller, batch, { deadline, admission });
    });
    return c.json({ items });
  });
  app.get("/tx/:idempotencyKey", guards.read, async (c) => {
    const key = c.req.param("idempotencyKey");
    const record = isUsableKey(key)
      ? await getTxRequest(ctx.kv, c.get("project").id, key, ctx.clock.now())
      : null;
    if (!record) throw new ApiError("not_found", "No transaction request has this key");
    if (record.status === "submitted") await ensureTxConfirmJob(ctx, record);
    return c.json(txResultOf(record));
  });
  return app;
}
