/** Where a project's events go, read from its settings with a short per-instance cache. */
import { getProject, type Project } from "../../kv/projects.ts";
import type { Clock } from "../../core/clock.ts";
import { KeyedLock } from "../../core/keyed_lock.ts";
import { TtlCache } from "../../core/ttl_cache.ts";
import { FeedHeads } from "./feed_heads.ts";

/** A project's complete event settings; the key stays encrypted until the moment of publishing. */
export interface PublishTarget {
  universeId: string;
  publishingKeyEnc: string;
  topic: string;
}

// Settings changes must apply on every instance within about 30 s; 10 s leaves a wide margin.
const CACHE_TTL_MS = 10_000;

/** The publish target of a project, or null when events are off (a setting missing) or it is deleted. */
export function publishTargetOf(project: Project | null): PublishTarget | null {
  if (!project || project.deletedAt !== null) return null;
  const { universeId, publishingKeyEnc, topic } = project.settings;
  if (!universeId || !publishingKeyEnc) return null;
  return { universeId, publishingKeyEnc, topic: topic || "svc" };
}

/** Caches each project's publish target for at most 10 seconds. */
class PublishTargetCache {
  #cache: TtlCache<PublishTarget | null>;

  constructor(private kv: Deno.Kv, clock: Clock) {
    this.#cache = new TtlCache(clock, { ttlMs: CACHE_TTL_MS });
  }

  /** Returns the project's target (null when events are off), at most 10 s old. */
  get(projectId: string): Promise<PublishTarget | null> {
    return this.#cache.get(
      projectId,
      async () => publishTargetOf(await getProject(this.kv, projectId)),
    );
  }

  /** Drops the cached target, so a change made by this instance applies here at once. */
  forget(projectId: string): void {
    this.#cache.delete(projectId);
  }
}

/** Per-process state of the event pipeline. */
export interface EventRuntime {
  targets: PublishTargetCache;
  /** Serializes this process's event-recording commits per project (`lib/events/record.ts`). */
  feedLocks: KeyedLock;
  /** Where each project's feed ends, as this instance knows it (`feed_heads.ts`). */
  heads: FeedHeads;
  /** Timeout of one publish attempt (5 s per the spec; tests shorten it). */
  attemptTimeoutMs: number;
}

/** Builds the event runtime of one process. */
export function createEventRuntime(kv: Deno.Kv, clock: Clock): EventRuntime {
  return {
    targets: new PublishTargetCache(kv, clock),
    feedLocks: new KeyedLock(),
    heads: new FeedHeads(kv, clock),
    attemptTimeoutMs: 5_000,
  };
}
