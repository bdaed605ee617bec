/** Opens the store; on a local SQLite file, retries the "database is locked" answers that come when several processes or handles write at once. */

const MAX_ATTEMPTS = 50;

function isLocked(error: unknown): boolean {
  return error instanceof Error && /database is locked|SQLITE_BUSY/i.test(error.message);
}

async function retryLocked<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await run();
    } catch (error) {
      // A busy SQLite commit did not apply, so running it again is safe.
      if (!isLocked(error) || attempt >= MAX_ATTEMPTS) throw error;
      await new Promise((r) => setTimeout(r, Math.min(2 ** attempt, 50) * Math.random()));
    }
  }
}

/** Opens a KV (`undefined` path = the platform's default store) whose reads and commits ride out SQLite lock contention. */
export async function openKv(path?: string): Promise<Deno.Kv> {
  const kv = await Deno.openKv(path);
  return new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          op.commit = () => retryLocked(commit);
          return op;
        };
      }
      if (prop === "get" || prop === "getMany" || prop === "set" || prop === "delete") {
        return (...args: unknown[]) => retryLocked(() => value.apply(target, args));
      }
      return value.bind(target);
    },
  });
}
