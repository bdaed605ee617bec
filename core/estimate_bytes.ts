/** How much memory a cached value takes, roughly: what the in-memory caches bound themselves by. */

// A rough size of a value as the heap holds it (UTF-16 strings, object and slot overheads). It
// only has to rank values and keep the total in bounds, not to be exact.
export function estimateBytes(value: unknown, depth = 0): number {
  if (typeof value === "string") return 16 + value.length * 2;
  if (typeof value === "bigint") return 16 + value.toString(16).length;
  if (typeof value !== "object" || value === null) return 8;
  if (ArrayBuffer.isView(value)) return 64 + value.byteLength;
  // Cached values are plain answers a few levels deep; anything deeper is costed flat.
  if (depth > 16) return 1024;
  let total = 32;
  for (const [name, child] of Object.entries(value)) {
    total += 16 + name.length * 2 + estimateBytes(child, depth + 1);
  }
  return total;
}
