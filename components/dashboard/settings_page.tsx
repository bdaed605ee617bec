/** A project's settings: name, Roblox OAuth app, live events with the test ping, and deletion. */
import type { VNode } from "preact";
import { DashboardCopyButton } from "../../islands/dashboard_copy.tsx";
import type { Project } from "../../kv/projects.ts";
import { Island } from "../islands.tsx";
import { FlashFor, type FrameData, ProjectFrame } from "./frame.tsx";
import { projectPath } from "../../http/dashboard_paths.ts";
import { MAX_PROJECT_NAME_LENGTH } from "../../lib/projects/ownership.ts";
import type { SettingsView } from "../../lib/projects/settings.ts";
import { RobloxSection } from "./roblox_section.tsx";
import { OauthAppFields } from "./oauth_app_fields.tsx";
import { StandInCredentials } from "./stand_in_credentials.tsx";
import { fieldAria, FieldError } from "./field_error.tsx";

/** What the settings page shows. */
interface SettingsPageData extends FrameData {
  project: Project;
  settings: SettingsView;
  /** True on a service running on this machine: offer the stand-ins' credentials. */
  sandbox: boolean;
}

/** The settings page body. */
export function SettingsPage(data: SettingsPageData): VNode {
  const { project, settings, flash } = data;
  const action = `${projectPath(project.id)}/settings`;
  const draftOf = (form: string) => flash?.form === form ? flash.draft ?? {} : {};
  const general = draftOf("general");
  const oauth = draftOf("oauth");
  const events = draftOf("events");
  const alerts = draftOf("alerts");
  const text = (draft: Record<string, unknown>, name: string, saved: string | null) =>
    typeof draft[name] === "string" ? draft[name] as string : saved ?? "";
  const field = (form: string, name: string) => ({ flash, form, name });
  return (
    <ProjectFrame data={data} project={project} tab="settings">
      <section class="card" aria-labelledby="general-heading">
        <h2 id="general-heading">General</h2>
        <FlashFor flash={flash} form="general" />
        <form method="post" action={action} data-testid="settings-general">
          <input type="hidden" name="form" value="general" />
          <label for="name">Project name</label>
          <input
            id="name"
            name="name"
            required
            maxLength={MAX_PROJECT_NAME_LENGTH}
            value={text(general, "name", settings.name)}
            {...fieldAria(field("general", "name"))}
          />
          <FieldError {...field("general", "name")} />
          <p class="hint">
            Players see it on the linking page. The slug <span class="mono">{project.slug}</span>
            {" "}
            and the cluster ({project.cluster}) stay as they are.
          </p>
          <div class="actions">
            <button type="submit">Save name</button>
          </div>
        </form>
      </section>

      <section class="card" aria-labelledby="alerts-heading">
        <h2 id="alerts-heading">Low balance warning</h2>
        <FlashFor flash={flash} form="alerts" />
        <form method="post" action={action} data-testid="settings-alerts">
          <input type="hidden" name="form" value="alerts" />
          <label for="lowSolBalance">Warn below (SOL)</label>
          <input
            id="lowSolBalance"
            name="lowSolBalance"
            inputMode="decimal"
            placeholder="Estimated from the policy"
            value={text(alerts, "lowSolBalance", settings.lowSolBalance)}
            {...fieldAria(field("alerts", "lowSolBalance"))}
          />
          <FieldError {...field("alerts", "lowSolBalance")} />
          <p class="hint">
            The overview and the usage page warn when the managed wallet holds less SOL than this.
            Left blank, the warning uses the policy's hourly SOL budget plus an hour of fees.
          </p>
          <div class="actions">
            <button type="submit">Save warning</button>
          </div>
        </form>
      </section>

      <section class="card" aria-labelledby="oauth-heading">
        <h2 id="oauth-heading">Roblox sign-in (OAuth app)</h2>
        <p>
          Players sign in with Roblox on your linking page through your own OAuth 2.0 app. Create
          one on the Roblox Creator Dashboard (Credentials, OAuth 2.0 apps) with the scopes{" "}
          <span class="mono">openid</span> and{" "}
          <span class="mono">profile</span>, and register this redirect URI:
        </p>
        <code class="secret" data-testid="redirect-uri">{settings.oauth.redirectUri}</code>
        <Island
          component={DashboardCopyButton}
          props={{ text: settings.oauth.redirectUri, label: "Copy the redirect URI" }}
        />
        <FlashFor flash={flash} form="oauth" />
        {data.sandbox && <StandInCredentials projectId={project.id} />}
        <form method="post" action={action} data-testid="settings-oauth">
          <input type="hidden" name="form" value="oauth" />
          <OauthAppFields
            prefix="oauth"
            clientId={text(oauth, "oauthClientId", settings.oauth.clientId)}
            secretSet={settings.oauth.clientSecretSet}
            field={(name) => field("oauth", name)}
          />
          <div class="actions">
            <button type="submit">Save sign-in</button>
          </div>
        </form>
      </section>

      <RobloxSection project={project} settings={settings} flash={flash} role={data.role} />

      <section class="card" aria-labelledby="events-heading" id="events">
        <h2 id="events-heading">Live events</h2>
        <p>
          Events reach your game servers through Roblox MessagingService once the game is connected
          with Roblox (above), or, without a connection, once both a universe ID and a publishing
          API key are saved. {settings.events.events
            ? <span class="badge ok" data-testid="events-on">Events on</span>
            : <span class="badge" data-testid="events-off">Events off</span>}
        </p>
        <FlashFor flash={flash} form="events" />
        <form method="post" action={action} data-testid="settings-events">
          <input type="hidden" name="form" value="events" />
          <label for="universeId">Universe ID</label>
          <input
            id="universeId"
            name="universeId"
            inputMode="numeric"
            autocomplete="off"
            value={text(events, "universeId", settings.events.universeId)}
            {...fieldAria(field("events", "universeId"))}
          />
          <FieldError {...field("events", "universeId")} />
          <p class="hint">The experience's universe ID (digits), not a place ID.</p>
          <label for="publishingKey">Publishing API key</label>
          <input
            id="publishingKey"
            name="publishingKey"
            type="password"
            autocomplete="new-password"
            placeholder={settings.events.publishingKeySet ? "Saved: leave blank to keep it" : ""}
            {...fieldAria(field("events", "publishingKey"))}
          />
          <FieldError {...field("events", "publishingKey")} />
          <p class="hint">
            An Open Cloud API key with the messaging-service publish permission for this experience.
            Stored encrypted and never shown again.
          </p>
          {settings.events.publishingKeySet && (
            <label class="check">
              <input type="checkbox" name="clearPublishingKey" value="true" /> Remove the saved key
            </label>
          )}
          <label for="topic">Topic</label>
          <input
            id="topic"
            name="topic"
            maxLength={80}
            value={text(events, "topic", settings.events.topic)}
            {...fieldAria(field("events", "topic"))}
          />
          <FieldError {...field("events", "topic")} />
          <p class="hint">
            Your servers subscribe with <span class="mono">MessagingService:SubscribeAsync</span>
            {" "}
            to this topic. Letters, digits, - and _; blank resets it to svc. Changes apply within 30
            seconds.
          </p>
          <input type="hidden" name="packEvents" value="false" />
          <label class="check">
            <input
              type="checkbox"
              name="packEvents"
              value="true"
              checked={settings.events.packEvents}
              data-testid="pack-events"
            />{" "}
            Pack events: several events in one message
          </label>
          <p class="hint">
            An extension of the event format: a message of type <span class="mono">events</span>
            {" "}
            carries up to 1,000 bytes of events, so a round end's payouts cross the topic in
            seconds. Turn it on only when every subscriber understands it (the Luau SDK does).
          </p>
          <label for="messagesPerMinute">Messages a minute</label>
          <input
            id="messagesPerMinute"
            name="messagesPerMinute"
            inputMode="numeric"
            autocomplete="off"
            value={text(
              events,
              "messagesPerMinute",
              settings.events.messagesPerMinute === null
                ? null
                : String(settings.events.messagesPerMinute),
            )}
            {...fieldAria(field("events", "messagesPerMinute"))}
          />
          <FieldError {...field("events", "messagesPerMinute")} />
          <p class="hint">
            The most messages published in any minute (1 to 5,000); blank for no cap. Events beyond
            it wait in the feed and go out as the minute allows. Your topic receives about 80 a
            minute whatever the game's size.
          </p>
          <div class="actions">
            <button type="submit">Save events</button>
          </div>
        </form>
        <h3>Test</h3>
        <p>Send a ping event now and see what Roblox answers.</p>
        <FlashFor flash={flash} form="ping" />
        <form method="post" action={`${projectPath(project.id)}/ping`}>
          <button type="submit" class="secondary" data-testid="send-ping">Send test event</button>
        </form>
        <p class="hint">
          Every delivery is in the <a href={projectPath(project.id, "events")}>event log</a>.
        </p>
      </section>

      <section class="card" aria-labelledby="danger-heading">
        <h2 id="danger-heading">Delete the project</h2>
        <p>
          Its API keys stop working, its linking page says no game uses it, and its slug is never
          reused.
        </p>
        <a class="button danger" href={projectPath(project.id, "delete")}>Delete project…</a>
      </section>
    </ProjectFrame>
  );
}
