// Test controls for the OAuth stand-in over HTTP, for tests and tools that run out of process.
import { Hono } from "hono";
import { z } from "zod";
import type { OauthStandIn } from "./oauth.ts";

const userBody = z.object({
  id: z.int().positive(),
  username: z.string().regex(/^[A-Za-z0-9_]{3,20}$/),
  displayName: z.string().min(1),
  picture: z.url().nullable().optional(),
  createdAt: z.int().optional(),
});
const clientBody = z.object({
  clientId: z.string().min(1),
  clientSecret: z.string().min(1),
  redirectUris: z.array(z.url()).min(1),
  name: z.string().optional(),
});
const universeBody = z.object({ id: z.string().regex(/^\d{1,20}$/), name: z.string().min(1) });
const failBody = z.discriminatedUnion("target", [
  z.object({ target: z.literal("authorize"), count: z.int().min(1).optional() }),
  z.object({
    target: z.literal("token"),
    count: z.int().min(1).optional(),
    status: z.union([z.literal(400), z.literal(401), z.literal(500)]).optional(),
    error: z.string().min(1).optional(),
  }),
  z.object({
    target: z.literal("userinfo"),
    count: z.int().min(1).optional(),
    status: z.union([z.literal(401), z.literal(500)]).optional(),
  }),
]);

/** Routes under /_control plus the avatar images the seeded players point at. */
export function createOauthControlApp(standIn: Omit<OauthStandIn, "url" | "idpUrl" | "close">) {
  const app = new Hono();
  const parse = async <T>(schema: z.ZodType<T>, request: Request) => {
    return schema.safeParse(await request.json().catch(() => undefined));
  };

  app.post("/_control/clients", async (c) => {
    const parsed = await parse(clientBody, c.req.raw);
    if (!parsed.success) return c.json({ error: z.prettifyError(parsed.error) }, 400);
    standIn.registerClient(parsed.data);
    return c.json({ ok: true });
  });
  app.post("/_control/users", async (c) => {
    const parsed = await parse(userBody, c.req.raw);
    if (!parsed.success) return c.json({ error: z.prettifyError(parsed.error) }, 400);
    standIn.addUser(parsed.data);
    return c.json({ ok: true });
  });
  app.get("/_control/users", (c) => c.json(standIn.users()));
  app.post("/_control/fail", async (c) => {
    const parsed = await parse(failBody, c.req.raw);
    if (!parsed.success) return c.json({ error: z.prettifyError(parsed.error) }, 400);
    const fail = parsed.data;
    if (fail.target === "authorize") standIn.denyNextAuthorize(fail.count);
    else if (fail.target === "token") standIn.failNextToken(fail);
    else standIn.failNextUserinfo(fail);
    return c.json({ ok: true });
  });
  app.delete("/_control/fail", (c) => {
    standIn.clearFailures();
    return c.json({ ok: true });
  });
  app.get("/_control/revoked", (c) => c.json(standIn.revoked()));
  app.get("/_control/refreshes", (c) => c.json(standIn.refreshes()));
  app.post("/_control/universes", async (c) => {
    const parsed = await parse(universeBody, c.req.raw);
    if (!parsed.success) return c.json({ error: z.prettifyError(parsed.error) }, 400);
    standIn.addUniverse(parsed.data);
    return c.json({ ok: true });
  });
  // As a user removing the app from their Roblox account's settings.
  app.post("/_control/users/:id/revoke-grants", (c) => {
    standIn.revokeUserGrants(Number(c.req.param("id")));
    return c.json({ ok: true });
  });

  app.get("/_avatars/:file{[0-9]+\\.svg}", (c) => {
    const hue = Number.parseInt(c.req.param("file")) * 47 % 360;
    c.header("content-type", "image/svg+xml");
    return c.body(
      `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 2 2">` +
        `<circle cx="1" cy="1" r="1" fill="hsl(${hue} 60% 55%)"/></svg>`,
    );
  });
  return app;
}
