/** The developer session: the dashboard account is the wallet address that signed in. */
import type { Context } from "hono";
import { z } from "zod";
import type { AppContext } from "../context.ts";
import {
  clearCookie,
  DEVELOPER_SESSION_COOKIE,
  readSignedCookie,
  setSignedCookie,
} from "./cookies.ts";

const sessionSchema = z.object({ address: z.string().min(1) });

/** Starts the developer's 12-hour session. */
export async function startDeveloperSession(
  ctx: AppContext,
  c: Context,
  address: string,
): Promise<void> {
  await setSignedCookie(ctx, c, DEVELOPER_SESSION_COOKIE, { address });
}

/** Returns the signed-in developer's wallet address, or null without a valid unexpired session. */
export async function getDeveloperSession(ctx: AppContext, c: Context): Promise<string | null> {
  const parsed = sessionSchema.safeParse(
    await readSignedCookie(ctx, c, DEVELOPER_SESSION_COOKIE),
  );
  return parsed.success ? parsed.data.address : null;
}

/** Ends the developer session. */
export function clearDeveloperSession(c: Context): void {
  clearCookie(c, DEVELOPER_SESSION_COOKIE);
}
