import { Hono } from "hono";
import type { AppContext } from "../lib/context.ts";
import { getDeveloperSession } from "../http/developer_session.ts";
import { HomePage } from "../components/home_page.tsx";
import { PrivacyPage } from "../components/privacy_page.tsx";
import { LuauSdkPage } from "../components/luau_sdk_page.tsx";
import { pageResponse } from "../components/layout.tsx";

/**
 * `GET /`: the landing page, where signing out lands too; `GET /privacy`, linked from every linking
 * page; `GET /docs/luau`, the Luau SDK's guide, linked from the home page and the API reference.
 */
export function homeRoutes(ctx: AppContext): Hono {
  return new Hono().get("/privacy", (c) =>
    pageResponse(c, {
      title: `Privacy · ${ctx.config.serviceName}`,
      body: <PrivacyPage serviceName={ctx.config.serviceName} />,
    })).get("/docs/luau", async (c) =>
      pageResponse(c, {
        title: `Luau SDK · ${ctx.config.serviceName}`,
        body: (
          <LuauSdkPage
            serviceName={ctx.config.serviceName}
            baseUrl={ctx.config.baseUrl}
            developer={await getDeveloperSession(ctx, c)}
          />
        ),
      })).get("/", async (c) => {
      const body = (
        <HomePage
          serviceName={ctx.config.serviceName}
          baseUrl={ctx.config.baseUrl}
          developer={await getDeveloperSession(ctx, c)}
        />
      );
      return pageResponse(c, { title: `${ctx.config.serviceName}: Solana for Roblox games`, body });
    });
}
