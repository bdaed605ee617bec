/** What the dashboard says about the platform's answer to a test ping. */
import type { TestPingResult } from "../../lib/events/publish.ts";

const HINTS: Record<number, string> = {
  400: "Roblox found the request invalid: check the universe ID and the topic.",
  401: "Roblox did not accept the publishing key: check that it is a valid Open Cloud API key.",
  403: "The key may not publish on this experience: give it the messaging-service publish " +
    "permission for this universe, or check the universe ID.",
  404: "Roblox does not know this universe: check the universe ID (not a place ID).",
  429: "Roblox is rate limiting publishes right now: try again in a minute.",
};

/** A sentence for the page: accepted, or the HTTP status (or network problem) with what to check. */
export function describePing(result: TestPingResult): string {
  if (result.ok) {
    return "Roblox accepted the test event (HTTP 200). Subscribed servers receive a ping.";
  }
  if (result.status === null) return `${result.message}.`;
  const hint = HINTS[result.status] ??
    (result.status >= 500 ? "Roblox had a problem: try again shortly." : "");
  return `Roblox answered HTTP ${result.status}. ${hint}`.trim();
}
