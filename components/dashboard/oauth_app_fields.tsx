/** The client ID and secret fields of an OAuth app's settings form, for each app a project saves. */
import type { VNode } from "preact";
import { fieldAria, FieldError, type FieldRef } from "./field_error.tsx";

/**
 * The fields `<prefix>ClientId`, `<prefix>ClientSecret` and, once a secret is saved,
 * `clear<Prefix>ClientSecret` (`lib/projects/settings.ts` reads them): the player sign-in app
 * (`oauth`) and the app connecting the game (`connect`).
 */
export function OauthAppFields(
  props: {
    prefix: "oauth" | "connect";
    clientId: string;
    secretSet: boolean;
    /** Where a refused field's problem comes from (the form's flash), when the form shows them. */
    field?: (name: string) => FieldRef;
  },
): VNode {
  const { prefix, clientId, secretSet } = props;
  const aria = (name: string) => props.field ? fieldAria(props.field(name)) : {};
  const error = (name: string) => props.field && <FieldError {...props.field(name)} />;
  const id = `${prefix}ClientId`;
  const secret = `${prefix}ClientSecret`;
  const clear = `clear${prefix[0]!.toUpperCase()}${prefix.slice(1)}ClientSecret`;
  return (
    <>
      <label for={id}>Client ID</label>
      <input id={id} name={id} autocomplete="off" value={clientId} {...aria(id)} />
      {error(id)}
      <label for={secret}>Client secret</label>
      <input
        id={secret}
        name={secret}
        type="password"
        autocomplete="new-password"
        placeholder={secretSet ? "Saved: leave blank to keep it" : ""}
        {...aria(secret)}
      />
      {error(secret)}
      <p class="hint">Stored encrypted and never shown again.</p>
      {secretSet && (
        <label class="check">
          <input type="checkbox" name={clear} value="true" /> Remove the saved secret
        </label>
      )}
    </>
  );
}
