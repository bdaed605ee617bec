/** The frame around every dashboard page: top bar, project tabs, flash messages. */
import type { ComponentChildren, VNode } from "preact";
import type { Project } from "../../kv/projects.ts";
import type { Role } from "../../kv/members.ts";
import { fieldLabel } from "./field_error.tsx";
import { Notice } from "../layout.tsx";
import type { Flash } from "../../http/flash.ts";
import { shortAddress } from "./format.ts";
import {
  PROJECT_TABS,
  projectPath,
  type ProjectTab,
  TAB_GROUPS,
} from "../../http/dashboard_paths.ts";
import { DASHBOARD_CSS } from "./styles.ts";

/** The dashboard's extra styles, placed once per page. */
export function DashboardStyles(): VNode {
  return <style dangerouslySetInnerHTML={{ __html: DASHBOARD_CSS }} />;
}

/** The top bar: service name, the signed-in wallet and sign out. */
export function TopBar(
  { serviceName, developer }: { serviceName: string; developer: string | null },
): VNode {
  return (
    <header class="topbar">
      <a class="skip-link" href="#content">Skip to content</a>
      <div class="inner">
        <a class="brand" href={developer ? "/dashboard" : "/"}>{serviceName}</a>
        <span class="muted">Developer dashboard</span>
        <span class="spacer" />
        <a href="/docs" data-testid="topbar-docs-link">API reference</a>
        {developer && (
          <>
            <span class="who" title={developer} data-testid="developer">
              Signed in as <span class="mono">{shortAddress(developer)}</span>
            </span>
            <form method="post" action="/auth/logout" class="inline">
              <button type="submit" class="linkish">Sign out</button>
            </form>
            <details class="ask" data-testid="sign-out-everywhere">
              <summary class="linkish">Sign out everywhere</summary>
              <form method="post" action="/dashboard/sign-out-everywhere">
                <p>End your dashboard sessions on every browser and device, this one included?</p>
                <button type="submit" class="danger">Yes, sign out everywhere</button>
              </form>
            </details>
          </>
        )}
      </div>
    </header>
  );
}

/** Shows the flash when it belongs here: `form` names the form, none means the page itself. */
export function FlashFor({ flash, form }: { flash: Flash | null; form?: string }): VNode | null {
  if (!flash || (flash.form ?? undefined) !== form) return null;
  return (
    <div data-testid={`flash-${flash.kind}`}>
      <Notice kind={flash.kind}>
        {flash.message}
        {flash.fields && (
          <ul data-testid="field-problems">
            {Object.entries(flash.fields).map(([name, problem]) => (
              <li key={name}>{fieldLabel(name)}: {problem}</li>
            ))}
          </ul>
        )}
        {flash.details && (
          <details>
            <summary>Details</summary>
            <pre>{flash.details}</pre>
          </details>
        )}
      </Notice>
    </div>
  );
}

/** Everything a dashboard page needs from its request. */
export interface FrameData {
  serviceName: string;
  developer: string;
  flash: Flash | null;
  /** On a project's pages: the developer's role in it. */
  role?: Role;
}

/** A dashboard page outside any project (the project list). */
export function DashboardFrame(
  { data, children }: { data: FrameData; children: ComponentChildren },
): VNode {
  return (
    <>
      <DashboardStyles />
      <TopBar serviceName={data.serviceName} developer={data.developer} />
      <main class="wide" id="content" tabIndex={-1}>
        <FlashFor flash={data.flash} />
        {children}
      </main>
    </>
  );
}

/** A page of one project: its name, cluster, tabs, then the page. */
export function ProjectFrame(
  { data, project, tab, children }: {
    data: FrameData;
    project: Project;
    tab: ProjectTab;
    children: ComponentChildren;
  },
): VNode {
  return (
    <>
      <DashboardStyles />
      <TopBar serviceName={data.serviceName} developer={data.developer} />
      <main class="wide">
        <p class="crumbs">
          <a href="/dashboard">Projects</a> /
        </p>
        <div class="title-row">
          <h1 data-testid="project-name">{project.name}</h1>
          <span class="badge" data-testid="project-cluster">{project.cluster}</span>
        </div>
        <nav class="tabs" aria-label="Project pages">
          {TAB_GROUPS.map((group) => (
            <div class="tab-group" key={group} role="group" aria-label={group}>
              <span class="group-label" aria-hidden="true">{group}</span>
              {PROJECT_TABS.filter((t) =>
                t.group === group
              ).map((t) => (
                <a
                  key={t.tab}
                  href={projectPath(project.id, t.tab)}
                  aria-current={t.tab === tab ? "page" : undefined}
                >
                  {t.label}
                </a>
              ))}
            </div>
          ))}
        </nav>
        <div id="content" tabIndex={-1}>
          <FlashFor flash={data.flash} />
          {children}
        </div>
      </main>
    </>
  );
}
