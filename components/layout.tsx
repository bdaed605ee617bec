/** The shared document around every server-rendered page, and how a page becomes a response. */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ComponentChildren, VNode } from "preact";
import { renderToString } from "preact-render-to-string";
import {
  finishIslands,
  type IslandCollector,
  IslandContext,
  islandPropsScript,
} from "./islands.tsx";
import { PAGE_CSS } from "./styles.ts";

/** Path of the islands bundle the boot script is loaded from. */
export const ISLANDS_SCRIPT_PATH = "/static/islands.js";

/** Renders a full HTML document: the body, then the island props and boot script when any island was rendered. */
export function renderPage(page: { title: string; body: ComponentChildren }): string {
  const collector: IslandCollector = { islands: [] };
  const body = finishIslands(
    renderToString(
      <IslandContext.Provider value={collector}>{page.body}</IslandContext.Provider>,
    ),
  );
  const scripts = collector.islands.length
    ? `${islandPropsScript(collector)}<script type="module" src="${ISLANDS_SCRIPT_PATH}"></script>`
    : "";
  const head = renderToString(
    <>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="same-origin" />
      <title>{page.title}</title>
    </>,
  );
  return `<!doctype html><html lang="en"><head>${head}<style>${PAGE_CSS}</style></head>` +
    `<body>${body}${scripts}</body></html>`;
}

/** Answers a rendered page; the app-wide `securityHeaders` middleware adds the page headers. */
export function pageResponse(
  c: Context,
  page: { title: string; body: ComponentChildren },
  status: ContentfulStatusCode = 200,
): Response {
  return c.html(renderPage(page), status);
}

/** True for a browser navigation such as a plain form post, rather than a script's request. */
export function acceptsHtml(c: Context): boolean {
  return (c.req.header("accept") ?? "").includes("text/html");
}

/** A colored message box; `role` makes screen readers announce errors. */
export function Notice(
  { kind, children }: { kind: "error" | "success" | "info"; children: ComponentChildren },
): VNode {
  return (
    <div class={`notice ${kind}`} role={kind === "error" ? "alert" : "status"}>
      {children}
    </div>
  );
}
