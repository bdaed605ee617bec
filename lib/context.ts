/**
 * Everything a request or job needs, built once per process and passed down explicitly: the
 * services (`base_context.ts`) and the per-process state of the event pipeline, of the
 * transaction routes and of webhook delivery. Routes, jobs and `lib/projects/` hold it; a domain below takes the part it
 * uses (`BaseContext`, `EventContext`, `TxContext`).
 */
import type { Clock } from "../core/clock.ts";
import type { Config } from "./config.ts";
import { type BaseContext, createBaseContext } from "./base_context.ts";
import { createEventRuntime, type EventRuntime } from "./events/runtime.ts";
import { createTxRuntime, type TxRuntime } from "./tx/runtime.ts";
import { createWebhookRuntime, type WebhookRuntime } from "./webhooks/runtime.ts";

/** The service's shared dependencies. */
export type AppContext = BaseContext & {
  /** Event pipeline state: cached publish targets, feed locks and ends, attempt timeout. */
  events: EventRuntime;
  /** Transaction routes' timing (tests shorten it), mint cache and reservation lock. */
  tx: TxRuntime;
  /** Webhook delivery: the resolver, extra trusted roots and attempt timeout (tests change them). */
  webhooks: WebhookRuntime;
};

/** Builds the context for one process (or one test). */
export async function createAppContext(
  input: { kv: Deno.Kv; config: Config; clock?: Clock },
): Promise<AppContext> {
  const base = await createBaseContext(input);
  return {
    ...base,
    events: createEventRuntime(base.kv, base.clock),
    tx: createTxRuntime(base.clock),
    webhooks: createWebhookRuntime(),
  };
}
