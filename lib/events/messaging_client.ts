/** One publish attempt to the messaging service (Roblox Open Cloud `publishMessage`). */

/** How one attempt ended; `no_credential`: nothing to publish with (never sent, not retried). */
export type PublishAnswer =
  | { kind: "accepted"; status: number }
  | { kind: "http"; status: number; body: string }
  | { kind: "timeout" }
  | { kind: "network"; error: string }
  | { kind: "no_credential"; reason: string };

/**
 * How a publish is authorized: the project's publishing API key, or the connected game's OAuth
 * access token (`Authorization: Bearer`). Both are decrypted for this attempt and never logged.
 */
export type PublishCredential = { apiKey: string } | { accessToken: string };

/** What one attempt needs. */
interface PublishRequest {
  publishUrl: string;
  universeId: string;
  credential: PublishCredential;
  topic: string;
  message: string;
  timeoutMs: number;
}

/** True for answers worth another attempt: network errors, timeouts, 429 and 5xx. */
export function isRetryable(answer: PublishAnswer): boolean {
  if (answer.kind === "timeout" || answer.kind === "network") return true;
  return answer.kind === "http" && (answer.status === 429 || answer.status >= 500);
}

/** HTTP status of an answer, or null when none came back. */
export function answerStatus(answer: PublishAnswer): number | null {
  return answer.kind === "accepted" || answer.kind === "http" ? answer.status : null;
}

/** POSTs one message; never throws. */
export async function publishMessage(request: PublishRequest): Promise<PublishAnswer> {
  const url = `${request.publishUrl}/cloud/v2/universes/${
    encodeURIComponent(request.universeId)
  }:publishMessage`;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), request.timeoutMs);
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        ...("apiKey" in request.credential
          ? { "x-api-key": request.credential.apiKey }
          : { authorization: `Bearer ${request.credential.accessToken}` }),
        "content-type": "application/json",
      },
      body: JSON.stringify({ topic: request.topic, message: request.message }),
      // A redirect is an answer, never followed: the key would go along to wherever it points.
      redirect: "manual",
      signal: controller.signal,
    });
    const body = await response.text();
    if (response.ok) return { kind: "accepted", status: response.status };
    return { kind: "http", status: response.status, body: body.slice(0, 500) };
  } catch (error) {
    if (controller.signal.aborted) return { kind: "timeout" };
    return { kind: "network", error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}
