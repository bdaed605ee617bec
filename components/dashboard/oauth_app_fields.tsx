/** The client ID and secret fields of an OAuth app's settings form, for each app a project saves. */
import type { VNode } from "preact";

/**
 * The fields `<prefix>ClientId`, `<prefix>ClientSecret` and, once a secret is saved,
 * `clear<Prefix>ClientSecret` (`lib/projects/settings.ts` reads them): the player sign-in app
 * (`oauth`) and the app connecting the game (`connect`).
 */
export function OauthAppFields(
  props: { prefix: "oauth" | "connect"; clientId: string; secretSet: boolean },
): VNode {
  const { prefix, clientId, secretSet } = props;
  const id = `${prefix}ClientId`;
  const secret = `${prefix}ClientSecret`;
  const clear = `clear${prefix[0]!.toUpperCase()}${prefix.slice(1)}ClientSecret`;
  return (
    <>
      <label for={id}>Client ID</label>
      <input id={id} name={id} autocomplete="off" value={clientId} />
      <label for={secret}>Client secret</label>
      <input
        id={secret}
        name={secret}
        type="password"
        autocomplete="new-password"
        placeholder={secretSet ? "Saved: leave blank to keep it" : ""}
      />
      <p class="hint">Stored encrypted and never shown again.</p>
      {secretSet && (
        <label class="check">
          <input type="checkbox" name={clear} value="true" /> Remove the saved secret
        </label>
      )}
    </>
  );
}
