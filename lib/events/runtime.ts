/**
 * Per-process state of the event pipeline (where projects' events go, feed locks and feed ends),
 * and the context of the domains that record events.
 */
import type { BaseContext } from "../base_context.ts";
import type { Clock } from "../../core/clock.ts";
import { KeyedLock } from "../../core/keyed_lock.ts";
import { CoalescedRuns } from "../../core/coalesced_runs.ts";
import { TtlCache } from "../../core/ttl_cache.ts";
import { FeedHeads } from "./feed_heads.ts";

/**
 * Where and how a project's events are published: with its publishing key (which stays encrypted
 * until the moment of publishing), or with its connected game's OAuth grant.
 */
export type PublishTarget =
  & (
    | { auth: "key"; universeId: string; publishingKeyEnc: string; topic: string }
    | { auth: "grant"; universeId: string; grantId: string; topic: string }
  )
  & {
    /** Several events per message (`pack.ts`). */
    pack: boolean;
    /** Most messages in any 60 clock seconds (`publisher.ts`); null: no cap. */
    messagesPerMinute: number | null;
  };

// Settings changes must apply on every instance within about 30 s; 10 s leaves a wide margin.
const TARGET_TTL_MS = 10_000;

/** Per-process state of the event pipeline. */
export interface EventRuntime {
  /**
   * Each project's publish target (null while its events are off), at most 10 s old
   * (`publishTargetFor` in `settings.ts`); a change made by this instance drops its entry.
   */
  targets: TtlCache<PublishTarget | null>;
  /** Serializes this process's event-recording commits per project (`lib/events/record.ts`). */
  feedLocks: KeyedLock;
  /** This process's moves of pending events into each project's feed (`pending.ts`). */
  pendingMoves: CoalescedRuns;
  /** Settlements of each project in flight on this process (`pending.ts`). */
  settling: Map<string, number>;
  /** Where each project's feed ends, as this instance knows it (`feed_heads.ts`). */
  heads: FeedHeads;
  /** Projects whose publisher loop this instance saw running in the last 10 s (`publisher_loop.ts`). */
  publishers: TtlCache<true>;
  /** Projects whose publisher this instance pulled forward in the last second (`publisher_loop.ts`). */
  nudges: TtlCache<true>;
  /** Timeout of one publish attempt (5 s per the spec; tests shorten it). */
  attemptTimeoutMs: number;
}

/** The services and the event pipeline's state: what recording, publishing and reading events take. */
export interface EventContext extends BaseContext {
  events: EventRuntime;
}

/** Builds the event runtime of one process. */
export function createEventRuntime(kv: Deno.Kv, clock: Clock): EventRuntime {
  return {
    targets: new TtlCache(clock, { ttlMs: TARGET_TTL_MS }),
    feedLocks: new KeyedLock(),
    pendingMoves: new CoalescedRuns(),
    settling: new Map(),
    heads: new FeedHeads(kv, clock),
    publishers: new TtlCache(clock, { ttlMs: TARGET_TTL_MS }),
    nudges: new TtlCache(clock, { ttlMs: 1_000 }),
    attemptTimeoutMs: 5_000,
  };
}
