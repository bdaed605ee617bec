/** The project list and the form creating a project. */
import type { VNode } from "preact";
import { DashboardCopyButton } from "../../islands/dashboard_copy.tsx";
import { MAX_PROJECTS_PER_DEVELOPER, type Project } from "../../kv/projects.ts";
import { Island } from "../islands.tsx";
import { linkUrl } from "../../lib/link/page_url.ts";
import { DashboardFrame, FlashFor, type FrameData } from "./frame.tsx";
import { formatTime } from "./format.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { MAX_PROJECT_NAME_LENGTH } from "../../lib/projects/ownership.ts";

/** What the project list shows. */
interface ProjectsPageData extends FrameData {
  baseUrl: string;
  projects: Project[];
  /** `?error=` code that led here, already turned into a message. */
  errorMessage: string | null;
}

/** The project list body. */
export function ProjectsPage(data: ProjectsPageData): VNode {
  const draft = data.flash?.form === "create" ? data.flash.draft ?? {} : {};
  const full = data.projects.length >= MAX_PROJECTS_PER_DEVELOPER;
  return (
    <DashboardFrame data={data}>
      {data.errorMessage && <div class="notice error" role="alert">{data.errorMessage}</div>}
      <h1>Your projects</h1>
      {data.projects.length === 0
        ? (
          <p class="empty" data-testid="no-projects">
            No projects yet. Create one for each game: it gets its own API keys, wallet-linking
            page, managed wallet and settings.
          </p>
        )
        : (
          <ul class="project-list" data-testid="project-list">
            {data.projects.map((project) => {
              const url = linkUrl(data.baseUrl, project.slug);
              return (
                <li key={project.id}>
                  <div class="title-row">
                    <a class="name" href={projectPath(project.id)}>{project.name}</a>
                    <span class="badge">{project.cluster}</span>
                  </div>
                  <p class="muted">
                    Slug <span class="mono">{project.slug}</span> · created{" "}
                    {formatTime(project.createdAt)}
                  </p>
                  <p>
                    Linking page: <a class="mono" href={url}>{url}</a>{" "}
                    <Island
                      component={DashboardCopyButton}
                      props={{ text: url, label: `Copy the linking URL of ${project.name}` }}
                    />
                  </p>
                </li>
              );
            })}
          </ul>
        )}

      <section class="card" aria-labelledby="create-heading">
        <h2 id="create-heading">Create a project</h2>
        <p class="muted">
          {data.projects.length} of {MAX_PROJECTS_PER_DEVELOPER} projects used.
        </p>
        <FlashFor flash={data.flash} form="create" />
        <form method="post" action="/dashboard/projects" data-testid="create-project">
          <label for="project-name">Name</label>
          <input
            id="project-name"
            name="name"
            required
            maxLength={MAX_PROJECT_NAME_LENGTH}
            value={String(draft.name ?? "")}
            autocomplete="off"
          />
          <p class="hint">
            The linking URL is derived from the name and never changes, even if you rename the
            project.
          </p>
          <fieldset>
            <legend>Cluster</legend>
            <label class="check">
              <input
                type="radio"
                name="cluster"
                value="devnet"
                checked={draft.cluster !== "mainnet"}
              />{" "}
              Devnet: test SOL and tokens, for development
            </label>
            <label class="check">
              <input
                type="radio"
                name="cluster"
                value="mainnet"
                checked={draft.cluster === "mainnet"}
              />{" "}
              Mainnet: real SOL and tokens
            </label>
            <p class="hint">
              Every read and transaction of the project uses it; it is fixed at creation.
            </p>
          </fieldset>
          <div class="actions">
            <button type="submit" disabled={full}>Create project</button>
          </div>
          {full && (
            <p class="hint">
              You have {MAX_PROJECTS_PER_DEVELOPER} projects, the most allowed: delete one first.
            </p>
          )}
        </form>
      </section>
    </DashboardFrame>
  );
}
