/**
 * The field types of the game API, as the OpenAPI document states them, shared by the request
 * schemas (`lib/tx/request/request_body.ts`, the routes) and the answer schemas (`routes/v1/answers.ts`).
 * User ids are `lib/user_id.ts`'s.
 *
 * The document states what the service enforces, whichever step enforces it. Some checks belong
 * to later steps of the spec with codes of their own (an address that is not one is
 * `invalid_address` at step 8, a zero amount `invalid_amount` at step 11), so the zod schemas keep
 * to the spec's step 4 and these constraints reach the document through `.meta()` only:
 *
 * - addresses and signatures: base58 (Bitcoin's alphabet, no `0OIl`) of their real lengths. A
 *   pattern cannot say "decodes to exactly 32 (64) bytes" in a usable size, so the custom formats
 *   `solana-address` and `solana-signature` name that rule (an OpenAPI `format` is open-ended);
 *   a 44-character string that decodes to 33 bytes matches the pattern and is refused.
 * - amounts: positive decimals (format `decimal`, from the OpenAPI format registry), at most 64
 *   characters (`lib/chain/amounts.ts` reads no longer text); SOL amounts at most 9 decimals.
 * - integers: every one has a `format` (`int64` for ids, times and slots: Unix milliseconds do
 *   not fit in 32 bits).
 */
import { z } from "zod";

const BASE58 = "[1-9A-HJ-NP-Za-km-z]";

/** A Solana address: base58 of 32 bytes. */
export const addressField = z.string().meta({
  description: "Base58 Solana address (32 bytes)",
  format: "solana-address",
  pattern: `^${BASE58}{32,44}$`,
  minLength: 32,
  maxLength: 44,
});

/** A transaction signature: base58 of 64 bytes. */
export const signatureField = z.string().meta({
  description: "Base58 transaction signature (64 bytes)",
  format: "solana-signature",
  pattern: `^${BASE58}{64,88}$`,
  minLength: 64,
  maxLength: 88,
});

/** Longest amount text the service reads. */
const MAX_AMOUNT_CHARS = 64;

/**
 * A positive decimal in token units: with `decimals`, at most that many fraction digits and at
 * most `maxRaw` base units (a u64, what a transfer can carry); without, any fraction (a token's
 * decimals are its mint's). Written without look-ahead, which some languages' regular expressions
 * (Go's) do not have.
 */
export function amountMeta(decimals?: number, maxRaw?: bigint): Record<string, unknown> {
  const base = { format: "decimal", minLength: 1, maxLength: MAX_AMOUNT_CHARS };
  if (decimals === undefined || maxRaw === undefined) {
    return { ...base, pattern: "^(0*[1-9][0-9]*(\\.[0-9]+)?|0+\\.[0-9]*[1-9][0-9]*)$" };
  }
  const digits = maxRaw.toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, -decimals);
  const fraction = digits.slice(-decimals);
  const anyFraction = `(\\.[0-9]{1,${decimals}})?`;
  // Below 1: zeros, a point, a nonzero digit within the first `decimals` places.
  const small = Array.from({ length: decimals }, (_, zeros) => {
    const rest = decimals - 1 - zeros;
    return "0".repeat(zeros) + "[1-9]" + (rest > 0 ? `[0-9]{0,${rest}}` : "");
  }).join("|");
  const shorter = whole.length > 1 ? [`[1-9][0-9]{0,${whole.length - 2}}${anyFraction}`] : [];
  const below = lessThan(whole, 1).map((head) => head + anyFraction);
  const at = `${whole}(\\.(${atMost(fraction).join("|")}))?`;
  const pattern = `^(0*(${[...shorter, ...below, at].join("|")})|0+\\.(${small}))$`;
  return { ...base, pattern };
}

/** Patterns of the digit strings as long as `limit` and below it (first digit at least `low`). */
function lessThan(limit: string, low = 0): string[] {
  const out: string[] = [];
  for (let i = 0; i < limit.length; i++) {
    const from = i === 0 ? low : 0;
    const to = Number(limit[i]) - 1;
    if (to < from) continue;
    const rest = limit.length - i - 1;
    out.push(limit.slice(0, i) + digitRange(from, to) + (rest > 0 ? `[0-9]{${rest}}` : ""));
  }
  return out;
}

/** Patterns of the fraction digits (1 or more) that, padded with zeros, are at most `limit`. */
function atMost(limit: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < limit.length; i++) {
    const to = Number(limit[i]) - 1;
    const rest = limit.length - i - 1;
    if (to >= 0) {
      out.push(limit.slice(0, i) + digitRange(0, to) + (rest > 0 ? `[0-9]{0,${rest}}` : ""));
    }
    out.push(limit.slice(0, i + 1));
  }
  return out;
}

function digitRange(from: number, to: number): string {
  return from === to ? String(from) : `[${from}-${to}]`;
}

/** Unix time in milliseconds. */
export const unixMsField = z.number().int().min(0).meta({
  format: "int64",
  description: "Unix time in milliseconds",
});

/** A slot of the chain. */
export const slotField = z.number().int().min(0).meta({ format: "int64" });

/** A small integer: a count, a limit, a number of decimals. */
export function int32(min: number, max: number) {
  return z.number().int().min(min).max(max).meta({ format: "int32" });
}
