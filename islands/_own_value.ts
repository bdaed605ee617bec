// Message tables keyed by an error code that comes from a URL or an answer: only the table's own
// keys count, so `constructor`, `toString` or `__proto__` are unknown codes, not inherited values.
// Shared by the islands and the pages that render messages on the server.

/** The value `table` holds under `key` itself, or undefined (inherited names are not keys). */
export function ownValue<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
