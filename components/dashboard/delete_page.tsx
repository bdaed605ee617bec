/** The confirmation page before deleting a project (works without JavaScript). */
import type { VNode } from "preact";
import type { Project } from "../../kv/projects.ts";
import { type FrameData, ProjectFrame } from "./frame.tsx";
import { projectPath } from "../../http/dashboard_paths.ts";
import { EverythingForm } from "./withdraw_page.tsx";
import type { WalletBalances } from "../../lib/projects/wallet.ts";
import { tokenAmountText } from "./token_amount.tsx";

/** What the confirmation shows. */
interface DeletePageData extends FrameData {
  project: Project;
  linkUrl: string;
  activeKeys: number;
  /** What the wallet holds; null without a wallet or when the chain could not be read. */
  balances: WalletBalances | null;
}

/** `2 SOL and 25 GEM` (or `25 of 5Vg7…sMmc (6 decimals)`), or null when the wallet holds nothing. */
function holdings(balances: WalletBalances): string | null {
  const parts = [
    ...(Number(balances.sol) > 0 ? [`${balances.sol} SOL`] : []),
    ...balances.tokens.filter((t) => Number(t.amount) > 0).map((t) =>
      tokenAmountText({ ...t, amount: t.uiAmount })
    ),
  ];
  return parts.length > 0 ? parts.join(" and ") : null;
}

/** The deletion confirmation body. */
export function DeletePage(data: DeletePageData): VNode {
  const { project } = data;
  const held = data.balances && holdings(data.balances);
  return (
    <ProjectFrame data={data} project={project} tab="delete">
      {project.walletAddress && (
        <EverythingForm project={project} recipient="">
          <p class="notice info">
            First, take the wallet's funds out: after the deletion nothing can send from it.
          </p>
        </EverythingForm>
      )}
      <section class="card" aria-labelledby="delete-heading">
        <h2 id="delete-heading">Delete {project.name}?</h2>
        <p>This cannot be undone.</p>
        <ul class="steps">
          <li>
            Its {data.activeKeys} active API key{data.activeKeys === 1 ? "" : "s"}{" "}
            stop working within 30 seconds.
          </li>
          <li>
            Its linking page <span class="mono">{data.linkUrl}</span>{" "}
            tells players no game uses it; the slug is never given to another project.
          </li>
          <li>Its settings, policy and links can no longer be read.</li>
          {project.walletAddress && (
            <li>
              Its managed wallet <span class="mono">{project.walletAddress}</span>{" "}
              can no longer send: withdraw what it holds first, below.
            </li>
          )}
        </ul>
        {held && (
          <p class="notice error" role="alert" data-testid="stranded">
            The managed wallet holds{" "}
            {held}. Deleting the project strands it: nothing can send it afterwards.
          </p>
        )}
        {project.walletAddress && !data.balances && (
          <p class="notice info" data-testid="stranded">
            The wallet's balance could not be read just now: withdraw what it holds before deleting.
          </p>
        )}
        <form method="post" action={`${projectPath(project.id)}/delete`}>
          <label for="delete-name">Type the project's name, {project.name}, to delete it</label>
          <input
            id="delete-name"
            name="name"
            required
            autocomplete="off"
            spellcheck={false}
            data-testid="delete-name"
          />
          <div class="actions">
            <button type="submit" class="danger" data-testid="confirm-delete">
              Delete project
            </button>
            <a class="button secondary" href={projectPath(project.id, "settings")}>Cancel</a>
          </div>
        </form>
      </section>
    </ProjectFrame>
  );
}
