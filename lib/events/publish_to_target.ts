/** One publish attempt of one event to a project's target: the step deliveries and test pings share. */
import type { EventContext } from "./runtime.ts";
import { decryptSecretText } from "../crypto/encryption.ts";
import { encodeEventMessage } from "./message.ts";
import { type PublishAnswer, publishMessage } from "./messaging_client.ts";
import type { PublishTarget } from "./runtime.ts";
import type { RecordedEvent } from "../../core/events.ts";

/** Decrypts the publishing key only for this attempt and publishes; null when the key cannot be decrypted. */
export async function publishToTarget(
  ctx: EventContext,
  projectId: string,
  input: { target: PublishTarget; event: RecordedEvent },
): Promise<PublishAnswer | null> {
  let apiKey: string;
  try {
    apiKey = await decryptSecretText(ctx.keys, input.target.publishingKeyEnc, {
      purpose: "publishing_key",
      context: projectId,
    });
  } catch {
    return null;
  }
  return await publishMessage({
    publishUrl: ctx.config.publishUrl,
    universeId: input.target.universeId,
    apiKey,
    topic: input.target.topic,
    message: encodeEventMessage(input.event),
    timeoutMs: ctx.events.attemptTimeoutMs,
  });
}
