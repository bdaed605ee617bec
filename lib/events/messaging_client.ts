/** One publish attempt to the messaging service (Roblox Open Cloud `publishMessage`). */

/** How one attempt ended. */
export type PublishAnswer =
  | { kind: "accepted"; status: number }
  | { kind: "http"; status: number; body: string }
  | { kind: "timeout" }
  | { kind: "network"; error: string };

/** What one attempt needs; `apiKey` is the decrypted publishing key and must never be logged. */
interface PublishRequest {
  publishUrl: string;
  universeId: string;
  apiKey: string;
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
      headers: { "x-api-key": request.apiKey, "content-type": "application/json" },
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
