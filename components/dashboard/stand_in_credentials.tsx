/** The settings page's one click for `deno task dev`: credentials the Roblox stand-ins accept. */
import type { VNode } from "preact";
import { projectPath } from "../../http/dashboard_paths.ts";

/** The button, for a service on this machine only (`lib/projects/sandbox_roblox.ts`). */
export function StandInCredentials({ projectId }: { projectId: string }): VNode {
  return (
    <form
      method="post"
      action={`${projectPath(projectId)}/settings/stand-in`}
      class="notice info"
      data-testid="stand-in-form"
    >
      <p>
        This service runs on your machine with stand-ins for Roblox. One click registers a new OAuth
        app and publishing key with them and saves both here, so players can link and events flow.
      </p>
      <button type="submit" class="secondary" data-testid="use-stand-in">
        Use stand-in credentials
      </button>
    </form>
  );
}
