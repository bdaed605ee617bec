/**
 * The webhooks page of a project and its actions: add an endpoint, remove it, rotate its secret,
 * send it a test, replay a delivery. Each action is a plain form post answered with a redirect and
 * a flash message (a new secret rides in the flash, shown once), or JSON for a script; the page
 * answers JSON too when asked (`Accept: application/json`).
 */
import { type Handler, Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { sameOrigin } from "../../http/same_origin.ts";
import { wantsJson } from "../../http/form_action.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { ULID_PATTERN } from "../../core/ids.ts";
import { listWebhookEndpoints } from "../../kv/webhooks.ts";
import { listWebhookDeliveries } from "../../kv/webhook_deliveries.ts";
import {
  addWebhookEndpoint,
  removeWebhookEndpoint,
  replayWebhookDelivery,
  rotateWebhookSecret,
  webhookEndpointView,
} from "../../lib/webhooks/endpoints.ts";
import { sendWebhookPing } from "../../lib/projects/webhook_ping.ts";
import { pickText, readFlag, readText } from "../../lib/projects/fields.ts";
import { invalidSettings } from "../../lib/issue_text.ts";
import type { Project } from "../../kv/projects.ts";
import { WebhooksPage } from "../../components/dashboard/webhooks_page.tsx";
import {
  WEBHOOK_LOG_STATUSES,
  type WebhookLogData,
} from "../../components/dashboard/webhook_log.tsx";
import { projectAction } from "./_action.ts";
import { projectPage } from "./_page.tsx";

const LOG_PAGE_SIZE = 50;

// Every member reads the page and its JSON (`view`); managing endpoints, tests and replays needs
// the `webhooks` capability (a developer or above, as watches): `lib/auth/roles.ts`.
function webhookAction(
  ctx: AppContext,
  options: Omit<Parameters<typeof projectAction>[1], "can">,
  run: Parameters<typeof projectAction>[2],
): Handler {
  return projectAction(ctx, { ...options, can: "webhooks" }, run);
}

/** `GET /dashboard/projects/:id/webhooks` and its `POST` actions. */
export function webhookRoutes(ctx: AppContext): Hono {
  const origin = sameOrigin({ baseUrl: ctx.config.baseUrl });
  const back = (project: Project, anchor = "") => `${projectPath(project.id, "webhooks")}${anchor}`;
  return new Hono()
    .get("/dashboard/projects/:id/webhooks", (c) => {
      // JSON or HTML by `Accept`: no cache may answer one with the other.
      c.header("vary", "accept");
      const filters = logFilters(c.req.query());
      if (wantsJson(c)) {
        // A script reads the endpoints and the log as JSON, through the same session check.
        return projectAction(ctx, {
          tab: "webhooks",
          can: "view",
          readBody: false,
          readOnly: true,
        }, async (
          { project },
        ) => ({
          json: await pageData(ctx, project, filters),
          flash: { kind: "info", message: "" },
          redirect: back(project),
        }))(c, async () => {});
      }
      return projectPage(ctx, c, async (data, project) => ({
        title: `Webhooks · ${project.name}`,
        body: (
          <WebhooksPage {...data} project={project} {...await pageData(ctx, project, filters)} />
        ),
      }));
    })
    .post(
      "/dashboard/projects/:id/webhooks",
      origin,
      webhookAction(ctx, {
        tab: "webhooks",
        form: "webhook",
        draft: (fields) => pickText(fields, ["url"]),
      }, async ({ developer, fields, project }) => {
        const added = await addWebhookEndpoint(ctx, {
          projectId: project.id,
          url: readText(fields.url),
          actor: developer,
        });
        return {
          status: 201,
          json: added,
          flash: {
            kind: "success",
            message: `Webhooks now go to ${added.endpoint.url}`,
            newKey: { id: added.endpoint.id, plaintext: added.secret },
          },
          redirect: back(project),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/webhooks/:endpointId/delete",
      origin,
      webhookAction(ctx, {
        tab: "webhooks",
        form: "webhooks",
        readBody: false,
      }, async ({ c, developer, project }) => {
        const removed = await removeWebhookEndpoint(ctx, {
          projectId: project.id,
          endpointId: c.req.param("endpointId")!,
          actor: developer,
        });
        return {
          json: { ok: true, removed: removed !== null },
          flash: removed
            ? {
              kind: "success",
              message: `Webhooks no longer go to ${removed.url}`,
              form: "webhooks",
            }
            : { kind: "info", message: "That endpoint was already removed", form: "webhooks" },
          redirect: back(project),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/webhooks/:endpointId/rotate",
      origin,
      webhookAction(ctx, {
        tab: "webhooks",
        form: "webhooks",
      }, async ({ c, developer, fields, project }) => {
        const dropPrevious = readFlag(fields.dropPrevious);
        if (dropPrevious === null) throw invalidSettings(["dropPrevious: must be true or false"]);
        const rotated = await rotateWebhookSecret(ctx, {
          projectId: project.id,
          endpointId: c.req.param("endpointId")!,
          dropPrevious: dropPrevious ?? false,
          actor: developer,
        });
        return {
          json: rotated,
          flash: {
            kind: "success",
            message: rotated.endpoint.previousSecretUntil === null
              ? "New signing secret: the old one no longer signs"
              : "New signing secret: the old one also signs for 24 hours",
            newKey: { id: rotated.endpoint.id, plaintext: rotated.secret },
          },
          redirect: back(project),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/webhooks/:endpointId/test",
      origin,
      webhookAction(ctx, {
        tab: "webhooks",
        form: "webhooks",
        readBody: false,
      }, async ({ c, developer, project }) => {
        await ctx.abuse.take("test_ping", developer);
        const result = await sendWebhookPing(ctx, {
          projectId: project.id,
          endpointId: c.req.param("endpointId")!,
          actor: developer,
        });
        return {
          json: result,
          flash: {
            kind: result.ok ? "success" : "error",
            message: result.message,
            form: "webhooks",
          },
          redirect: back(project),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/webhooks/deliveries/:deliveryId/replay",
      origin,
      webhookAction(ctx, {
        tab: "webhooks",
        form: "webhook-log",
        readBody: false,
      }, async ({ c, developer, project }) => {
        await ctx.abuse.take("test_ping", developer);
        const delivery = await replayWebhookDelivery(ctx, {
          projectId: project.id,
          deliveryId: c.req.param("deliveryId")!,
          actor: developer,
        });
        return {
          status: 201,
          json: { delivery },
          flash: {
            kind: "success",
            message: `Event ${delivery.eventId} queued again for ${delivery.url}`,
            form: "webhook-log",
          },
          redirect: back(project, "#log"),
        };
      }),
    );
}

/** The log's filters from the query; a value that is not one of ours is no filter. */
function logFilters(query: Record<string, string>): Omit<WebhookLogData, "deliveries" | "next"> {
  const valid = (value: string | undefined) => value && ULID_PATTERN.test(value) ? value : null;
  return {
    endpointId: valid(query.endpoint),
    status: WEBHOOK_LOG_STATUSES.find((s) => s === query.status) ?? null,
    after: valid(query.after),
  };
}

async function pageData(
  ctx: AppContext,
  project: Project,
  filters: Omit<WebhookLogData, "deliveries" | "next">,
) {
  const now = ctx.clock.now();
  const [endpoints, page] = await Promise.all([
    listWebhookEndpoints(ctx.kv, project.id),
    listWebhookDeliveries(ctx.kv, project.id, {
      limit: LOG_PAGE_SIZE,
      after: filters.after ?? undefined,
      endpointId: filters.endpointId ?? undefined,
      status: filters.status ?? undefined,
    }),
  ]);
  return {
    endpoints: endpoints.map((endpoint) => webhookEndpointView(endpoint, now)),
    log: { ...filters, ...page },
  };
}
