/** URLs of dashboard pages, built in one place so links, redirects and tests agree. */

/** The pages of one project, in the order the navigation shows them. */
export const PROJECT_TABS = [
  { tab: "", label: "Overview" },
  { tab: "usage", label: "Usage" },
  { tab: "keys", label: "API keys" },
  { tab: "settings", label: "Settings" },
  { tab: "policy", label: "Policy" },
  { tab: "watches", label: "Watches" },
  { tab: "transactions", label: "Transactions" },
  { tab: "players", label: "Players" },
  { tab: "requests", label: "Request log" },
  { tab: "events", label: "Event log" },
  { tab: "team", label: "Team" },
  { tab: "audit", label: "Audit log" },
  { tab: "webhooks", label: "Webhooks" },
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
