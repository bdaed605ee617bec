/**
 * Where each project's event feed ends, as this instance knows it, so that a feed read with
 * nothing new (by far the most common: every game server asks every few seconds) answers without a
 * store read.
 *
 * The end is the feed counter (`kv/event_feed.ts`), read from the store at most once per
 * `HEAD_TTL_MS` per project, one read shared by every request meanwhile. This instance's own
 * recordings move it at once (`lib/events/record.ts`), so a writer reads its own events back;
 * another instance's show within `HEAD_TTL_MS`. A stale end is always a true lower bound (the
 * counter only grows), so answering "nothing new" from it delays an event, never skips one: the
 * reader keeps its cursor and finds the event next time.
 */
import type { Clock } from "../../core/clock.ts";
import { getEventSeqEntry } from "../../kv/event_feed.ts";

/** How old a known end may be before a read asks the store again. */
export const HEAD_TTL_MS = 1_000;
// Projects remembered at once; past it, ends older than HEAD_TTL_MS are forgotten first.
const MAX_PROJECTS = 10_000;

interface Known {
  head: number;
  /** When the store said so (or this instance committed up to it). */
  at: number;
}

/** This instance's view of every project's feed end. */
export class FeedHeads {
  #known = new Map<string, Known>();
  #reading = new Map<string, Promise<number>>();

  constructor(private kv: Deno.Kv, private clock: Clock) {}

  /** The feed's end, known at most `HEAD_TTL_MS` ago (read from the store otherwise). */
  async get(projectId: string): Promise<number> {
    const known = this.#known.get(projectId);
    if (known && this.clock.now() - known.at < HEAD_TTL_MS) return known.head;
    return await this.read(projectId);
  }

  /** The feed's end read from the store now (one read shared by concurrent callers). */
  read(projectId: string): Promise<number> {
    let reading = this.#reading.get(projectId);
    if (!reading) {
      reading = this.#read(projectId).finally(() => this.#reading.delete(projectId));
      this.#reading.set(projectId, reading);
    }
    return reading;
  }

  /** The end as this instance last knew it, without asking the store (0: not known). */
  peek(projectId: string): number {
    return this.#known.get(projectId)?.head ?? 0;
  }

  /** Notes that this instance committed the project's events up to `head`. */
  moved(projectId: string, head: number): void {
    const known = this.#known.get(projectId);
    if (!known || known.head <= head) this.#remember(projectId, { head, at: this.clock.now() });
  }

  async #read(projectId: string): Promise<number> {
    const at = this.clock.now();
    const head = (await getEventSeqEntry(this.kv, projectId)).value ?? 0;
    const known = this.#known.get(projectId);
    // A commit of this instance may have moved the end while the store was being read.
    if (known && known.head > head) return known.head;
    this.#remember(projectId, { head, at });
    return head;
  }

  #remember(projectId: string, known: Known): void {
    this.#known.delete(projectId);
    if (this.#known.size >= MAX_PROJECTS) {
      const now = this.clock.now();
      for (const [id, entry] of this.#known) {
        if (now - entry.at >= HEAD_TTL_MS) this.#known.delete(id);
      }
      // Still full of fresh ends: drop the oldest, which the next read simply asks for again.
      if (this.#known.size >= MAX_PROJECTS) this.#known.delete(this.#known.keys().next().value!);
    }
    this.#known.set(projectId, known);
  }
}
