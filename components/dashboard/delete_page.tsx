/** The confirmation page before deleting a project (works without JavaScript). */
import type { VNode } from "preact";
import type { Project } from "../../kv/projects.ts";
import { type FrameData, ProjectFrame } from "./frame.tsx";
import { projectPath } from "../../http/dashboard_paths.ts";
import { EverythingForm } from "./withdraw_page.tsx";

/** What the confirmation shows. */
interface DeletePageData extends FrameData {
  project: Project;
  linkUrl: string;
  activeKeys: number;
}

/** The deletion confirmation body. */
export function DeletePage(data: DeletePageData): VNode {
  const { project } = data;
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
        <form method="post" action={`${projectPath(project.id)}/delete`} class="actions">
          <button type="submit" class="danger" data-testid="confirm-delete">
            Delete project
          </button>
          <a class="button secondary" href={projectPath(project.id, "settings")}>Cancel</a>
        </form>
      </section>
    </ProjectFrame>
  );
}
