/** The project list and the form creating a project. */
import type { VNode } from "preact";
import { DashboardCopyButton } from "../../islands/dashboard_copy.tsx";
import type { Project } from "../../kv/projects.ts";
import { fieldAria, FieldError } from "./field_error.tsx";
import { MAX_PROJECTS_PER_DEVELOPER, type Role } from "../../kv/members.ts";
import type { Invitation } from "../../kv/invitations.ts";
import { Island } from "../islands.tsx";
import { linkUrl } from "../../lib/link/page_url.ts";
import { DashboardFrame, FlashFor, type FrameData } from "./frame.tsx";
import { formatTime } from "./format.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { MAX_PROJECT_NAME_LENGTH } from "../../lib/projects/ownership.ts";

/** What the project list shows. */
interface ProjectsPageData extends FrameData {
  baseUrl: string;
  /** The projects the developer is a member of, with their role in each. */
  projects: Array<{ project: Project; role: Role }>;
  /** Invitations waiting for the developer, with the project's name. */
  invitations: Array<{ invitation: Invitation; name: string }>;
  /** `?error=` code that led here, already turned into a message. */
  errorMessage: string | null;
}

/** The project list body. */
export function ProjectsPage(data: ProjectsPageData): VNode {
  const draft = data.flash?.form === "create" ? data.flash.draft ?? {} : {};
  const owned = data.projects.filter((p) => p.role === "owner").length;
  const full = owned >= MAX_PROJECTS_PER_DEVELOPER;
  return (
    <DashboardFrame data={data}>
      {data.errorMessage && <div class="notice error" role="alert">{data.errorMessage}</div>}
      {data.invitations.length > 0 && <Invitations data={data} />}
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
            {data.projects.map(({ project, role }) => {
              const url = linkUrl(data.baseUrl, project.slug);
              return (
                <li key={project.id}>
                  <div class="title-row">
                    <a class="name" href={projectPath(project.id)}>{project.name}</a>
                    <span class="badge">{project.cluster}</span>
                    <span class="badge" data-testid="project-role">{role}</span>
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
          You own {owned} of {MAX_PROJECTS_PER_DEVELOPER}{" "}
          projects allowed; projects shared with you do not count.
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
            {...fieldAria({ flash: data.flash, form: "create", name: "name" })}
          />
          <FieldError flash={data.flash} form="create" name="name" />
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
              You own {MAX_PROJECTS_PER_DEVELOPER}{" "}
              projects, the most allowed: delete one or hand one over first.
            </p>
          )}
        </form>
      </section>
    </DashboardFrame>
  );
}

/** Invitations waiting for the signed-in wallet: accepting is what joins the team. */
function Invitations({ data }: { data: ProjectsPageData }): VNode {
  return (
    <section class="card" aria-labelledby="invitations-heading" data-testid="invitations">
      <h2 id="invitations-heading">Invitations</h2>
      <FlashFor flash={data.flash} form="invitations" />
      <ul class="project-list">
        {data.invitations.map(({ invitation, name }) => {
          const action = `/dashboard/invitations/${encodeURIComponent(invitation.projectId)}`;
          return (
            <li key={invitation.projectId} data-invitation={invitation.projectId}>
              <p>
                <strong>{name}</strong> invites you as <strong>{invitation.role}</strong>{" "}
                (invited by <span class="mono">{invitation.invitedBy}</span>, until{" "}
                {formatTime(invitation.expiresAt)}).
              </p>
              <form method="post" action={action} class="inline">
                <input type="hidden" name="accept" value="true" />
                <button type="submit" data-testid="accept-invitation">Accept</button>
              </form>{" "}
              <form method="post" action={action} class="inline">
                <input type="hidden" name="accept" value="false" />
                <button type="submit" class="secondary">Decline</button>
              </form>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
