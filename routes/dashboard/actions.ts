/**
 * Dashboard form actions (POST). Each is a plain HTML form post answered with a 303 redirect and a
 * flash message, or JSON for a script sending `Accept: application/json`. The same-origin check
 * comes first on every one, before the session.
 */
import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { sameOrigin } from "../../http/same_origin.ts";
import { sendTestPing } from "../../lib/events/publish.ts";
import { addWatch, removeWatch, validateWatch } from "../../lib/watches/watches.ts";
import { log } from "../../core/log.ts";
import { projectView } from "../../lib/projects/project_view.ts";
import { createProjectWallet } from "../../lib/projects/wallet.ts";
import { dashboardAction } from "../../http/form_action.ts";
import { projectAction } from "./_action.ts";
import { pickText, readText } from "../../lib/projects/fields.ts";
import { createProjectKey, readKeyScopes, revokeProjectKey } from "../../lib/projects/keys.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { describePing } from "../../components/dashboard/ping_message.ts";
import { policyDraft } from "../../lib/projects/policy_form.ts";
import { saveDashboardPolicy } from "../../lib/projects/policy_change.ts";
import { createDeveloperProject, deleteDeveloperProject } from "../../lib/projects/ownership.ts";
import {
  changesConnectApp,
  saveProjectSettings,
  SETTINGS_DRAFT_FIELDS,
} from "../../lib/projects/settings.ts";
import { CAPABILITIES, insufficientRole, roleAllows } from "../../lib/auth/roles.ts";

const SETTINGS_FORMS = ["general", "oauth", "connect_app", "events", "alerts"];

/** `POST /dashboard/projects` and `POST /dashboard/projects/:id/...`. */
export function dashboardActionRoutes(ctx: AppContext): Hono {
  const origin = sameOrigin({ baseUrl: ctx.config.baseUrl });
  const baseUrl = ctx.config.baseUrl;
  return new Hono()
    .post(
      "/dashboard/projects",
      origin,
      dashboardAction(ctx, {
        back: () => "/dashboard",
        form: "create",
        draft: (fields) => pickText(fields, ["name", "cluster"]),
      }, async ({ developer, fields }) => {
        const project = await createDeveloperProject(ctx, developer, fields);
        return {
          status: 201,
          json: projectView(project, baseUrl),
          flash: {
            kind: "success",
            message: `Project ${project.name} created on ${project.cluster}`,
          },
          redirect: projectPath(project.id),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/delete",
      origin,
      dashboardAction(ctx, {
        back: (c) => projectPath(c.req.param("id")!, "delete"),
      }, async ({ c, developer, fields }) => {
        const project = await deleteDeveloperProject(
          ctx,
          developer,
          c.req.param("id")!,
          readText(fields.name),
        );
        return {
          json: { ok: true },
          flash: { kind: "success", message: `Project ${project.name} deleted` },
          redirect: "/dashboard",
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/keys",
      origin,
      projectAction(ctx, {
        tab: "keys",
        can: "keys",
        form: "keys",
      }, async ({ developer, fields, project }) => {
        const { record, plaintext } = await createProjectKey(ctx, {
          developer,
          projectId: project.id,
          scopes: readKeyScopes(fields),
        });
        return {
          status: 201,
          json: {
            id: record.id,
            key: plaintext,
            preview: record.preview,
            scopes: record.scopes,
            createdAt: record.createdAt,
          },
          flash: {
            kind: "success",
            message: "API key created",
            newKey: { id: record.id, plaintext },
          },
          redirect: projectPath(project.id, "keys"),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/keys/:keyId/revoke",
      origin,
      projectAction(ctx, {
        tab: "keys",
        can: "keys",
        form: "keys",
        readBody: false,
      }, async ({ c, developer, project }) => {
        await revokeProjectKey(ctx, {
          developer,
          projectId: project.id,
          keyId: c.req.param("keyId")!,
        });
        return {
          json: { ok: true },
          flash: {
            kind: "success",
            message: "API key revoked: it stops working within 30 seconds",
          },
          redirect: projectPath(project.id, "keys"),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/wallet",
      origin,
      projectAction(ctx, {
        tab: "",
        can: "wallet",
        form: "wallet",
        readBody: false,
      }, async ({ developer, project }) => {
        const walletAddress = await createProjectWallet(ctx, project.id, { actor: developer });
        log("info", "Managed wallet created", { projectId: project.id, walletAddress });
        return {
          status: 201,
          json: { walletAddress },
          flash: {
            kind: "success",
            message: `Managed wallet created: ${walletAddress}. Fund it to send transactions.`,
          },
          redirect: projectPath(project.id),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/settings",
      origin,
      projectAction(ctx, {
        tab: "settings",
        can: "settings",
        form: (fields) => settingsForm(fields),
        draft: (fields) => pickText(fields, SETTINGS_DRAFT_FIELDS),
      }, async ({ developer, fields, project, role }) => {
        const { form: _form, ...settings } = fields;
        if (changesConnectApp(settings) && !roleAllows(role, "connect")) {
          throw insufficientRole(role, CAPABILITIES.connect, "The app connecting the game");
        }
        const saved = await saveProjectSettings(ctx, project, settings, { actor: developer });
        return {
          json: { settings: saved },
          flash: { kind: "success", message: "Settings saved", form: settingsForm(fields) },
          redirect: projectPath(project.id, "settings"),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/policy",
      origin,
      projectAction(ctx, {
        tab: "policy",
        can: "policy",
        form: "policy",
        draft: policyDraft,
      }, async ({ developer, fields, project, role }) => {
        const policy = await saveDashboardPolicy(ctx, { project, developer, role }, fields);
        return {
          json: { policy },
          flash: { kind: "success", message: "Policy saved", form: "policy" },
          redirect: projectPath(project.id, "policy"),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/watches",
      origin,
      projectAction(ctx, {
        tab: "watches",
        can: "watches",
        form: "watch",
        draft: (fields) => pickText(fields, ["name", "address"]),
      }, async ({ developer, fields, project }) => {
        const input = { name: single(fields.name), address: single(fields.address) };
        // A refused watch costs nothing, so only a valid one is counted.
        validateWatch(input);
        await ctx.abuse.take("watch_create", developer);
        const watch = await addWatch(ctx, project.id, input, { actor: developer });
        return {
          status: 201,
          json: {
            watch: {
              id: watch.id,
              name: watch.name,
              address: watch.address,
              createdAt: watch.createdAt,
            },
          },
          flash: { kind: "success", message: `Watching ${watch.address} as ${watch.name}` },
          redirect: projectPath(project.id, "watches"),
        };
      }),
    )
    .post(
      // By id, never by name: a name such as `..` in a path would resolve to another action.
      "/dashboard/projects/:id/watches/:watchId/delete",
      origin,
      projectAction(ctx, {
        tab: "watches",
        can: "watches",
        form: "watches",
        readBody: false,
      }, async ({ c, developer, project }) => {
        const removed = await removeWatch(ctx, project.id, c.req.param("watchId")!, {
          actor: developer,
        });
        return {
          json: { ok: true, removed: removed !== null },
          flash: removed
            ? { kind: "success", message: `Stopped watching ${removed.name}` }
            : { kind: "info", message: "That watch was already removed; nothing changed" },
          redirect: projectPath(project.id, "watches"),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/ping",
      origin,
      projectAction(ctx, {
        tab: "settings",
        can: "ping",
        form: "ping",
      }, async ({ developer, fields, project }) => {
        await ctx.abuse.take("test_ping", developer);
        const result = await sendTestPing(ctx, project.id, { actor: developer });
        return {
          json: result,
          flash: {
            kind: result.ok ? "success" : "error",
            message: describePing(result),
            form: "ping",
          },
          redirect: readText(fields.from) === "events"
            ? projectPath(project.id, "events")
            : `${projectPath(project.id, "settings")}#events`,
        };
      }),
    );
}

function settingsForm(fields: Record<string, unknown>): string | undefined {
  const form = readText(fields.form);
  return typeof form === "string" && SETTINGS_FORMS.includes(form) ? form : undefined;
}

function single(value: unknown): unknown {
  return Array.isArray(value) ? value[value.length - 1] : value;
}
