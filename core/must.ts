/**
 * Narrowing for values whose absence would be a bug in our own code (an index proven in range a
 * few lines up, a key just written). Throws with what was missing instead of letting `undefined`
 * travel on and fail somewhere unrelated.
 */

/** Returns `value`, or throws `Error(Missing: <what>)` when it is `undefined` or `null`. */
export function must<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new Error(`Missing: ${what}`);
  return value;
}
