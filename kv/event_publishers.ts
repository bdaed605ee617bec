/**
 * Each project's event publisher (`lib/events/publisher.ts`): how far through the project's feed it
 * went, the messages waiting for a retry and what it sent in the last minute. One record per
 * project that ever published through it or was set to (`createPublisher`), written only by the
 * commit ending a publisher run (checked against the record that run read) or, when absent, by the
 * commit starting the loop or a save of the settings turning the publisher on.
 */
import type { ServiceEventType } from "../core/events.ts";
import { getEventSeqEntry } from "./event_feed.ts";

/** A message whose last attempt failed with an answer worth another (the spec's retry rule). */
export interface PendingMessage {
  /** The encoded message, sent again byte for byte. */
  message: string;
  /** The events it carries, for the delivery log (a notice's newest ones, as many as it keeps). */
  events: Array<{ id: string; type: ServiceEventType }>;
  /** A burst notice's count of events it covers (`lib/events/notice.ts`); absent otherwise. */
  covers?: number;
  /** Attempts made so far. */
  attempts: number;
  /** When the next attempt falls due (Unix ms). */
  dueAt: number;
}

/** A project's publisher, as stored. */
export interface PublisherState {
  /** Feed position up to which every marked event went into a message (sent, waiting or dropped). */
  cursor: number;
  pending: PendingMessage[];
  /** Messages first sent per clock second, `[second, count]`, within the last 60 seconds. */
  sent: Array<[number, number]>;
  /** When the publisher first found the project neither packing nor capping; null while it does. */
  offSince: number | null;
  /** Since when its rounds found nothing to send (absent or null: the last one sent). */
  idleSince?: number | null;
}

/** Key of a project's publisher record. */
export function publisherKey(projectId: string): Deno.KvKey {
  return ["event_publishers", projectId];
}

/** Reads a project's publisher record (null value when it never published). */
export function getPublisherEntry(
  kv: Deno.Kv,
  projectId: string,
): Promise<Deno.KvEntryMaybe<PublisherState>> {
  return kv.get<PublisherState>(publisherKey(projectId));
}

/** A publisher that has gone through the feed up to `cursor`. */
export function newPublisherState(cursor: number): PublisherState {
  return { cursor, pending: [], sent: [], offSince: null };
}

/**
 * Makes a project's publisher record, its cursor at the feed's current end, unless it has one;
 * true when made. A cursor behind the end is harmless: the publisher sends only marked events.
 */
export async function createPublisher(kv: Deno.Kv, projectId: string): Promise<boolean> {
  const [entry, seq] = await Promise.all([
    getPublisherEntry(kv, projectId),
    getEventSeqEntry(kv, projectId),
  ]);
  if (entry.value !== null) return false;
  const op = kv.atomic().check(entry).set(entry.key, newPublisherState(seq.value ?? 0));
  return (await op.commit()).ok;
}

/** Lists the projects that have a publisher record (for the minute sweep). */
export async function* listPublisherProjects(kv: Deno.Kv): AsyncGenerator<string> {
  for await (const entry of kv.list({ prefix: ["event_publishers"] })) {
    yield entry.key[1] as string;
  }
}
