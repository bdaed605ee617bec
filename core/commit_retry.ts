/**
 * The one retry loop of read-check-write commits. A round reads, checks its entries and commits;
 * when the commit loses to a concurrent change the round answers `RETRY` and runs again on fresh
 * reads. Rounds are bounded, so a key under endless contention ends in `CommitConflictError`
 * instead of spinning.
 */

/** What a round answers when its checked commit lost to a concurrent change. */
export const RETRY: unique symbol = Symbol("retry");

/** A read-check-write commit kept losing to concurrent changes for all of its rounds. */
export class CommitConflictError extends Error {
  constructor(readonly label: string) {
    super(`Cannot ${label}: too many concurrent changes`);
    this.name = "CommitConflictError";
  }
}

/**
 * Runs `round` until it answers something other than `RETRY`, at most `rounds` times (100 unless
 * given); `label` names the change in the error (`"create project"`).
 */
export async function commitWithRetry<T>(
  label: string,
  round: (round: number) => Promise<T | typeof RETRY>,
  options: { rounds?: number } = {},
): Promise<T> {
  const rounds = options.rounds ?? 100;
  for (let i = 0; i < rounds; i++) {
    const result = await round(i);
    if (result !== RETRY) return result;
  }
  throw new CommitConflictError(label);
}
