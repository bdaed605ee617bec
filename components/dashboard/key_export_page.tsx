/** The owner's export of the managed wallet's key: the page that starts it, and the key shown once. */
import type { VNode } from "preact";
import type { Project } from "../../kv/projects.ts";
import type { KeyExports } from "../../kv/key_exports.ts";
import type { ExportedKey } from "../../lib/projects/key_export.ts";
import { DashboardCopyButton } from "../../islands/dashboard_copy.tsx";
import { Island } from "../islands.tsx";
import { FlashFor, type FrameData, ProjectFrame } from "./frame.tsx";
import { formatTime } from "./format.ts";
import { projectPath } from "../../http/dashboard_paths.ts";

/** What the export page shows. */
interface KeyExportPageData extends FrameData {
  project: Project;
  /** False when the deployment turned exports off. */
  enabled: boolean;
  exports: KeyExports | null;
  /** Exports left in the rolling 24 hours, and the limit. */
  left: number;
  perDay: number;
}

/** The export page body. */
export function KeyExportPage(data: KeyExportPageData): VNode {
  const { project, exports } = data;
  return (
    <ProjectFrame data={data} project={project} tab="export">
      <section class="card" aria-labelledby="export-heading">
        <h2 id="export-heading">Export the managed wallet's key</h2>
        <FlashFor flash={data.flash} form="statement" />
        <FlashFor flash={data.flash} />
        <p>
          The secret key of <span class="mono">{project.walletAddress ?? "(no wallet yet)"}</span>
          {" "}
          in the formats Solana's CLI (<span class="mono">solana-keygen</span>'s JSON file) and
          wallet apps (a base58 private key) import. Whoever holds it controls every asset of the
          wallet, and a copy can never be called back: keep it offline. The service keeps signing
          with the same key.
        </p>
        <p class="muted" data-testid="export-status">
          {exports
            ? `Exported ${exports.total} time${exports.total === 1 ? "" : "s"}, last on ${
              formatTime(exports.lastAt)
            } by ${exports.lastBy}.`
            : "Never exported."} At most {data.perDay} exports a day; {data.left} left now.
        </p>
        {!data.enabled
          ? (
            <p class="notice info" data-testid="export-disabled">
              Key export is turned off on this deployment.
            </p>
          )
          : project.walletAddress && data.left > 0 && (
            <form method="post" action={`${projectPath(project.id, "export")}/prepare`}>
              <p>You confirm by signing a message naming this project with your wallet.</p>
              <div class="actions">
                <button type="submit" class="danger" data-testid="export-prepare">
                  Review and sign
                </button>
              </div>
            </form>
          )}
      </section>
    </ProjectFrame>
  );
}

/** The key, shown in the answer to the signed confirmation only: never again. */
export function ExportedKeyPage(
  data: FrameData & { project: Project; exported: ExportedKey },
): VNode {
  // Not `key`: Preact keeps that prop for itself.
  const { project, exported: key } = data;
  const cli = JSON.stringify(key.solanaCli);
  return (
    <ProjectFrame data={data} project={project} tab="export">
      <section class="card" aria-labelledby="exported-heading">
        <h2 id="exported-heading">
          The key of <span class="mono">{key.walletAddress}</span>
        </h2>
        <p class="notice error" role="alert">
          Shown this once: copy it now to somewhere safe and offline. Reloading will not show it
          again, and anyone who sees it can take the wallet's funds.
        </p>
        {/* Hidden until asked for: a screen shared or watched over a shoulder shows nothing. */}
        <details class="reveal" data-testid="reveal-key">
          <summary class="button danger">Reveal the secret key</summary>
          <h3>Solana CLI</h3>
          <p>
            Save as a file (for example <span class="mono">wallet.json</span>) and use it with{" "}
            <span class="mono">solana address -k wallet.json</span>.
          </p>
          <pre class="mono secret" data-testid="exported-cli">{cli}</pre>
          <Island component={DashboardCopyButton} props={{ text: cli, label: "Copy the JSON" }} />
          <h3>Wallet apps</h3>
          <p>Import as a private key (base58) in Phantom, Solflare or Backpack.</p>
          <pre class="mono secret" data-testid="exported-base58">{key.base58}</pre>
          <Island
            component={DashboardCopyButton}
            props={{ text: key.base58, label: "Copy the private key" }}
          />
        </details>
        <p class="actions">
          <a class="button secondary" href={projectPath(project.id)}>Done</a>
        </p>
      </section>
    </ProjectFrame>
  );
}
