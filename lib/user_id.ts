/**
 * A player's platform (Roblox) user id: a positive integer a number holds exactly. Written as text
 * (a path, the dashboard's search, the identity provider's `sub`) it is digits without a leading
 * zero, at most 16 of them, and `parseUserId` is the one reading of such text.
 */
import { z } from "zod";

/** Digits of a user id written as text, before the exact-integer check. */
export const USER_ID_PATTERN = /^[1-9][0-9]{0,15}$/;

/** A user id as text, read: digits only, positive, exactly representable; null otherwise. */
export function parseUserId(text: string): number | null {
  if (!USER_ID_PATTERN.test(text)) return null;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : null;
}

/**
 * A user id in a JSON body (or a path, in the API document): a positive integer a number holds
 * exactly; `int64` in the document, since other languages' 32-bit integers cannot hold it.
 */
export const userIdSchema = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).meta({
  format: "int64",
});
