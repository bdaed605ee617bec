import { Hono } from "hono";
import { getIslandsBundle } from "../components/islands_bundle.ts";
import { ISLANDS_SCRIPT_PATH } from "../components/layout.tsx";
import { log } from "../core/log.ts";

/** Browser assets: the islands bundle, built on first request and kept in memory. */
export function staticRoutes(): Hono {
  return new Hono().get(ISLANDS_SCRIPT_PATH, async (c) => {
    c.header("content-type", "text/javascript; charset=utf-8");
    // Revalidated on every page view: the URL stays the same when the code changes.
    c.header("cache-control", "no-cache");
    let bundle;
    try {
      bundle = await getIslandsBundle();
    } catch (error) {
      log("error", "Islands bundle unavailable", { error });
      return c.body("console.error('The page scripts could not be built');", 503);
    }
    c.header("etag", bundle.etag);
    if (c.req.header("if-none-match") === bundle.etag) return c.body(null, 304);
    return c.body(bundle.code, 200);
  });
}
