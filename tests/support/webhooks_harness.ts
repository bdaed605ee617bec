/**
 * Webhooks under test: the real app and job worker on a KV, a webhook receiver over HTTPS on
 * loopback (a certificate for `hooks.example.test`, signed by a test CA the app is told to trust),
 * and a DNS stand-in: the delivery code's resolver, pointing any name at any address.
 */
import type { Project } from "../../kv/projects.ts";
import type { ManualClock } from "../../core/clock.ts";
import { JobWorker, type JobWorkerOptions } from "../../jobs/worker.ts";
import type { Config } from "../../lib/config.ts";
import type { HostResolver } from "../../lib/webhooks/runtime.ts";
import { addWebhookEndpoint, type EndpointWithSecret } from "../../lib/webhooks/endpoints.ts";
import {
  type ReceiverOptions,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../../sandbox/webhooks/receiver.ts";
import { createTestApp, createTestProject, type TestApp } from "./test_app.ts";
import { drain } from "./events_harness.ts";

const TLS_DIR = new URL("./webhook_tls/", import.meta.url);
/** The name the test certificate is for. */
export const HOOK_HOST = "hooks.example.test";
/** The test CA's certificate (its key was thrown away once the receiver's certificate was signed). */
export const TEST_CA = Deno.readTextFileSync(new URL("ca.pem", TLS_DIR));
/** The receiver's certificate and key, for `hooks.example.test`. */
export const RECEIVER_TLS = {
  cert: Deno.readTextFileSync(new URL("cert.pem", TLS_DIR)),
  key: Deno.readTextFileSync(new URL("key.pem", TLS_DIR)),
};

/** A DNS stand-in: `names` maps a host name to its addresses (changeable while running). */
export function standInResolver(names: Map<string, string[]>): HostResolver {
  return (hostname) => {
    const addresses = names.get(hostname);
    if (!addresses || addresses.length === 0) {
      return Promise.reject(new Error(`${hostname} does not resolve`));
    }
    return Promise.resolve([...addresses]);
  };
}

/**
 * Points an app's webhook delivery at the stand-ins: the DNS stand-in (answering
 * `hooks.example.test` with 127.0.0.1 until changed through the map returned), the test CA, and an
 * attempt timeout of `timeoutMs` (default 1 s).
 */
export function useWebhookStandIns(
  t: TestApp,
  options: { timeoutMs?: number | undefined } = {},
): Map<string, string[]> {
  const names = new Map([[HOOK_HOST, ["127.0.0.1"]]]);
  t.ctx.webhooks.resolve = standInResolver(names);
  t.ctx.webhooks.caCerts = [TEST_CA];
  t.ctx.webhooks.attemptTimeoutMs = options.timeoutMs ?? 1_000;
  return names;
}

/** A running harness; `close()` stops everything it started. */
export interface WebhooksHarness extends AsyncDisposable {
  t: TestApp;
  worker: JobWorker;
  project: Project;
  apiKey: string;
  /** The HTTPS receiver, reached as `https://hooks.example.test:<port>`. */
  receiver: WebhookReceiver;
  /** What the DNS stand-in answers; `hooks.example.test` is 127.0.0.1 to begin with. */
  names: Map<string, string[]>;
  /** The receiver's URL with `path`. */
  hookUrl(path?: string): string;
  /** Adds an endpoint to the project as the dashboard does. */
  addEndpoint(url?: string): Promise<EndpointWithSecret>;
  /** Runs worker passes until nothing is due at the current clock time. */
  drain(): Promise<number>;
  /** Starts another receiver (closed with the harness). */
  receiverAt(options?: ReceiverOptions): Promise<WebhookReceiver>;
  close(): Promise<void>;
}

/**
 * Starts the harness: loopback is allowed (the receiver is on this machine) unless `config` says
 * otherwise, and one attempt times out after `timeoutMs` (default 1 s).
 */
export async function startWebhooksHarness(options: {
  config?: Partial<Config>;
  kvPath?: string;
  timeoutMs?: number;
  worker?: JobWorkerOptions;
  clock?: ManualClock;
} = {}): Promise<WebhooksHarness> {
  const t = await createTestApp({
    kvPath: options.kvPath,
    clock: options.clock,
    config: { webhooksAllowLoopback: true, ...options.config },
  });
  const names = useWebhookStandIns(t, { timeoutMs: options.timeoutMs });
  const worker = new JobWorker(t.ctx, { owner: "w", ...options.worker });
  const receivers: WebhookReceiver[] = [];
  const receiverAt = async (receiverOptions: ReceiverOptions = { tls: RECEIVER_TLS }) => {
    const started = await startWebhookReceiver(receiverOptions);
    receivers.push(started);
    return started;
  };
  const receiver = await receiverAt();
  const { project, apiKey } = await createTestProject(t);
  const hookUrl = (path = "/hooks") => `https://${HOOK_HOST}:${receiver.port}${path}`;
  const close = async () => {
    // Receivers first: a request they hold is answered, so a running attempt ends at once.
    for (const r of receivers) await r.close();
    await worker.stop();
    await t.close();
  };
  return {
    t,
    worker,
    project,
    apiKey,
    receiver,
    names,
    hookUrl,
    addEndpoint: (url = hookUrl()) =>
      addWebhookEndpoint(t.ctx, { projectId: project.id, url, actor: project.createdBy }),
    drain: () => drain(worker),
    receiverAt,
    close,
    [Symbol.asyncDispose]: close,
  };
}
