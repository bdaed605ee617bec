/**
 * Stand-in credentials in one click: on a service running on this machine (`requireSandbox`),
 * a member who may change the settings gets a fresh OAuth client and publishing key registered on
 * the Roblox stand-ins `deno task dev` starts, and saved in the project's settings, so players can
 * link and events flow without a Roblox account. The stand-ins are told through their control
 * routes (`POST /_control/clients` at IDP_URL's origin, `POST /_control/keys` at PUBLISH_URL's),
 * the same HTTP a test or a tool out of process uses; a service pointed at Roblox itself gets
 * 502 `stand_in_unavailable`, and nothing is saved.
 */
import { ApiError } from "../../core/api_error.ts";
import { randomToken } from "../../core/ids.ts";
import { log } from "../../core/log.ts";
import { oauthRedirectUri } from "../auth/oauth_app.ts";
import type { AppContext } from "../context.ts";
import type { Project } from "../../kv/projects.ts";
import { requireSandbox } from "./sandbox_funds.ts";
import { saveProjectSettings } from "./settings.ts";

// A stand-in on this machine answers at once; one that does not is not there.
const CONTROL_TIMEOUT_MS = 5_000;

/** Registers new stand-in credentials and saves them; answers the client ID and universe ID. */
export async function useStandInCredentials(
  ctx: AppContext,
  input: { project: Project; developer: string },
): Promise<{ oauthClientId: string; universeId: string }> {
  const { project, developer } = input;
  requireSandbox(ctx, "Stand-in credentials");
  const oauthClientId = `sandbox-${project.id.toLowerCase()}-${randomToken().slice(0, 8)}`;
  const oauthClientSecret = randomToken();
  const publishingKey = `sandbox-publishing-key-${randomToken()}`;
  const universeId = project.settings.universeId ?? sandboxUniverseId();
  await tellStandIn(new URL("/_control/clients", ctx.config.idpUrl), {
    clientId: oauthClientId,
    clientSecret: oauthClientSecret,
    redirectUris: [oauthRedirectUri(ctx.config.baseUrl)],
    name: project.name,
  });
  await tellStandIn(new URL("/_control/keys", ctx.config.publishUrl), {
    apiKey: publishingKey,
    universeId,
  });
  await saveProjectSettings(ctx, project, {
    oauthClientId,
    oauthClientSecret,
    universeId,
    publishingKey,
  }, { actor: developer });
  log("info", "Stand-in credentials saved", { projectId: project.id, oauthClientId, universeId });
  return { oauthClientId, universeId };
}

/** A universe ID no real experience is confused with: 9 digits starting 9. */
function sandboxUniverseId(): string {
  const digits = crypto.getRandomValues(new Uint32Array(1))[0]! % 100_000_000;
  return `9${String(digits).padStart(8, "0")}`;
}

async function tellStandIn(url: URL, body: unknown): Promise<void> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS),
  }).catch(() => null);
  await res?.body?.cancel();
  if (!res?.ok) {
    throw new ApiError(
      "stand_in_unavailable",
      "The Roblox stand-ins did not take the credentials: IDP_URL and PUBLISH_URL must point at " +
        "the stand-ins deno task dev starts",
    );
  }
}
