/** Exact conversions between raw base units (bigint) and decimal strings in token units. */

/** A plain non-negative decimal: digits, optionally a point and more digits (`1`, `0.5`, `12.000`). */
export const DECIMAL_PATTERN = /^[0-9]+(\.[0-9]+)?$/;

// Longer input is never a real amount (u64 has 20 digits) and would only cost time to parse.
const MAX_DECIMAL_TEXT = 64;

/** Formats raw base units as token units without trailing zeros: `1500000000n, 9` gives `1.5`. */
export function formatUnits(raw: bigint, decimals: number): string {
  if (!Number.isInteger(decimals) || decimals < 0) throw new RangeError("Invalid decimals");
  const negative = raw < 0n;
  const digits = (negative ? -raw : raw).toString();
  if (decimals === 0) return negative ? `-${digits}` : digits;
  const padded = digits.padStart(decimals + 1, "0");
  const whole = padded.slice(0, padded.length - decimals);
  const fraction = padded.slice(padded.length - decimals).replace(/0+$/, "");
  const text = fraction ? `${whole}.${fraction}` : whole;
  return negative ? `-${text}` : text;
}

/**
 * Parses a decimal string in token units to raw base units: `"1.5", 9` gives `1500000000n`.
 * Null when the text is not a plain decimal (see `DECIMAL_PATTERN`) or writes more fraction digits
 * than `decimals` allows, even zeros (`"1.50"` with 1 decimal), so the check matches what was sent.
 */
export function parseUnits(text: string, decimals: number): bigint | null {
  if (!Number.isInteger(decimals) || decimals < 0) throw new RangeError("Invalid decimals");
  if (text.length > MAX_DECIMAL_TEXT || !DECIMAL_PATTERN.test(text)) return null;
  const [whole, fraction = ""] = text.split(".");
  if (fraction.length > decimals) return null;
  return BigInt(whole + fraction.padEnd(decimals, "0"));
}
