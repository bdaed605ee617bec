/**
 * A project's webhook endpoints as the dashboard changes them: add (the URL checked, its addresses
 * too), remove, rotate the signing secret, replay a delivery. A new secret is answered once, to be
 * shown once; it is stored only sealed.
 */
import { ApiError } from "../../core/api_error.ts";
import { commitWithRetry, RETRY } from "../../core/commit_retry.ts";
import { ulid } from "../../core/ids.ts";
import { getFeedEvent } from "../../kv/event_feed.ts";
import {
  getWebhookDelivery,
  setWebhookDelivery,
  type WebhookDelivery,
} from "../../kv/webhook_deliveries.ts";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpointEntry,
  getWebhookTargetsEntry,
  MAX_WEBHOOK_ENDPOINTS,
  updateWebhookEndpointSecrets,
  type WebhookEndpoint,
  WebhookEndpointConflictError,
} from "../../kv/webhooks.ts";
import { noteWebhookChange, webhookAudit } from "./audit.ts";
import { addAuditEntry } from "../../kv/audit_log.ts";
import { parseEndpointUrl, resolveDestination } from "./destination.ts";
import { addDeliverJob } from "./fan_out.ts";
import type { WebhookContext } from "./runtime.ts";
import { generateSigningSecret } from "./signature.ts";
import { rotatedSecrets, sealSigningSecret } from "./secrets.ts";
import { memberRule } from "../auth/roles.ts";

/** How long adding an endpoint waits for its name to resolve. */
const RESOLVE_WAIT_MS = 5_000;

/** An endpoint as the dashboard and its JSON show it: never a secret. */
export interface WebhookEndpointView {
  id: string;
  url: string;
  createdAt: number;
  rotatedAt: number | null;
  /** The wallet address of the member who added it; null when added before makers were recorded. */
  createdBy: string | null;
  /** While a rotation's overlap lasts: when the secret before stops signing; else null. */
  previousSecretUntil: number | null;
}

/** The view of an endpoint at `now`. */
export function webhookEndpointView(endpoint: WebhookEndpoint, now: number): WebhookEndpointView {
  const until = endpoint.previous?.until ?? null;
  return {
    id: endpoint.id,
    url: endpoint.url,
    createdAt: endpoint.createdAt,
    rotatedAt: endpoint.rotatedAt,
    createdBy: endpoint.createdBy ?? null,
    previousSecretUntil: until !== null && until > now ? until : null,
  };
}

/** An endpoint with its new signing secret: the only time the secret is answered. */
export interface EndpointWithSecret {
  endpoint: WebhookEndpointView;
  secret: string;
}

/**
 * Adds an endpoint to the project for the member `actor`, who must still have `webhooks` when it
 * commits (`memberRule`): 400 `invalid_settings` for a URL the rules refuse (checked on the
 * addresses its name resolves to now, and again before every delivery) or one already added,
 * 403 `webhook_limit_reached` past 5.
 */
export async function addWebhookEndpoint(
  ctx: WebhookContext,
  input: { projectId: string; url: unknown; actor: string },
): Promise<EndpointWithSecret> {
  const { projectId } = input;
  const rules = { allowLoopback: ctx.config.webhooksAllowLoopback };
  const url = parseEndpointUrl(input.url, rules);
  if (typeof url === "string") throw invalidUrl(url);
  await checkAddresses(ctx, url);
  const secret = generateSigningSecret();
  const now = ctx.clock.now();
  const endpoint: WebhookEndpoint & { createdBy: string } = {
    id: ulid(now),
    projectId,
    url: url.href,
    createdAt: now,
    secretEnc: await sealSigningSecret(ctx.keys, projectId, secret),
    previous: null,
    rotatedAt: null,
    createdBy: input.actor,
  };
  const change = {
    action: "webhook_endpoint_added",
    projectId,
    actor: input.actor,
    endpointId: endpoint.id,
    url: endpoint.url,
  } as const;
  try {
    await createWebhookEndpoint(ctx.kv, endpoint, {
      sealedUnder: ctx.keys.current.id,
      makerRule: memberRule("webhooks"),
      audit: webhookAudit(change, now),
    });
  } catch (error) {
    if (!(error instanceof WebhookEndpointConflictError)) throw error;
    if (error.reason === "duplicate") throw invalidUrl("is already an endpoint of this project");
    throw new ApiError(
      "webhook_limit_reached",
      `The project already has ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints`,
    );
  }
  noteWebhookChange(change);
  return { endpoint: webhookEndpointView(endpoint, now), secret };
}

/** Removes an endpoint: no event committed from now on goes to it. Null when it was not there. */
export async function removeWebhookEndpoint(
  ctx: WebhookContext,
  input: { projectId: string; endpointId: string; actor: string },
): Promise<WebhookEndpointView | null> {
  const now = ctx.clock.now();
  const changeOf = (removed: WebhookEndpoint) => ({
    action: "webhook_endpoint_removed" as const,
    projectId: input.projectId,
    actor: input.actor,
    endpointId: removed.id,
    url: removed.url,
  });
  const removed = await deleteWebhookEndpoint(ctx.kv, input.projectId, input.endpointId, {
    audit: (endpoint) => webhookAudit(changeOf(endpoint), now),
  });
  if (!removed) return null;
  noteWebhookChange(changeOf(removed));
  return webhookEndpointView(removed, now);
}

/**
 * Gives an endpoint a new signing secret; the one before keeps signing beside it for 24 hours,
 * unless `dropPrevious` (it leaked). 404 `webhook_not_found` when the project has no such endpoint.
 */
export async function rotateWebhookSecret(
  ctx: WebhookContext,
  input: { projectId: string; endpointId: string; dropPrevious: boolean; actor: string },
): Promise<EndpointWithSecret> {
  const secret = generateSigningSecret();
  const nextEnc = await sealSigningSecret(ctx.keys, input.projectId, secret);
  return await commitWithRetry("rotate the webhook secret", async () => {
    const entry = await getWebhookEndpointEntry(ctx.kv, input.projectId, input.endpointId);
    if (!entry.value) throw webhookNotFound();
    const now = ctx.clock.now();
    const next = rotatedSecrets(entry.value, { nextEnc, now, dropPrevious: input.dropPrevious });
    const change = {
      action: "webhook_secret_rotated",
      projectId: input.projectId,
      actor: input.actor,
      endpointId: entry.value.id,
      url: entry.value.url,
      droppedPrevious: input.dropPrevious,
    } as const;
    const saved = await updateWebhookEndpointSecrets(ctx.kv, entry, {
      ...next,
      sealedUnder: ctx.keys.current.id,
      audit: webhookAudit(change, now),
    });
    if (!saved) return RETRY;
    noteWebhookChange(change);
    return { endpoint: webhookEndpointView({ ...entry.value, ...next }, now), secret };
  }, { rounds: 10 });
}

/**
 * Sends a logged delivery's event to its endpoint again, as a new delivery with its own retries
 * (the same event id, signed anew). 404 `delivery_not_found` when the delivery is not in the log,
 * its endpoint was removed, or its event has left the feed (7 days).
 */
export async function replayWebhookDelivery(
  ctx: WebhookContext,
  input: { projectId: string; deliveryId: string; actor: string },
): Promise<WebhookDelivery> {
  const { projectId } = input;
  const now = ctx.clock.now();
  const original = await getWebhookDelivery(ctx.kv, projectId, input.deliveryId);
  if (!original) throw deliveryNotFound("No such delivery in this project's log");
  const [targets, endpoint, event] = await Promise.all([
    getWebhookTargetsEntry(ctx.kv, projectId),
    getWebhookEndpointEntry(ctx.kv, projectId, original.endpointId),
    getFeedEvent(ctx.kv, projectId, { id: original.eventId, now }),
  ]);
  if (!endpoint.value) throw deliveryNotFound("Its endpoint was removed");
  if (!event) throw deliveryNotFound("Its event is no longer in the feed (events are kept 7 days)");
  // Checked on the endpoint list, so an endpoint removed meanwhile gets no replay.
  const op = ctx.kv.atomic().check(targets);
  const deliveryId = addDeliverJob(op, {
    projectId,
    endpointId: endpoint.value.id,
    eventId: event.id,
    now,
    runAt: now,
    trigger: "replay",
  });
  const queued: WebhookDelivery = {
    id: deliveryId,
    endpointId: endpoint.value.id,
    url: endpoint.value.url,
    eventId: event.id,
    eventType: event.type,
    trigger: "replay",
    status: "queued",
    attempts: 0,
    createdAt: now,
    updatedAt: now,
    nextAttemptAt: now,
    responseStatus: null,
    error: null,
    answer: null,
    durationMs: null,
  };
  setWebhookDelivery(op, projectId, queued);
  const change = {
    action: "webhook_delivery_replayed",
    projectId,
    actor: input.actor,
    endpointId: endpoint.value.id,
    url: endpoint.value.url,
    deliveryId,
    replayOf: original.id,
  } as const;
  addAuditEntry(op, webhookAudit(change, now));
  if (!(await op.commit()).ok) throw deliveryNotFound("Its endpoint was removed");
  ctx.jobWaker.wake();
  noteWebhookChange(change);
  return queued;
}

/** 404 `webhook_not_found`. */
export function webhookNotFound(): ApiError {
  return new ApiError("webhook_not_found", "No such webhook endpoint in this project");
}

function deliveryNotFound(why: string): ApiError {
  return new ApiError("delivery_not_found", `Cannot replay the delivery: ${why}`);
}

function invalidUrl(problem: string): ApiError {
  return new ApiError("invalid_settings", `url: ${problem}`);
}

// Resolves the URL's host now and refuses it when an address is not allowed or none is found.
async function checkAddresses(ctx: WebhookContext, url: URL): Promise<void> {
  const signal = AbortSignal.timeout(RESOLVE_WAIT_MS);
  let destination;
  try {
    destination = await resolveDestination(url, {
      allowLoopback: ctx.config.webhooksAllowLoopback,
      resolve: ctx.webhooks.resolve,
      signal,
    });
  } catch {
    throw invalidUrl(
      signal.aborted
        ? `${url.hostname} did not resolve within ${RESOLVE_WAIT_MS / 1000} s`
        : `${url.hostname} does not resolve to any address`,
    );
  }
  if ("refused" in destination) throw invalidUrl(destination.refused);
}
