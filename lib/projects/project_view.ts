/** The spec's Project object, as `GET /v1/project` answers it. */
import type { Project } from "../../kv/projects.ts";
import { eventsEnabled } from "../events/settings.ts";
import { linkUrl } from "../link/page_url.ts";

/** Public view of a project. */
interface ProjectView {
  id: string;
  name: string;
  slug: string;
  cluster: string;
  walletAddress: string | null;
  linkUrl: string;
  events: boolean;
}

/** Builds the Project object from the stored record. */
export function projectView(project: Project, baseUrl: string): ProjectView {
  return {
    id: project.id,
    name: project.name,
    slug: project.slug,
    cluster: project.cluster,
    walletAddress: project.walletAddress,
    linkUrl: linkUrl(baseUrl, project.slug),
    events: eventsEnabled(project),
  };
}
