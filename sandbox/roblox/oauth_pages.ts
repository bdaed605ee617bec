import { html } from "hono/html";
import type { OauthUser } from "./oauth_protocol.ts";
import type { Universe } from "./oauth_state.ts";

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
  "universe-messaging-service:publish": "Publish messages to the experiences you pick",
  "universe.secret:read": "Read the secrets of the experiences you pick",
  "universe.secret:write": "Create and change the secrets of the experiences you pick",
  "universe:write": "Restart the servers of the experiences you pick",
};

/**
 * The consent page: pick a test player (or type one), and for Open Cloud scopes the experiences
 * the grant covers, then Allow or Deny.
 */
export function renderConsentPage(
  appName: string,
  params: Record<string, string>,
  scopes: string[],
  offer: { users: OauthUser[]; universes: Universe[] },
) {
  const { users, universes } = offer;
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
        ${universes.length > 0 ? universeChoices(universes) : ""}
        <button type="submit" name="decision" value="allow">Allow</button>
        <button type="submit" name="decision" value="deny">Deny</button>
      </form>
      </body>
    </html>
  `;
}

function universeChoices(universes: Universe[]) {
  return html`<fieldset><legend>Experiences this app may act on</legend>
    ${
    universes.map((universe) =>
      html`<label><input type="checkbox" name="universe_id" value="${universe.id}"> ${universe.name}
        (universe ${universe.id})</label>`
    )
  }
    <label>Another universe ID <input name="custom_universe_id" inputmode="numeric"
      pattern="[0-9]+"></label>
  </fieldset>`;
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
