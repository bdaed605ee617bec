/**
 * The API reference: `/openapi.json` (the generated document, no key needed) and `/docs`, Swagger
 * UI rendering it. Swagger UI's files come from its npm package (`swagger-ui-dist`, pinned in
 * deno.json) through text imports, so they are part of the module graph (and of a Deno Deploy
 * upload) and served from this origin: no CDN, nothing fetched at run time.
 *
 * The page runs under a strict CSP: scripts and styles only from this origin (the viewer's boot
 * is a file here, never an inline script; Swagger UI sets styles through the DOM, which the policy
 * allows, so no `'unsafe-inline'` is needed), no plugins, no framing. The browser test renders it,
 * opens an operation, "Try it out" and the key dialog under this policy with no violation.
 */
import { Hono } from "hono";
import type { AppContext } from "../lib/context.ts";
import { sha256Hex } from "../core/hash.ts";
import { buildOpenApiDocument } from "./v1/openapi.ts";
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "text" };
import swaggerJs from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "text" };

/** The reference page's policy (see the header). */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join("; ");

// Boots the viewer on the page's one element; served as a file so no inline script is needed.
const BOOT_JS = `SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#api-reference",
  deepLinking: true,
  validatorUrl: null,
  defaultModelsExpandDepth: 0,
});
`;

const PAGE_CSS = `body { margin: 0; font-family: system-ui, sans-serif; }
.docs-bar { display: flex; gap: 1rem; align-items: center; padding: .75rem 1rem;
  background: #111827; color: #f9fafb; flex-wrap: wrap; }
.docs-bar a { color: #f9fafb; }
.docs-bar .brand { font-weight: 700; text-decoration: none; margin-right: auto; }
`;

const ASSETS: Record<string, { type: string; body: string }> = {
  "swagger-ui.css": { type: "text/css; charset=utf-8", body: swaggerCss },
  "swagger-ui-bundle.js": { type: "text/javascript; charset=utf-8", body: swaggerJs },
  "boot.js": { type: "text/javascript; charset=utf-8", body: BOOT_JS },
  "page.css": { type: "text/css; charset=utf-8", body: PAGE_CSS },
};

/** `/openapi.json`, `/docs` and the viewer's assets under `/docs/assets/`. */
export function docsRoutes(ctx: AppContext): Hono {
  const { baseUrl, serviceName } = ctx.config;
  const document = JSON.stringify(buildOpenApiDocument({ serverUrl: baseUrl, title: serviceName }));
  const etags = new Map<string, string>();
  return new Hono()
    .get("/openapi.json", (c) => {
      // Public and keyless, so client generators and other origins' tools may fetch it.
      c.header("access-control-allow-origin", "*");
      c.header("cache-control", "no-cache");
      return c.body(document, 200, { "content-type": "application/json; charset=utf-8" });
    })
    .get("/docs", (c) => {
      c.header("content-security-policy", DOCS_CSP);
      c.header("cache-control", "no-cache");
      return c.html(docsPage(serviceName));
    })
    .get("/docs/assets/:name", (c) => {
      const name = c.req.param("name");
      const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
      if (!asset) return c.notFound();
      const etag = etags.get(name) ?? etagOf(asset.body);
      etags.set(name, etag);
      c.header("etag", etag);
      c.header("cache-control", "no-cache");
      if (c.req.header("if-none-match") === etag) return c.body(null, 304);
      return c.body(asset.body, 200, { "content-type": asset.type });
    });
}

function docsPage(serviceName: string): string {
  const name = escapeHtml(serviceName);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>API reference · ${name}</title><link rel="icon" href="data:,">` +
    `<link rel="stylesheet" href="/docs/assets/swagger-ui.css">` +
    `<link rel="stylesheet" href="/docs/assets/page.css"></head><body>` +
    `<header class="docs-bar"><a class="brand" href="/">${name}</a>` +
    `<a href="/docs/luau">Luau SDK</a><a href="/openapi.json">openapi.json</a>` +
    `<a href="/dashboard">Dashboard</a></header>` +
    `<main id="api-reference"></main>` +
    `<script src="/docs/assets/swagger-ui-bundle.js"></script>` +
    `<script src="/docs/assets/boot.js"></script></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function etagOf(body: string): string {
  return `"${sha256Hex(body).slice(0, 24)}"`;
}
