/** One publish attempt of one message to a project's target: the step deliveries, the publisher and test pings share. */
import type { EventContext } from "./runtime.ts";
import { decryptSecretText } from "../crypto/encryption.ts";
import { type PublishAnswer, type PublishCredential, publishMessage } from "./messaging_client.ts";
import type { PublishTarget } from "./runtime.ts";
import { getAccessToken } from "../roblox/access_token.ts";

/**
 * Publishes with the target's credential, decrypted (or, for a connected game, refreshed) only
 * for this attempt. A connected game's access token refused with a 401 is refreshed and the
 * publish made once more within the attempt: the token was revoked or replaced early, and the
 * refresh says which (a lost grant answers `no_credential`, never retried).
 */
export async function publishToTarget(
  ctx: EventContext,
  projectId: string,
  input: { target: PublishTarget; message: string },
): Promise<PublishAnswer> {
  const { target } = input;
  const send = (credential: PublishCredential) =>
    publishMessage({
      publishUrl: ctx.config.publishUrl,
      universeId: target.universeId,
      credential,
      topic: target.topic,
      message: input.message,
      timeoutMs: ctx.events.attemptTimeoutMs,
    });
  if (target.auth === "key") {
    let apiKey: string;
    try {
      apiKey = await decryptSecretText(ctx.keys, target.publishingKeyEnc, {
        purpose: "publishing_key",
        context: projectId,
      });
    } catch {
      return { kind: "no_credential", reason: "The publishing key cannot be decrypted" };
    }
    return await send({ apiKey });
  }
  const first = await getAccessToken(ctx, projectId);
  if (first.kind !== "token") return noToken(first);
  const answer = await send({ accessToken: first.token });
  if (answer.kind !== "http" || answer.status !== 401) return answer;
  const second = await getAccessToken(ctx, projectId, { stale: first.token });
  if (second.kind !== "token") return noToken(second);
  return await send({ accessToken: second.token });
}

function noToken(result: Awaited<ReturnType<typeof getAccessToken>>): PublishAnswer {
  if (result.kind === "unavailable") return { kind: "network", error: result.reason };
  return {
    kind: "no_credential",
    reason: result.kind === "lost"
      ? "The Roblox connection was lost: reconnect the game"
      : "The game is not connected with Roblox",
  };
}
