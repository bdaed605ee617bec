/** URLs of dashboard pages, built in one place so links, redirects and tests agree. */

/** The groups the project pages are shown in, in order. */
export const TAB_GROUPS = ["Project", "Activity", "Build", "Team"] as const;

/** The pages of one project, in the order the navigation shows them, each in its group. */
export const PROJECT_TABS = [
  { tab: "", label: "Overview", group: "Project" },
  { tab: "usage", label: "Usage", group: "Project" },
  { tab: "settings", label: "Settings", group: "Project" },
  { tab: "transactions", label: "Transactions", group: "Activity" },
  { tab: "players", label: "Players", group: "Activity" },
  { tab: "rewards", label: "Held rewards", group: "Activity" },
  { tab: "requests", label: "Request log", group: "Activity" },
  { tab: "events", label: "Event log", group: "Activity" },
  { tab: "keys", label: "API keys", group: "Build" },
  { tab: "policy", label: "Policy", group: "Build" },
  { tab: "watches", label: "Watches", group: "Build" },
  { tab: "webhooks", label: "Webhooks", group: "Build" },
  { tab: "team", label: "Team", group: "Team" },
  { tab: "audit", label: "Audit log", group: "Team" },
] as const;

/** One project page's tab name (`""` is the overview); the last three are reached by links. */
export type ProjectTab = typeof PROJECT_TABS[number]["tab"] | "delete" | "withdraw" | "export";

/** The sign-in page, landing on `next` afterwards. */
export function signInPath(next: string): string {
  return next === "/dashboard"
    ? "/dashboard/sign-in"
    : `/dashboard/sign-in?next=${encodeURIComponent(next)}`;
}

/** A project's page. */
export function projectPath(projectId: string, tab: ProjectTab = ""): string {
  const base = `/dashboard/projects/${encodeURIComponent(projectId)}`;
  return tab ? `${base}/${tab}` : base;
}
