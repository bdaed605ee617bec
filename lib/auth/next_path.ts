/** Where a sign-in may land afterwards: only linking pages and dashboard paths of this site. */

/** A checked `next`: a project's linking page, or a dashboard page. */
type NextPath =
  | { kind: "link"; slug: string; path: string }
  | { kind: "dashboard"; path: string };

/** Where sign-ins land when `next` is missing or refused. */
export const DEFAULT_NEXT = "/dashboard";

// Whole-string patterns over the already-decoded value: no scheme, no `//host`, no `\`, no `%`
// in the path and no segment starting with a dot (so no `..`): the browser cannot resolve it to
// another origin or path.
const LINK_PATH = /^\/link\/([a-z0-9]+(?:-[a-z0-9]+)*)$/;
const DASHBOARD_PATH =
  /^\/dashboard(?:\/[A-Za-z0-9_~-][A-Za-z0-9_.~-]*)*\/?(?:\?[A-Za-z0-9_.~=&%+-]*)?$/;

/** Classifies `next`, or returns null when it is neither a linking-page nor a dashboard path. */
export function parseNextPath(next: string | undefined | null): NextPath | null {
  if (!next || next.length > 512) return null;
  const slug = LINK_PATH.exec(next)?.[1];
  if (slug !== undefined && slug.length <= 64) return { kind: "link", slug, path: next };
  if (DASHBOARD_PATH.test(next)) {
    return { kind: "dashboard", path: next };
  }
  return null;
}

/** Returns `next` when it is a dashboard path, otherwise `/dashboard`. */
export function dashboardNextPath(next: string | undefined | null): string {
  const parsed = parseNextPath(next);
  return parsed?.kind === "dashboard" ? parsed.path : DEFAULT_NEXT;
}

/** Appends `?error=<code>` to a linking-page path. */
export function withErrorCode(path: string, code: string): string {
  return `${path}${path.includes("?") ? "&" : "?"}error=${encodeURIComponent(code)}`;
}
