/** A project's API keys: create (the key is shown once), list by prefix and time, revoke. */
import type { VNode } from "preact";
import { DashboardConfirmSubmit } from "../../islands/dashboard_confirm.tsx";
import { DashboardCopyButton } from "../../islands/dashboard_copy.tsx";
import { type ApiKeyRecord, MAX_ACTIVE_KEYS_PER_PROJECT, scopesOf } from "../../kv/api_keys.ts";
import { roleAllows } from "../../lib/auth/roles.ts";
import type { Project } from "../../kv/projects.ts";
import { Island } from "../islands.tsx";
import { FlashFor, type FrameData, ProjectFrame } from "./frame.tsx";
import { formatTime, madeBy } from "./format.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { Cell, ListHead } from "./cell.tsx";
import { ClusterNote } from "./cluster_note.tsx";
import { LuauSnippet } from "./luau_snippet.tsx";

/** What the keys page shows. */
interface KeysPageData extends FrameData {
  project: Project;
  baseUrl: string;
  keys: ApiKeyRecord[];
}

/** Whether the key is the one the dashboard installed in the connected game's secrets. */
function InGame({ keyId, project }: { keyId: string; project: Project }): VNode | null {
  const installed = project.settings.robloxConnection?.gameKey;
  if (installed?.keyId === keyId) {
    return (
      <div class="hint" data-testid="key-in-game">
        Installed in the game (secret <span class="mono">{installed.secretId}</span>)
      </div>
    );
  }
  if (installed?.replacing?.keyId === keyId) {
    return (
      <div class="hint" data-testid="key-in-game">
        Being replaced in the game: revoked once the servers have restarted
      </div>
    );
  }
  return null;
}

/** The keys page body. */
export function KeysPage(data: KeysPageData): VNode {
  const { project } = data;
  const gameKey = project.settings.robloxConnection?.gameKey;
  const base = projectPath(project.id, "keys");
  const active = data.keys.filter((k) => k.revokedAt === null);
  const revoked = data.keys.filter((k) => k.revokedAt !== null).reverse().slice(0, 20);
  const newKey = data.flash?.newKey;
  const manages = roleAllows(data.role ?? "viewer", "keys");
  return (
    <ProjectFrame data={data} project={project} tab="keys">
      {newKey && (
        <section class="card" aria-labelledby="new-key-heading" data-testid="new-key">
          <h2 id="new-key-heading">Your new API key</h2>
          <p>
            Copy it now: it is shown only this once. Keep it in your experience's secrets store and
            read it with <span class="mono">HttpService:GetSecret</span>, never in a script.
          </p>
          <code class="secret" data-testid="new-key-value">{newKey.plaintext}</code>
          <ClusterNote cluster={project.cluster} />{" "}
          <Island
            component={DashboardCopyButton}
            props={{ text: newKey.plaintext, label: "Copy the API key" }}
          />
          <p class="hint">
            Try it:{" "}
            <span class="mono">
              curl -H "x-api-key: {newKey.plaintext}" {data.baseUrl}/v1/project
            </span>
          </p>
          <h3>From your game, in Luau</h3>
          <LuauSnippet baseUrl={data.baseUrl} />
        </section>
      )}

      <section class="card" aria-labelledby="keys-heading">
        <h2 id="keys-heading">Active keys</h2>
        <FlashFor flash={data.flash} form="keys" />
        <p class="muted">
          {active.length} of {MAX_ACTIVE_KEYS_PER_PROJECT}{" "}
          active keys. A revoked key stops working within 30 seconds.
        </p>
        {active.length === 0
          ? <p class="empty">No active keys. Game servers need one to call the API.</p>
          : (
            <table class="list stack" data-testid="key-list">
              <ListHead columns={["Key", "Scopes", "Created", "Created by"]} />
              <tbody>
                {active.map((key) => (
                  <tr key={key.id} data-key-id={key.id}>
                    <Cell label="Key">
                      <span class="mono">{key.preview}…</span>{" "}
                      <ClusterNote cluster={project.cluster} />
                      <InGame keyId={key.id} project={project} />
                    </Cell>
                    <Cell label="Scopes">
                      <span data-testid="key-scopes">{scopesOf(key).join(", ")}</span>
                    </Cell>
                    <Cell label="Created">{formatTime(key.createdAt)}</Cell>
                    <Cell label="Created by" mono>
                      <span data-testid="key-maker">{madeBy(key.createdBy)}</span>
                    </Cell>
                    <Cell label="">
                      {manages && (
                        <form method="post" action={`${base}/${key.id}/revoke`} class="inline">
                          <Island
                            component={DashboardConfirmSubmit}
                            props={{
                              label: "Revoke",
                              question: `Revoke the key ${key.preview}…? ${
                                gameKey?.keyId === key.id
                                  ? "It is the key installed in the game: "
                                  : ""
                              }Game servers using it stop working within 30 seconds.`,
                              className: "secondary",
                              testId: "revoke-key",
                            }}
                          />
                        </form>
                      )}
                    </Cell>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        {manages && (
          <form method="post" action={base} class="actions">
            <label for="key-scopes">Scopes</label>
            <select id="key-scopes" name="scopes" data-testid="key-scope-choice">
              <option value="read,pay">read and pay: every route</option>
              <option value="read">
                read: reads, players, events, transaction status and list
              </option>
              <option value="pay">pay: the transaction routes only</option>
            </select>
            <button
              type="submit"
              data-testid="create-key"
              disabled={active.length >= MAX_ACTIVE_KEYS_PER_PROJECT}
            >
              Create API key
            </button>
            <ClusterNote cluster={project.cluster} />
          </form>
        )}
        <p class="hint">
          A key without <span class="mono">pay</span>{" "}
          cannot send anything: give it to servers that only read. A key without{" "}
          <span class="mono">read</span> cannot poll a payout's status.
        </p>
      </section>

      {revoked.length > 0 && (
        <section class="card" aria-labelledby="revoked-heading">
          <h2 id="revoked-heading">Recently revoked</h2>
          <table class="list stack">
            <thead>
              <tr>
                <th>Key</th>
                <th>Scopes</th>
                <th>Created</th>
                <th>Created by</th>
                <th>Revoked</th>
              </tr>
            </thead>
            <tbody>
              {revoked.map((key) => (
                <tr key={key.id}>
                  <Cell label="Key" mono>{key.preview}…</Cell>
                  <Cell label="Scopes">{scopesOf(key).join(", ")}</Cell>
                  <Cell label="Created">{formatTime(key.createdAt)}</Cell>
                  <Cell label="Created by" mono>{madeBy(key.createdBy)}</Cell>
                  <Cell label="Revoked">{formatTime(key.revokedAt!)}</Cell>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </ProjectFrame>
  );
}
