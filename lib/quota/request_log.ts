/**
 * The request log's writer (entries in `kv/request_log.ts`): a call's entry is queued as it is
 * answered and the queue is written once per turn of the event loop, in one commit for every call
 * answered in that turn, never on the call's own path. A write that fails is logged and dropped:
 * the log informs, it decides nothing.
 */
import { log } from "../../core/log.ts";
import { monotonicUlid } from "../../core/ids.ts";
import { oncePerTurn } from "../../core/once_per_turn.ts";
import { appendRequestLog, type RequestLogEntry } from "../../kv/request_log.ts";

/** Gathers entries and writes them per turn. */
export class RequestLog {
  #queue: Array<{ projectId: string; id: string; entry: RequestLogEntry }> = [];
  #writing = new Set<Promise<void>>();
  #schedule = oncePerTurn(() => this.#write());

  constructor(private readonly kv: Deno.Kv) {}

  /** Queues one call's entry (its id grows, so calls of one millisecond keep their order). */
  add(projectId: string, entry: RequestLogEntry): void {
    this.#queue.push({ projectId, id: monotonicUlid(), entry });
    this.#schedule();
  }

  /** Writes what is queued and waits for every write under way (a page about to read, a close). */
  async flush(): Promise<void> {
    this.#write();
    await Promise.all(this.#writing);
  }

  #write(): void {
    if (this.#queue.length === 0) return;
    const batch = this.#queue;
    this.#queue = [];
    const writing = appendRequestLog(this.kv, batch).catch((error) =>
      log("warn", "Request log entries dropped", {
        projectIds: [...new Set(batch.map((b) => b.projectId))],
        entries: batch.length,
        error,
      })
    ).finally(() => this.#writing.delete(writing));
    this.#writing.add(writing);
  }
}
