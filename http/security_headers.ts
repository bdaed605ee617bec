/**
 * Response headers every answer gets, set app-wide after the route ran so a new route or page is
 * covered without asking: `X-Content-Type-Options: nosniff` on everything, HSTS when the service is
 * served over https, and on every HTML page the page headers below.
 *
 * The linking page's headers are fixed by the spec (`frame-ancestors 'none'; base-uri 'none';
 * form-action 'self'`, `X-Frame-Options: DENY`, `Referrer-Policy: same-origin`,
 * `Cache-Control: no-store`). Every page keeps them word for word and in that order; the policy
 * then adds `script-src 'self'` (scripts only from our bundle: island props are inert
 * `type="application/json"` data) and `object-src 'none'`. Added directives only narrow what the
 * spec's directives allow, so they contradict nothing.
 *
 * Every answer of the game API, the cookie-bound JSON routes and the dashboard (`/v1`, `/api`,
 * `/auth`, `/dashboard`), errors and redirects included, is `Cache-Control: no-store`: it belongs
 * to one key or one browser, and no proxy or shared cache may keep it (a balance, a sign-in
 * message, a new API key's plaintext, a webhook's signing secret, an exported wallet key).
 */
import type { MiddlewareHandler } from "hono";

// The spec's linking-page policy, then what every page adds.
const PAGE_CSP =
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'; script-src 'self'; object-src 'none'";

// Headers of every HTML page; a page may set its own `cache-control`, and its own
// `content-security-policy` when it needs a stricter one (the API reference at `/docs`).
const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": PAGE_CSP,
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
};

const PAGE_OWN_HEADERS = new Set(["cache-control", "content-security-policy"]);

// Path prefixes whose every answer is private to the caller's key or cookies (`/dashboard` itself
// included).
const PRIVATE_PREFIXES = ["/v1/", "/api/", "/auth/", "/dashboard"];

// One year, this host only: the operator's other subdomains are not ours to pin to https.
const HSTS = "max-age=31536000";

/** Middleware adding the security headers to every response; put it first. */
export function securityHeaders(options: { baseUrl: string }): MiddlewareHandler {
  const https = new URL(options.baseUrl).protocol === "https:";
  return async function securityHeaders(c, next) {
    await next();
    const headers = c.res.headers;
    headers.set("x-content-type-options", "nosniff");
    if (https) headers.set("strict-transport-security", HSTS);
    if (PRIVATE_PREFIXES.some((prefix) => c.req.path.startsWith(prefix))) {
      headers.set("cache-control", "no-store");
    }
    if ((headers.get("content-type") ?? "").startsWith("text/html")) {
      for (const [name, value] of Object.entries(PAGE_SECURITY_HEADERS)) {
        if (PAGE_OWN_HEADERS.has(name) && headers.has(name)) continue;
        headers.set(name, value);
      }
    }
  };
}
