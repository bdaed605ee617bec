/**
 * The `run.op` a handler fills: it records the handler's checks and mutations and replays them
 * onto the worker's real commit at the end of the run. The worker builds that commit only then,
 * checked against the job's latest lease, because a long job renews its lease (changing the job
 * record's versionstamp) while the handler runs.
 */

/** Records atomic steps for `applyTo`; `commit` belongs to the worker and throws here. */
export class DeferredCommit implements Deno.AtomicOperation {
  #steps: ((op: Deno.AtomicOperation) => void)[] = [];

  check(...checks: Deno.AtomicCheck[]): this {
    this.#steps.push((op) => op.check(...checks));
    return this;
  }
  mutate(...mutations: Deno.KvMutation[]): this {
    this.#steps.push((op) => op.mutate(...mutations));
    return this;
  }
  sum(key: Deno.KvKey, n: bigint): this {
    this.#steps.push((op) => op.sum(key, n));
    return this;
  }
  min(key: Deno.KvKey, n: bigint): this {
    this.#steps.push((op) => op.min(key, n));
    return this;
  }
  max(key: Deno.KvKey, n: bigint): this {
    this.#steps.push((op) => op.max(key, n));
    return this;
  }
  set(key: Deno.KvKey, value: unknown, options?: { expireIn?: number }): this {
    this.#steps.push((op) => op.set(key, value, options));
    return this;
  }
  delete(key: Deno.KvKey): this {
    this.#steps.push((op) => op.delete(key));
    return this;
  }
  enqueue(
    value: unknown,
    options?: { delay?: number; keysIfUndelivered?: Deno.KvKey[]; backoffSchedule?: number[] },
  ): this {
    this.#steps.push((op) => op.enqueue(value, options));
    return this;
  }
  commit(): Promise<Deno.KvCommitResult | Deno.KvCommitError> {
    throw new Error("Cannot commit a job's operation: the worker commits it with the job's end");
  }

  /** Replays the recorded steps onto `op`, in order. */
  applyTo(op: Deno.AtomicOperation): Deno.AtomicOperation {
    for (const step of this.#steps) step(op);
    return op;
  }
}
