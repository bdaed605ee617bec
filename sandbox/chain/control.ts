// The control API (/control/...): time stepping, fault injection and direct account writes.
import { Hono } from "hono";
import { z } from "zod";
import { base64 } from "@scure/base";
import { address } from "@solana/kit";
import { writeAccount } from "./accounts.ts";
import { commitmentSlot } from "./clock.ts";
import type { ChainFaults } from "./faults.ts";
import { advanceSlots } from "./ledger.ts";
import type { LedgerState } from "./state.ts";

const count = z.number().int().min(0).max(1_000_000);
const scope = z.enum(["rpc", "das", "all"]).optional();
const pubkey = z.string().refine((s) => {
  try {
    address(s);
    return true;
  } catch {
    return false;
  }
}, "Invalid address");

const schemas = {
  advance: z.object({ slots: z.number().int().min(1).max(100_000) }),
  neverLand: z.object({ count }),
  delay: z.object({ count, slots: z.number().int().min(1).max(100_000) }),
  http: z.object({ count, status: z.number().int().min(500).max(599).optional(), scope }),
  close: z.object({ count, scope }),
  finalization: z.object({ paused: z.boolean() }),
  prune: z.object({ firstAvailableSlot: z.number().int().min(0) }),
  hide: z.object({ hidden: z.boolean() }),
  lag: z.object({ slots: z.number().int().min(0).max(100_000) }),
  account: z.object({
    address: pubkey,
    lamports: z.string().regex(/^\d+$/),
    owner: pubkey,
    data: z.string().default(""),
    executable: z.boolean().default(false),
  }),
  image: z.object({ mint: pubkey, image: z.string().url() }),
};

/** The cluster's time and commitment levels. */
export function clusterState(state: LedgerState) {
  return {
    slot: state.slot,
    blockHeight: state.blockHeight,
    confirmedSlot: commitmentSlot(state, "confirmed"),
    finalizedSlot: state.finalizedSlot,
  };
}

export function controlApp(state: LedgerState, faults: ChainFaults): Hono {
  const app = new Hono();
  const body = async <T extends z.ZodType>(req: Request, schema: T): Promise<z.infer<T>> => {
    const parsed = schema.safeParse(await req.json().catch(() => undefined));
    if (!parsed.success) {
      const detail = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
      throw new ControlError(detail);
    }
    return parsed.data;
  };
  const answer = () => ({ ...clusterState(state), faults: faults.snapshot() });
  app.onError((err, c) => {
    if (err instanceof ControlError) {
      return c.json({ error: { code: "invalid_request", message: err.message } }, 400);
    }
    throw err;
  });
  app.get("/state", (c) => c.json(answer()));
  app.post("/advance", async (c) => {
    advanceSlots(state, (await body(c.req.raw, schemas.advance)).slots);
    return c.json(answer());
  });
  app.post("/faults/never-land", async (c) => {
    faults.neverLand((await body(c.req.raw, schemas.neverLand)).count);
    return c.json(answer());
  });
  app.post("/faults/delay-landing", async (c) => {
    const { count, slots } = await body(c.req.raw, schemas.delay);
    faults.delayLanding(count, { slots });
    return c.json(answer());
  });
  app.post("/faults/http", async (c) => {
    const { count, status, scope } = await body(c.req.raw, schemas.http);
    faults.failHttp(count, { status, scope });
    return c.json(answer());
  });
  app.post("/faults/close", async (c) => {
    const { count, scope } = await body(c.req.raw, schemas.close);
    faults.closeConnections(count, { scope });
    return c.json(answer());
  });
  app.post("/faults/finalization", async (c) => {
    const { paused } = await body(c.req.raw, schemas.finalization);
    if (paused) faults.pauseFinalization();
    else faults.resumeFinalization();
    return c.json(answer());
  });
  app.post("/faults/prune-history", async (c) => {
    faults.pruneHistory((await body(c.req.raw, schemas.prune)).firstAvailableSlot);
    return c.json(answer());
  });
  app.post("/faults/hide-statuses", async (c) => {
    faults.hideStatuses((await body(c.req.raw, schemas.hide)).hidden);
    return c.json(answer());
  });
  app.post("/faults/lag-history", async (c) => {
    faults.lagHistory((await body(c.req.raw, schemas.lag)).slots);
    return c.json(answer());
  });
  app.post("/faults/clear", (c) => {
    faults.clear();
    return c.json(answer());
  });
  app.post("/accounts", async (c) => {
    const a = await body(c.req.raw, schemas.account);
    writeAccount(state, a.address, {
      lamports: BigInt(a.lamports),
      owner: address(a.owner),
      data: base64.decode(a.data),
      executable: a.executable,
    });
    state.options.log({ event: "account_written", address: a.address, owner: a.owner });
    return c.json(answer());
  });
  app.post("/assets/image", async (c) => {
    const { mint, image } = await body(c.req.raw, schemas.image);
    state.assetImages.set(mint, image);
    return c.json(answer());
  });
  return app;
}

class ControlError extends Error {}
