/** A project's watched addresses: each new transaction touching one becomes a `watch` event. */
import type { VNode } from "preact";
import { DashboardConfirmSubmit } from "../../islands/dashboard_confirm.tsx";
import type { Project } from "../../kv/projects.ts";
import {
  MAX_WATCH_NAME_LENGTH,
  MAX_WATCHES_PER_PROJECT,
  type WatchView,
} from "../../lib/watches/watches.ts";
import { Island } from "../islands.tsx";
import { FlashFor, type FrameData, ProjectFrame } from "./frame.tsx";
import { explorerAddressUrl, formatTime } from "./format.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { Cell, ListHead } from "./cell.tsx";
import { AddressField } from "./address_field.tsx";
import { fieldAria, FieldError } from "./field_error.tsx";

/** What the watches page shows. */
interface WatchesPageData extends FrameData {
  project: Project;
  rpcUrl: string;
  watches: WatchView[];
  eventsOn: boolean;
}

/** The watches page body. */
export function WatchesPage(data: WatchesPageData): VNode {
  const { project, flash } = data;
  const base = `${projectPath(project.id)}/watches`;
  const draft = flash?.form === "watch" && flash.kind === "error" ? flash.draft ?? {} : {};
  return (
    <ProjectFrame data={data} project={project} tab="watches">
      <section class="card" aria-labelledby="watches-heading">
        <h2 id="watches-heading">Watched addresses</h2>
        <p>
          Each watched address is checked every few seconds; every new transaction that touches it
          is sent to your servers as a <span class="mono">watch</span>{" "}
          event with the watch's name. Past transactions are not replayed.
        </p>
        {!data.eventsOn && (
          <p class="notice info">
            Events are off, so nothing is sent yet: save a universe ID and publishing key in{" "}
            <a href={projectPath(project.id, "settings")}>Settings</a>.
          </p>
        )}
        <FlashFor flash={flash} form="watches" />
        {data.watches.length === 0
          ? <p class="empty">No watched addresses.</p>
          : (
            <table class="list stack" data-testid="watch-list">
              <ListHead columns={["Name", "Address", "Added"]} />
              <tbody>
                {data.watches.map((watch) => (
                  <tr key={watch.id}>
                    <Cell label="Name">{watch.name}</Cell>
                    <Cell label="Address">
                      <a
                        class="mono"
                        href={explorerAddressUrl(project.cluster, data.rpcUrl, watch.address)}
                      >
                        {watch.address}
                      </a>
                    </Cell>
                    <Cell label="Added">{formatTime(watch.createdAt)}</Cell>
                    <Cell label="">
                      <form
                        method="post"
                        action={`${base}/${watch.id}/delete`}
                        class="inline"
                      >
                        <Island
                          component={DashboardConfirmSubmit}
                          props={{
                            label: "Remove",
                            question: `Stop watching ${watch.name}?`,
                            className: "secondary",
                            testId: "remove-watch",
                          }}
                        />
                      </form>
                    </Cell>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </section>

      <section class="card" aria-labelledby="add-watch-heading">
        <h2 id="add-watch-heading">Watch an address</h2>
        <p class="muted">
          {data.watches.length} of {MAX_WATCHES_PER_PROJECT} watches used.
        </p>
        <FlashFor flash={flash} form="watch" />
        <form method="post" action={base} data-testid="add-watch">
          <div class="grid">
            <div>
              <label for="watch-name">Name</label>
              <input
                id="watch-name"
                name="name"
                required
                maxLength={MAX_WATCH_NAME_LENGTH}
                autocomplete="off"
                value={String(draft.name ?? "")}
                {...fieldAria({ flash, form: "watch", name: "name" })}
              />
              <FieldError flash={flash} form="watch" name="name" />
              <p class="hint">Up to {MAX_WATCH_NAME_LENGTH} characters; sent with each event.</p>
            </div>
            <div>
              <AddressField
                id="watch-address"
                name="address"
                label="Address"
                value={String(draft.address ?? "")}
                refused={{ flash, form: "watch" }}
              />
            </div>
          </div>
          <div class="actions">
            <button type="submit">Add watch</button>
          </div>
        </form>
      </section>
    </ProjectFrame>
  );
}
