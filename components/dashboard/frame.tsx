/** The frame around every dashboard page: top bar, project tabs, flash messages. */
import type { ComponentChildren, VNode } from "preact";
import type { Project } from "../../kv/projects.ts";
import type { Role } from "../../kv/members.ts";
import { Notice } from "../layout.tsx";
import type { Flash } from "../../http/flash.ts";
import { shortAddress } from "./format.ts";
import { PROJECT_TABS, projectPath, type ProjectTab } from "../../http/dashboard_paths.ts";
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
            <form method="post" action="/dashboard/sign-out-everywhere" class="inline">
              <button
                type="submit"
                class="linkish"
                title="End your dashboard sessions on every browser and device"
              >
                Sign out everywhere
              </button>
            </form>
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
      <main class="wide">
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
          {PROJECT_TABS.map((t) => (
            <a
              key={t.tab}
              href={projectPath(project.id, t.tab)}
              aria-current={t.tab === tab ? "page" : undefined}
            >
              {t.label}
            </a>
          ))}
        </nav>
        <FlashFor flash={data.flash} />
        {children}
      </main>
    </>
  );
}
