// JSON with u64 support: the real node writes u64 values (lamports, rentEpoch) as bare JSON
// numbers, which may exceed 2^53, so bigints are written raw and big integers parsed exactly.

type RawJson = { rawJSON(text: string): unknown };

/** Serializes a value, writing bigints as bare JSON numbers. */
export function stringifyJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, v) => typeof v === "bigint" ? (JSON as unknown as RawJson).rawJSON(v.toString()) : v,
  );
}

/** Parses JSON, reading integers beyond 2^53 as bigints. */
export function parseJson(text: string): unknown {
  return JSON.parse(text, function (_key, value, context?: { source?: string }) {
    if (
      typeof value === "number" && !Number.isSafeInteger(value) && context?.source &&
      /^-?\d+$/.test(context.source)
    ) {
      return BigInt(context.source);
    }
    return value;
  });
}
