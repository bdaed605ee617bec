// Who may call an Open Cloud universe endpoint on the stand-in: an API key registered for the
// universe (`x-api-key`), or an OAuth 2.0 access token (`Authorization: Bearer`) whose grant has
// the endpoint's scope on that universe, checked against the OAuth stand-in.
import type { AccessGrant } from "./oauth.ts";

/** Checks access tokens: the OAuth stand-in's `checkAccessToken`. */
export type AccessTokenCheck = (token: string) => AccessGrant | null;

/** The caller an Open Cloud request was authorized as: one API key or one OAuth grant. */
export type OpenCloudCaller =
  | { ok: true; authorization: string }
  | { ok: false; status: 401 | 403; message: string };

/** Checks the credentials of a request for `scope` on `universeId`. */
export function authorizeOpenCloud(
  headers: { apiKey: string | undefined; authorization: string | undefined },
  target: { universeId: string; scope: string },
  sources: { keys: Map<string, Set<string>>; checkAccessToken?: AccessTokenCheck | undefined },
): OpenCloudCaller {
  const bearer = /^Bearer (\S+)$/i.exec(headers.authorization ?? "")?.[1];
  if (bearer !== undefined) {
    const grant = sources.checkAccessToken?.(bearer) ?? null;
    if (!grant) return { ok: false, status: 401, message: "Invalid or expired access token" };
    if (!grant.scopes.includes(target.scope)) {
      return { ok: false, status: 403, message: `The token lacks the scope ${target.scope}` };
    }
    if (!grant.universeIds.includes(target.universeId)) {
      return { ok: false, status: 403, message: "The token was not granted this universe" };
    }
    return { ok: true, authorization: `grant:${grant.grantId}` };
  }
  const universes = headers.apiKey ? sources.keys.get(headers.apiKey) : undefined;
  if (!universes) return { ok: false, status: 401, message: "Invalid API Key" };
  if (!universes.has(target.universeId)) {
    return { ok: false, status: 403, message: "The API key is not allowed on this universe" };
  }
  return { ok: true, authorization: `key:${headers.apiKey}` };
}
