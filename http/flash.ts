/**
 * The result of a dashboard form post, carried to the page it redirects to (post, redirect, get).
 *
 * It travels in a short-lived cookie encrypted with AES-GCM and bound to the signed-in developer,
 * because it may hold a new API key's plaintext: a key must never sit in a URL, a log or a cookie
 * anyone but that developer's browser could read. The page that shows it deletes it.
 */
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { z } from "zod";
import type { AppContext } from "../lib/context.ts";
import { decryptSecretText, encryptSecret, type SealBinding } from "../lib/crypto/encryption.ts";

/** Name of the flash cookie (`__Host-`: Secure, Path=/, no Domain). */
const FLASH_COOKIE = "__Host-svc_flash";
/** How long a flash waits for its page. */
const FLASH_MAX_AGE_MS = 2 * 60_000;
// Browsers drop cookies over 4096 bytes; a draft that would not fit is left out.
const MAX_COOKIE_VALUE = 3_800;
const ATTRIBUTES = "Path=/; HttpOnly; Secure; SameSite=Lax";

const flashSchema = z.object({
  kind: z.enum(["success", "error", "info"]),
  message: z.string(),
  /** The coded form behind a message in words (a chain error), shown behind a toggle. */
  details: z.string().optional(),
  /** A new API key, shown once on the keys page. */
  newKey: z.object({ id: z.string(), plaintext: z.string() }).optional(),
  /** What the developer typed into a form that was refused, to fill it in again (never secrets). */
  draft: z.record(z.string(), z.unknown()).optional(),
  /** A refused form's problems by field name, each said next to its field (`message` sums up). */
  fields: z.record(z.string(), z.string()).optional(),
  /** Which form the message belongs to, so the page can show it beside that form. */
  form: z.string().optional(),
  exp: z.number(),
});

/** A message for the next page view. */
export type Flash = Omit<z.output<typeof flashSchema>, "exp">;

function binding(developer: string): SealBinding {
  return { purpose: "dashboard_flash", context: developer };
}

/** Sets the flash cookie on the response, for `developer` only. */
export async function setFlash(
  ctx: AppContext,
  c: Context,
  developer: string,
  flash: Flash,
): Promise<void> {
  const exp = ctx.clock.now() + FLASH_MAX_AGE_MS;
  let sealed = await encryptSecret(ctx.keys, JSON.stringify({ ...flash, exp }), binding(developer));
  if (sealed.length > MAX_COOKIE_VALUE && flash.draft) {
    const { draft: _dropped, ...rest } = flash;
    sealed = await encryptSecret(ctx.keys, JSON.stringify({ ...rest, exp }), binding(developer));
  }
  const maxAge = Math.floor(FLASH_MAX_AGE_MS / 1000);
  c.header("set-cookie", `${FLASH_COOKIE}=${sealed}; Max-Age=${maxAge}; ${ATTRIBUTES}`, {
    append: true,
  });
}

/** Reads and deletes the flash; null when there is none, it expired, or it was set for someone else. */
export async function takeFlash(
  ctx: AppContext,
  c: Context,
  developer: string,
): Promise<Flash | null> {
  const sealed = getCookie(c, FLASH_COOKIE);
  if (!sealed) return null;
  c.header("set-cookie", `${FLASH_COOKIE}=; Max-Age=0; ${ATTRIBUTES}`, { append: true });
  try {
    const parsed = flashSchema.safeParse(
      JSON.parse(await decryptSecretText(ctx.keys, sealed, binding(developer))),
    );
    if (!parsed.success || parsed.data.exp <= ctx.clock.now()) return null;
    const { exp: _exp, ...flash } = parsed.data;
    return flash;
  } catch {
    return null;
  }
}
