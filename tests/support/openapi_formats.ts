/**
 * The document's string and integer formats (`lib/api_fields.ts`), as validators for Ajv: the
 * OpenAPI registry's `int32`, `int64` and `decimal`, and the custom `solana-address` and
 * `solana-signature`, checked by Kit exactly as the service checks them.
 */
import type { Ajv2020 } from "ajv/dist/2020.js";
import { isAddress, isSignature } from "@solana/kit";

/** A format's validator, by name. */
export const FORMATS: Record<string, (value: string | number) => boolean> = {
  int32: (n) => Number.isInteger(n) && Number(n) >= -(2 ** 31) && Number(n) < 2 ** 31,
  int64: (n) => Number.isSafeInteger(n),
  decimal: (text) => typeof text === "string" && /^[0-9]+(\.[0-9]+)?$/.test(text),
  "solana-address": (text) => typeof text === "string" && isAddress(text),
  "solana-signature": (text) => {
    try {
      return typeof text === "string" && isSignature(text);
    } catch {
      // Kit throws for characters outside the base58 alphabet instead of answering false.
      return false;
    }
  },
};

/** Adds every format to an Ajv instance. */
export function addFormats(ajv: Ajv2020): void {
  for (const [name, validate] of Object.entries(FORMATS)) {
    if (name.startsWith("int")) ajv.addFormat(name, { type: "number", validate });
    else ajv.addFormat(name, { type: "string", validate });
  }
}
