/**
 * Per-process state of webhook delivery (how names are resolved, which extra roots are trusted,
 * how long an attempt may take) and the context of the code that sends webhooks.
 */
import type { BaseContext } from "../base_context.ts";

/**
 * Resolves a host name to its IP addresses (IPv4 and IPv6); rejects when it has none. Tests put a
 * stand-in here, to point a name at any address.
 */
export type HostResolver = (hostname: string, signal: AbortSignal) => Promise<string[]>;

/** Per-process state of webhook delivery. */
export interface WebhookRuntime {
  /** The resolver every delivery uses (the system's DNS by default). */
  resolve: HostResolver;
  /** Root certificates trusted besides the system's, in PEM (none by default; tests add a local CA). */
  caCerts: string[];
  /** Time one attempt may take, from resolving the name to the answer's head (10 s; tests shorten it). */
  attemptTimeoutMs: number;
}

/** The services and the webhook state: what sending a webhook takes. */
export interface WebhookContext extends BaseContext {
  webhooks: WebhookRuntime;
}

/** How long one delivery attempt may take. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** Builds the webhook runtime of one process. */
export function createWebhookRuntime(): WebhookRuntime {
  return { resolve: resolveWithDns, caCerts: [], attemptTimeoutMs: ATTEMPT_TIMEOUT_MS };
}

/** The system's resolver: A and AAAA records (hosts file included), IPv4 first. */
export async function resolveWithDns(hostname: string, signal: AbortSignal): Promise<string[]> {
  const [v4, v6] = await Promise.allSettled([
    Deno.resolveDns(hostname, "A", { signal }),
    Deno.resolveDns(hostname, "AAAA", { signal }),
  ]);
  const addresses = [
    ...(v4.status === "fulfilled" ? v4.value : []),
    ...(v6.status === "fulfilled" ? v6.value : []),
  ];
  if (addresses.length > 0) return addresses;
  const reason = v4.status === "rejected" ? v4.reason : "no address";
  throw new Error(
    `${hostname} does not resolve: ${reason instanceof Error ? reason.message : reason}`,
  );
}
