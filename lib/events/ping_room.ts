/**
 * A test ping of a project with a cap on messages a minute counts toward the cap like any message
 * its publisher sends, and is refused when the cap is full instead of waiting unseen: the developer
 * pressing "Send test event" learns at once why nothing arrives, and the game's events never lose
 * room to pings beyond the cap.
 *
 * The ping's send is added to the publisher's sends (`PublisherState.sent`, `message_cap.ts`) in a
 * commit checked on the publisher's record and on its loop job: only while no round holds the job's
 * lease, since a round that began before would commit sends that leave the ping out (and the ping's
 * write would fail that round's commit, which repeats its messages). While a round runs the ping
 * waits for the lease to end (a round lasts about one publish attempt, 5 s at most), 10 s at most.
 */
import { getJobEntry } from "../../kv/jobs.ts";
import { getEventSeqEntry } from "../../kv/event_feed.ts";
import { getPublisherEntry, newPublisherState, publisherKey } from "../../kv/event_publishers.ts";
import type { EventContext } from "./runtime.ts";
import { addSends, capFreesAt, capRoom } from "./message_cap.ts";
import { publisherJobId } from "./job_payloads.ts";

/** How long a ping waits for a running round of the publisher, looking every 100 ms. */
const ROUND_WAIT_MS = 10_000;
const ROUND_LOOK_MS = 100;

/** Whether the ping may go: room taken, or refused with the reason for the dashboard. */
export type PingRoom = { ok: true } | { ok: false; message: string };

/** Takes one message of the project's cap for a test ping, or says why it cannot go now. */
export async function takePingRoom(
  ctx: EventContext,
  projectId: string,
  options: { cap: number },
): Promise<PingRoom> {
  const { cap } = options;
  const deadline = Date.now() + ROUND_WAIT_MS;
  while (Date.now() < deadline) {
    const [job, state, seq] = await Promise.all([
      getJobEntry(ctx.kv, publisherJobId(projectId)),
      getPublisherEntry(ctx.kv, projectId),
      getEventSeqEntry(ctx.kv, projectId),
    ]);
    if (job.value?.status === "pending" && job.value.lease !== null) {
      // Looked at again shortly: a read works on every store (a remote KV may not watch).
      await new Promise((resolve) => setTimeout(resolve, ROUND_LOOK_MS));
      continue;
    }
    const now = ctx.clock.now();
    const publisher = state.value ?? newPublisherState(seq.value ?? 0);
    if (capRoom(publisher.sent, { cap, now }) === 0) {
      const seconds = Math.ceil((capFreesAt(publisher.sent, { cap, now }) - now) / 1_000);
      return {
        ok: false,
        message: `The cap of ${cap} message${cap === 1 ? "" : "s"} a minute is full ` +
          `(a test event counts toward it): nothing was sent; room frees in ${seconds} s`,
      };
    }
    const sent = addSends(publisher.sent, { now, count: 1 });
    const op = ctx.kv.atomic().check(job).check(state);
    if ((await op.set(publisherKey(projectId), { ...publisher, sent }).commit()).ok) {
      return { ok: true };
    }
  }
  return {
    ok: false,
    message: "The publisher is busy sending the project's events: nothing was sent; try again",
  };
}
