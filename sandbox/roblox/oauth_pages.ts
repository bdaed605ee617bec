import { html } from "hono/html";
import type { OauthUser } from "./oauth_protocol.ts";

const style = html`<style>
  body { font: 15px system-ui, sans-serif; margin: 3rem auto; max-width: 32rem; }
  fieldset { border: 1px solid #ccc; margin: 1rem 0; }
  label { display: block; margin: .4rem 0; }
  img { border-radius: 50%; height: 24px; vertical-align: middle; width: 24px; }
  button { font-size: 1rem; margin-right: .5rem; padding: .4rem 1.2rem; }
</style>`;

const SCOPE_TEXT: Record<string, string> = {
  openid: "Know your Roblox user ID",
  profile: "Read your profile: username, display name and avatar",
};

/** The consent page: pick a test player (or type one), then Allow or Deny. */
export function renderConsentPage(
  appName: string,
  params: Record<string, string>,
  scopes: string[],
  users: OauthUser[],
) {
  const hidden = Object.entries(params).map(([name, value]) =>
    html`<input type="hidden" name="${name}" value="${value}">`
  );
  const choices = users.map((user, i) =>
    html`<label><input type="radio" name="user_id" value="${user.id}" ${
      i === 0 ? "checked" : ""
    }> ${user.picture ? html`<img src="${user.picture}" alt="">` : ""} ${user.displayName}
      (@${user.username}) #${user.id}</label>`
  );
  return html`
    <!doctype html>
    <html lang="en">
      <head><meta charset="utf-8"><title>Authorize ${appName}</title>${style}</head>
      <body>
        <h1>Roblox OAuth stand-in</h1>
        <p><b>${appName}</b> would like to:</p>
        <ul>${scopes.map((scope) => html`<li>${SCOPE_TEXT[scope] ?? scope}</li>`)}</ul>
        <form method="post" action="authorize/decision">
        ${hidden}
        <fieldset><legend>Sign in as a test player</legend>${choices}</fieldset>
        <fieldset><legend>Or another player (overrides the choice above)</legend>
          <label>User ID <input name="custom_id" inputmode="numeric" pattern="[0-9]+"></label>
          <label>Username <input name="custom_username" pattern="[A-Za-z0-9_]{3,20}"></label>
        </fieldset>
        <button type="submit" name="decision" value="allow">Allow</button>
        <button type="submit" name="decision" value="deny">Deny</button>
      </form>
      </body>
    </html>
  `;
}

/** The page shown when the request cannot be redirected back (bad client or redirect URI). */
export function renderErrorPage(message: string) {
  return html`
    <!doctype html>
    <html lang="en">
      <head><meta charset="utf-8"><title>Authorization error</title>${style}</head>
      <body>
        <h1>Authorization error</h1>
        <p role="alert">${message}</p>
      </body>
    </html>
  `;
}
