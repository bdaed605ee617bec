/**
 * A project's webhooks: its endpoints (add, send a test, rotate the secret, remove), a new secret
 * shown once, and the delivery log (`webhook_log.tsx`). Every action is a plain form.
 */
import type { VNode } from "preact";
import { DashboardConfirmSubmit } from "../../islands/dashboard_confirm.tsx";
import { DashboardCopyButton } from "../../islands/dashboard_copy.tsx";
import type { Project } from "../../kv/projects.ts";
import { MAX_WEBHOOK_ENDPOINTS } from "../../kv/webhooks.ts";
import type { WebhookEndpointView } from "../../lib/webhooks/endpoints.ts";
import { Island } from "../islands.tsx";
import { FlashFor, type FrameData, ProjectFrame } from "./frame.tsx";
import { fieldAria, FieldError } from "./field_error.tsx";
import { formatTime, NO_MAKER, shortAddress } from "./format.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { Cell, ListHead } from "./cell.tsx";
import { WebhookLog, type WebhookLogData } from "./webhook_log.tsx";

/** What the webhooks page shows. */
interface WebhooksPageData extends FrameData {
  project: Project;
  endpoints: WebhookEndpointView[];
  log: WebhookLogData;
}

/** The webhooks page body. */
export function WebhooksPage(data: WebhooksPageData): VNode {
  const { project, flash } = data;
  const base = projectPath(project.id, "webhooks");
  const revealed = flash?.newKey
    ? data.endpoints.find((endpoint) => endpoint.id === flash.newKey!.id)
    : undefined;
  const draft = flash?.form === "webhook" && flash.kind === "error" ? flash.draft ?? {} : {};
  const urlField = { flash, form: "webhook", name: "url" };
  return (
    <ProjectFrame data={data} project={project} tab="webhooks">
      {revealed && flash?.newKey && (
        <section class="card" aria-labelledby="secret-heading" data-testid="new-secret">
          <h2 id="secret-heading">Signing secret</h2>
          <p>
            For{" "}
            <span class="mono">{revealed.url}</span>. Copy it now: it is shown only this once. Your
            receiver checks each webhook's signature with it.
          </p>
          <code class="secret" data-testid="new-secret-value">{flash.newKey.plaintext}</code>
          <Island
            component={DashboardCopyButton}
            props={{ text: flash.newKey.plaintext, label: "Copy the signing secret" }}
          />
        </section>
      )}

      <section class="card" aria-labelledby="endpoints-heading">
        <h2 id="endpoints-heading">Webhook endpoints</h2>
        <p>
          Every event of the project's feed is POSTed to each endpoint as JSON (the same entry as
          {" "}
          <span class="mono">GET /v1/events</span>), signed with the endpoint's secret in the{" "}
          <span class="mono">webhook-signature</span>{" "}
          header (Standard Webhooks), and retried for 24 hours until the endpoint answers 2xx.
        </p>
        <FlashFor flash={flash} form="webhooks" />
        {data.endpoints.length === 0
          ? <p class="empty" data-testid="no-endpoints">No endpoints yet.</p>
          : (
            <table class="list stack" data-testid="endpoint-list">
              <ListHead columns={["URL", "Secret"]} />
              <tbody>
                {data.endpoints.map((endpoint) => (
                  <EndpointRow key={endpoint.id} endpoint={endpoint} base={base} />
                ))}
              </tbody>
            </table>
          )}
      </section>

      <section class="card" aria-labelledby="add-endpoint-heading">
        <h2 id="add-endpoint-heading">Add an endpoint</h2>
        <p class="muted">
          {data.endpoints.length} of {MAX_WEBHOOK_ENDPOINTS}{" "}
          endpoints used. An https:// URL on the public internet: names that point at private,
          loopback or link-local addresses are refused, and redirects are not followed.
        </p>
        <FlashFor flash={flash} form="webhook" />
        <form method="post" action={base} data-testid="add-endpoint">
          <label for="webhook-url">URL</label>
          <div class="row2">
            <input
              id="webhook-url"
              name="url"
              type="url"
              required
              placeholder="https://example.com/blocklink"
              autocomplete="off"
              spellcheck={false}
              value={String(draft.url ?? "")}
              {...fieldAria(urlField)}
            />
            <button type="submit" disabled={data.endpoints.length >= MAX_WEBHOOK_ENDPOINTS}>
              Add endpoint
            </button>
          </div>
          <FieldError {...urlField} />
        </form>
      </section>

      <WebhookLog project={project} flash={flash} endpoints={data.endpoints} log={data.log} />
    </ProjectFrame>
  );
}

function EndpointRow(
  { endpoint, base }: { endpoint: WebhookEndpointView; base: string },
): VNode {
  const path = `${base}/${endpoint.id}`;
  return (
    <tr data-endpoint-id={endpoint.id}>
      <Cell label="URL">
        <span class="mono">{endpoint.url}</span>
        <div class="hint" data-testid="endpoint-maker">
          Added {formatTime(endpoint.createdAt)}
          {endpoint.createdBy ? ` by ${shortAddress(endpoint.createdBy)}` : `, ${NO_MAKER}`}
        </div>
      </Cell>
      <Cell label="Secret">
        {endpoint.rotatedAt === null
          ? "Never rotated"
          : `Rotated ${formatTime(endpoint.rotatedAt)}`}
        {endpoint.previousSecretUntil !== null && (
          <div class="hint" data-testid="previous-secret">
            The secret before also signs until {formatTime(endpoint.previousSecretUntil)}
          </div>
        )}
      </Cell>
      <Cell label="">
        <form method="post" action={`${path}/test`} class="inline">
          <button type="submit" class="secondary" data-testid="test-endpoint">Send test</button>
        </form>
        <form method="post" action={`${path}/rotate`} class="inline">
          <label class="check">
            <input type="checkbox" name="dropPrevious" value="true" /> The old one stops now
          </label>
          <Island
            component={DashboardConfirmSubmit}
            props={{
              label: "Rotate secret",
              question:
                "Make a new signing secret? The current one keeps signing beside it for 24 hours, unless you ticked “The old one stops now”.",
              className: "secondary",
              testId: "rotate-secret",
            }}
          />
        </form>
        <form method="post" action={`${path}/delete`} class="inline">
          <Island
            component={DashboardConfirmSubmit}
            props={{
              label: "Remove",
              question: `Stop sending webhooks to ${endpoint.url}?`,
              className: "secondary",
              testId: "remove-endpoint",
            }}
          />
        </form>
      </Cell>
    </tr>
  );
}
