/**
 * The settings page's Roblox connection: the app it goes through, connect or reconnect, the
 * experience, the API key installed in the game and its rotation, shown as it runs.
 */
import type { VNode } from "preact";
import { DashboardCopyButton } from "../../islands/dashboard_copy.tsx";
import type { Project, RobloxConnection } from "../../kv/projects.ts";
import type { Role } from "../../kv/members.ts";
import type { Flash } from "../../http/flash.ts";
import { Island } from "../islands.tsx";
import { FlashFor } from "./frame.tsx";
import { OauthAppFields } from "./oauth_app_fields.tsx";
import { formatTime, shortAddress } from "./format.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { roleAllows } from "../../lib/auth/roles.ts";
import type { SettingsView } from "../../lib/projects/settings.ts";
import { BLEED_OFF_MINUTES, DEFAULT_GAME_SECRET_ID } from "../../lib/projects/game_key.ts";

/** What the section shows. */
interface RobloxSectionData {
  project: Project;
  settings: SettingsView;
  flash: Flash | null;
  role: Role | undefined;
}

/** The Roblox connection card of the settings page (`#roblox`). */
export function RobloxSection(data: RobloxSectionData): VNode {
  const { project, settings, flash } = data;
  const connection = project.settings.robloxConnection ?? null;
  const may = data.role !== undefined && roleAllows(data.role, "connect");
  const base = `${projectPath(project.id)}/roblox`;
  const app = settings.connectApp;
  const hasApp = Boolean(app.clientId && app.clientSecretSet) || app.serviceApp;
  return (
    <section class="card" aria-labelledby="roblox-heading" id="roblox" data-testid="roblox">
      <h2 id="roblox-heading">Roblox connection</h2>
      <p>
        Connect the game with Roblox: events are published with the grant, and the dashboard
        installs the game's API key in its secrets and restarts its servers when the key changes.
        Nothing to copy by hand. Needs an admin or the owner.
      </p>
      <FlashFor flash={flash} form="roblox" />
      <ConnectionState connection={connection} base={base} may={may} hasApp={hasApp} />
      {connection?.status === "active" && connection.universeId && (
        <GameKey connection={connection} base={base} may={may} />
      )}
      <ConnectApp project={project} settings={settings} flash={flash} may={may} />
    </section>
  );
}

function ConnectionState(
  props: { connection: RobloxConnection | null; base: string; may: boolean; hasApp: boolean },
): VNode {
  const { connection, base, may, hasApp } = props;
  if (!connection) {
    return (
      <div>
        <p>
          <span class="badge" data-testid="roblox-not-connected">Not connected</span>
        </p>
        {may && (hasApp
          ? (
            <a class="button" href={`${base}/connect`} data-testid="roblox-connect">
              Connect with Roblox
            </a>
          )
          : <p class="hint">Save the connecting app below, then connect the game.</p>)}
      </div>
    );
  }
  const who = connection.robloxUser
    ? `@${connection.robloxUser.name} (Roblox ${connection.robloxUser.id})`
    : "a Roblox account";
  return (
    <div>
      <p>
        {connection.status === "active"
          ? <span class="badge ok" data-testid="roblox-connected">Connected</span>
          : <span class="badge warn" data-testid="roblox-lost">Connection lost: reconnect</span>}
      </p>
      <dl data-testid="roblox-connection">
        <dt>Connected by</dt>
        <dd>
          <span class="mono">{shortAddress(connection.connectedBy)}</span> as {who},{" "}
          {formatTime(connection.connectedAt)}
        </dd>
        <dt>Scopes</dt>
        <dd class="mono">{connection.scopes.join(" ")}</dd>
        <dt>Experience</dt>
        <dd data-testid="roblox-universe">
          {connection.universeId ? `universe ${connection.universeId}` : "not chosen yet"}
        </dd>
        {connection.lostAt !== null && (
          <>
            <dt>Lost</dt>
            <dd>
              {formatTime(connection.lostAt)}: Roblox refused the grant (revoked or expired). Events
              are off until you reconnect.
            </dd>
          </>
        )}
      </dl>
      {may && connection.status === "active" && !connection.universeId && (
        <form method="post" action={`${base}/universe`} data-testid="roblox-choose">
          <label for="roblox-universe-id">Which experience is this game?</label>
          <select id="roblox-universe-id" name="universeId">
            {connection.universeIds.map((id) => <option key={id} value={id}>universe {id}</option>)}
          </select>
          <div class="actions">
            <button type="submit">Use this experience</button>
          </div>
        </form>
      )}
      {may && (
        <div class="actions">
          {connection.status === "lost" && (
            <a class="button" href={`${base}/connect`} data-testid="roblox-reconnect">
              Reconnect
            </a>
          )}
          <form method="post" action={`${base}/disconnect`}>
            <button type="submit" class="secondary" data-testid="roblox-disconnect">
              Disconnect
            </button>
          </form>
        </div>
      )}
    </div>
  );
}

function GameKey(props: { connection: RobloxConnection; base: string; may: boolean }): VNode {
  const { connection, base, may } = props;
  const key = connection.gameKey;
  const rotation = key?.replacing ?? null;
  // A rotation whose servers restarted only waits for its revocation; one before that resumes.
  const canRotate = key !== null && may && (rotation === null || rotation.restartedAt === null);
  return (
    <div data-testid="game-key">
      <h3>API key in the game</h3>
      {!key && (
        <>
          <p>
            Creates an API key and writes it, sealed for the game, into its secrets: your servers
            read it with <span class="mono">HttpService:GetSecret</span>. It is never shown.
          </p>
          {may && (
            <form method="post" action={`${base}/install-key`} data-testid="install-key">
              <fieldset>
                <legend>Scopes</legend>
                <label class="check">
                  <input type="checkbox" name="scopes" value="read" checked /> read
                </label>
                <label class="check">
                  <input type="checkbox" name="scopes" value="pay" checked /> pay
                </label>
              </fieldset>
              <label for="secretId">Secret name</label>
              <input id="secretId" name="secretId" value={DEFAULT_GAME_SECRET_ID} />
              <div class="actions">
                <button type="submit">Install key in game</button>
              </div>
            </form>
          )}
        </>
      )}
      {key && (
        <p data-testid="game-key-installed">
          Key <span class="mono">{key.preview}…</span> installed as the secret{" "}
          <span class="mono">{key.secretId}</span>, {formatTime(key.installedAt)}.
        </p>
      )}
      {rotation && (
        <ol data-testid="rotation">
          <li>New key installed in the game's secrets.</li>
          <li>
            {rotation.restartedAt === null
              ? "Servers not restarted yet: running servers still use the old key, which stays valid."
              : `Servers restarted ${
                formatTime(rotation.restartedAt)
              }; players move to new servers.`}
          </li>
          <li>
            {rotation.revokeAt === null
              ? "The old key is revoked once the servers have restarted."
              : `The old key is revoked at ${formatTime(rotation.revokeAt)}, after the bleed-off.`}
          </li>
        </ol>
      )}
      {canRotate && (
        <form method="post" action={`${base}/rotate`} data-testid="rotate-key">
          <label for="bleedOffMinutes">Minutes for players to move to new servers</label>
          <input
            id="bleedOffMinutes"
            name="bleedOffMinutes"
            type="number"
            min={BLEED_OFF_MINUTES.min}
            max={BLEED_OFF_MINUTES.max}
            value={BLEED_OFF_MINUTES.default}
          />
          <p class="hint">
            Installs a new key, restarts the game's servers (they read secrets when they start),
            then revokes the old key once this time has passed.
          </p>
          <div class="actions">
            <button type="submit">
              {rotation ? "Restart servers and finish" : "Rotate key"}
            </button>
          </div>
        </form>
      )}
    </div>
  );
}

function ConnectApp(
  props: { project: Project; settings: SettingsView; flash: Flash | null; may: boolean },
): VNode {
  const { project, settings, flash, may } = props;
  const app = settings.connectApp;
  const draft = flash?.form === "connect_app" ? flash.draft ?? {} : {};
  const clientId = typeof draft.connectClientId === "string"
    ? draft.connectClientId
    : app.clientId ?? "";
  return (
    <details open={!app.clientId && !app.serviceApp}>
      <summary>The OAuth app connecting the game</summary>
      <p>
        A second, private OAuth 2.0 app on the Roblox Creator Dashboard, with the scopes{" "}
        <span class="mono">
          openid profile universe-messaging-service:publish universe.secret:read
          universe.secret:write universe:write
        </span>{" "}
        and this redirect URI:
        {app.serviceApp && " (or leave it blank to use the service's own app)"}
      </p>
      <code class="secret" data-testid="connect-redirect-uri">{app.redirectUri}</code>
      <Island
        component={DashboardCopyButton}
        props={{ text: app.redirectUri, label: "Copy the connecting redirect URI" }}
      />
      <FlashFor flash={flash} form="connect_app" />
      {may && (
        <form
          method="post"
          action={`${projectPath(project.id)}/settings`}
          data-testid="settings-connect-app"
        >
          <input type="hidden" name="form" value="connect_app" />
          <OauthAppFields prefix="connect" clientId={clientId} secretSet={app.clientSecretSet} />
          <div class="actions">
            <button type="submit">Save connecting app</button>
          </div>
        </form>
      )}
    </details>
  );
}
