/**
 * The owner's key export (`lib/projects/key_export.ts`): the page, preparing the statement to
 * sign, the page that signs it, and the signed confirmation, which answers the key once (JSON for
 * a script; for a browser, the page itself rather than a redirect: the key never travels in the
 * flash cookie). Each needs the owner (`export_key`).
 */
import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { sameOrigin } from "../../http/same_origin.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { readText } from "../../lib/projects/fields.ts";
import { readStatement } from "../../lib/auth/statements.ts";
import {
  confirmKeyExport,
  MAX_KEY_EXPORTS_PER_DAY,
  prepareKeyExport,
} from "../../lib/projects/key_export.ts";
import { exportsToday, getKeyExports } from "../../kv/key_exports.ts";
import { isLocalOrigin } from "../../lib/config.ts";
import { StatementPage } from "../../components/dashboard/statement_page.tsx";
import { ExportedKeyPage, KeyExportPage } from "../../components/dashboard/key_export_page.tsx";
import { pageResponse } from "../../components/layout.tsx";
import { projectPage } from "./_page.tsx";
import { projectAction } from "./_action.ts";

/** `GET`/`POST /dashboard/projects/:id/export...`. */
export function keyExportRoutes(ctx: AppContext): Hono {
  const origin = sameOrigin({ baseUrl: ctx.config.baseUrl });
  const page = (id: string) => projectPath(id, "export");
  return new Hono()
    .get("/dashboard/projects/:id/export", (c) =>
      projectPage(ctx, c, async (data, project) => {
        const { value } = await getKeyExports(ctx.kv, project.id);
        return {
          title: `Export the key · ${project.name}`,
          body: (
            <KeyExportPage
              {...data}
              project={project}
              enabled={ctx.config.keyExport}
              exports={value}
              left={Math.max(0, MAX_KEY_EXPORTS_PER_DAY - exportsToday(value, ctx.clock.now()))}
              perDay={MAX_KEY_EXPORTS_PER_DAY}
            />
          ),
        };
      }, { can: "export_key" }))
    .post(
      "/dashboard/projects/:id/export/prepare",
      origin,
      projectAction(ctx, { tab: "export", can: "export_key", readBody: false }, async (
        { developer, project, role },
      ) => {
        const { nonce, message, expiresAt } = await prepareKeyExport(ctx, {
          project,
          developer,
          role,
        });
        return {
          status: 201,
          json: { nonce, message, expiresAt },
          flash: { kind: "info", message: "Sign to export the wallet's key" },
          redirect: `${page(project.id)}/confirm?nonce=${nonce}`,
        };
      }),
    )
    .get(
      "/dashboard/projects/:id/export/confirm",
      (c) =>
        projectPage(ctx, c, async (data, project) => ({
          title: `Confirm the key export · ${project.name}`,
          body: (
            <StatementPage
              {...data}
              project={project}
              tab="export"
              heading="Confirm the key export"
              statement={await readStatement(ctx, {
                nonce: c.req.query("nonce") ?? "",
                purpose: "key_export",
                projectId: project.id,
                developer: data.developer,
              })}
              action={page(project.id)}
              back={page(project.id)}
              sandbox={isLocalOrigin(ctx.config.baseUrl)}
            />
          ),
        }), { can: "export_key" }),
    )
    .post(
      "/dashboard/projects/:id/export",
      origin,
      projectAction(ctx, { tab: "export", can: "export_key", form: "statement" }, async (
        { developer, fields, project, role },
      ) => {
        const nonce = readText(fields.nonce);
        const signature = readText(fields.signature);
        const key = await confirmKeyExport(ctx, { project, developer, role }, {
          nonce: typeof nonce === "string" ? nonce : "",
          signature: typeof signature === "string" ? signature : "",
        });
        return {
          json: { key },
          flash: { kind: "success", message: "Exported" },
          redirect: page(project.id),
          page: (c) =>
            pageResponse(c, {
              title: `The wallet's key · ${project.name}`,
              body: (
                <ExportedKeyPage
                  serviceName={ctx.config.serviceName}
                  developer={developer}
                  flash={null}
                  role={role}
                  project={project}
                  exported={key}
                />
              ),
            }),
        };
      }),
    );
}
