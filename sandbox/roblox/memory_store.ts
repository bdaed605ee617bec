/**
 * Stand-in for Roblox's MemoryStoreService: the sorted maps and queues one game's servers share.
 * Roblox keeps them inside the engine; here every Lune process of a test or bench plays a server of
 * the same game, so they share one loopback server (sdk/luau/tests/MemoryStore.luau speaks to it).
 * The protocol is ours, one JSON POST per engine call (`/sorted-maps/:name/:op`,
 * `/queues/:name/:op`); what it enforces is Roblox's (/work/shared/platforms.md):
 *
 * - request units, shared by the game: `1,000 + 120 x users` in any 60 seconds; `getRange` and
 *   `read` cost one unit per item returned (at least one), every other call one. UpdateAsync is a
 *   read and a conditional write here, so it costs two units (Roblox's own count is not documented
 *   finer; two is the upper bound). Past the limit: 429 `TotalRequestsOverLimit`;
 * - memory, shared by the game: `64 KB + 1.2 KB x users`, counted as the UTF-8 bytes of every live
 *   item's key and value; a write past it: 429 `TotalMemoryOverLimit`. The peak is kept (Roblox
 *   bills a peak for 8 days);
 * - values up to 32 KB (`ItemValueSizeTooLarge`), keys up to 128 characters (`KeyNameTooLong`),
 *   expiration 0 to 45 days (`ExpirationTooLong`);
 * - sorted maps: a write can carry the version read, and is refused (`conflict`) when the item
 *   changed meanwhile: UpdateAsync's optimistic retry. Ranges are in key order;
 * - queues: `read` waits up to `waitSeconds` for `count` items (returning what there is when
 *   `allOrNothing` is false), hides what it returns for the queue's invisibility timeout, and
 *   `remove` of its read id deletes them; unremoved items come back (at least once).
 *
 * `users` (the game's concurrent users, which set both budgets) is set by the harness, or over HTTP
 * (`POST /_control/users`), and what was used is read at `GET /_usage`.
 */
import { Hono } from "hono";
import { z } from "zod";
import { type ListenOptions, serveApp } from "./_serve.ts";

const KB = 1_024;
const MAX_VALUE_BYTES = 32 * KB;
const MAX_KEY_CHARS = 128;
const MAX_EXPIRATION_S = 45 * 86_400;
const MAX_RANGE = 200;
const MAX_READ = 100;
const WINDOW_MS = 60_000;

/** What a game used of its memory store, against its budgets. */
export interface MemoryStoreUsage {
  users: number;
  /** Units allowed in any 60 seconds, and the most used in a clock minute so far. */
  unitsPerMinuteLimit: number;
  unitsByMinute: Array<{ minute: number; units: number }>;
  memoryLimitBytes: number;
  memoryBytes: number;
  peakMemoryBytes: number;
  items: number;
  refused: Record<string, number>;
}

export interface MemoryStoreStandIn {
  url: string;
  /** Sets the game's concurrent users (both budgets follow). */
  setUsers(users: number): void;
  usage(): MemoryStoreUsage;
  /** Writes an item of a sorted map as the game left it earlier (a bench's starting state), free. */
  seed(map: string, key: string, value: unknown, expirationSeconds: number): void;
  close(): Promise<void>;
}

interface Item {
  value: string;
  expiresAt: number;
  version: number;
  bytes: number;
}

interface QueueItem {
  value: string;
  expiresAt: number;
  priority: number;
  visibleAt: number;
  readId: string | null;
  bytes: number;
  order: number;
}

class RefusedError extends Error {}

const setBody = z.object({
  key: z.string(),
  value: z.string(),
  expiration: z.number(),
  version: z.number().int().optional(),
});
const rangeBody = z.object({
  direction: z.enum(["Ascending", "Descending"]),
  count: z.number().int(),
  lower: z.string().optional(),
  upper: z.string().optional(),
});
const addBody = z.object({
  value: z.string(),
  expiration: z.number(),
  priority: z.number().default(0),
});
const readBody = z.object({
  count: z.number().int(),
  allOrNothing: z.boolean().default(false),
  waitSeconds: z.number().default(0),
  invisibilitySeconds: z.number().default(30),
});

const encoder = new TextEncoder();

/** Starts the stand-in on a loopback port; `users` starts at 0 (the game's base budgets). */
export async function startMemoryStoreStandIn(
  options: ListenOptions & { users?: number; now?: () => number } = {},
): Promise<MemoryStoreStandIn> {
  const now = options.now ?? Date.now;
  let users = options.users ?? 0;
  const maps = new Map<string, Map<string, Item>>();
  const queues = new Map<string, QueueItem[]>();
  let memory = 0;
  let peakMemory = 0;
  let version = 0;
  let order = 0;
  // Units spent, per second (for the rolling limit) and per clock minute (for the report).
  const unitLog: Array<{ at: number; units: number }> = [];
  const byMinute = new Map<number, number>();
  const refused: Record<string, number> = {};

  const unitsLimit = () => 1_000 + 120 * users;
  const memoryLimit = () => 64 * KB + Math.floor(1.2 * KB * users);

  function refuse(code: string): never {
    refused[code] = (refused[code] ?? 0) + 1;
    throw new RefusedError(code);
  }

  function spend(units: number) {
    const at = now();
    while (unitLog.length > 0 && unitLog[0]!.at <= at - WINDOW_MS) unitLog.shift();
    const used = unitLog.reduce((n, entry) => n + entry.units, 0);
    if (used + units > unitsLimit()) refuse("TotalRequestsOverLimit");
    unitLog.push({ at, units });
    const minute = Math.floor(at / WINDOW_MS);
    byMinute.set(minute, (byMinute.get(minute) ?? 0) + units);
  }

  function purge() {
    const at = now();
    for (const map of maps.values()) {
      for (const [key, item] of map) {
        if (item.expiresAt <= at) {
          map.delete(key);
          memory -= item.bytes;
        }
      }
    }
    for (const [name, items] of queues) {
      const live = items.filter((item) => item.expiresAt > at);
      for (const item of items) if (item.expiresAt <= at) memory -= item.bytes;
      queues.set(name, live);
    }
  }

  function grow(bytes: number) {
    if (memory + bytes > memoryLimit()) refuse("TotalMemoryOverLimit");
    memory += bytes;
    peakMemory = Math.max(peakMemory, memory);
  }

  function checkExpiration(seconds: number) {
    if (!(seconds >= 0 && seconds <= MAX_EXPIRATION_S)) refuse("ExpirationTooLong");
  }

  function checkValue(value: string) {
    if (encoder.encode(value).length > MAX_VALUE_BYTES) refuse("ItemValueSizeTooLarge");
  }

  function mapOf(name: string): Map<string, Item> {
    let map = maps.get(name);
    if (!map) maps.set(name, map = new Map());
    return map;
  }

  function queueOf(name: string): QueueItem[] {
    let queue = queues.get(name);
    if (!queue) queues.set(name, queue = []);
    return queue;
  }

  /** Queue items a read may take now, in priority order then arrival. */
  function visible(queue: QueueItem[]): QueueItem[] {
    const at = now();
    return queue.filter((item) => item.visibleAt <= at)
      .sort((a, b) => b.priority - a.priority || a.order - b.order);
  }

  const app = new Hono();
  app.onError((error, c) => {
    if (error instanceof RefusedError) return c.json({ error: error.message }, 429);
    if (error instanceof z.ZodError) return c.json({ error: "InvalidRequest" }, 400);
    throw error;
  });

  app.post("/sorted-maps/:name/get", async (c) => {
    const { key } = z.object({ key: z.string() }).parse(await c.req.json());
    purge();
    spend(1);
    const item = mapOf(c.req.param("name")).get(key);
    return c.json(item ? { value: item.value, version: item.version } : { value: null });
  });

  app.post("/sorted-maps/:name/set", async (c) => {
    const body = setBody.parse(await c.req.json());
    purge();
    // A write that completes an UpdateAsync spends the second unit of its two.
    spend(1);
    if (body.key.length > MAX_KEY_CHARS) refuse("KeyNameTooLong");
    checkValue(body.value);
    checkExpiration(body.expiration);
    const map = mapOf(c.req.param("name"));
    const old = map.get(body.key);
    if (body.version !== undefined && (old?.version ?? 0) !== body.version) {
      return c.json({ conflict: true });
    }
    const bytes = encoder.encode(body.key).length + encoder.encode(body.value).length;
    grow(bytes - (old?.bytes ?? 0));
    map.set(body.key, {
      value: body.value,
      expiresAt: now() + body.expiration * 1_000,
      version: ++version,
      bytes,
    });
    return c.json({ conflict: false });
  });

  app.post("/sorted-maps/:name/remove", async (c) => {
    const { key } = z.object({ key: z.string() }).parse(await c.req.json());
    purge();
    spend(1);
    const map = mapOf(c.req.param("name"));
    const old = map.get(key);
    if (old) {
      map.delete(key);
      memory -= old.bytes;
    }
    return c.json({});
  });

  app.post("/sorted-maps/:name/range", async (c) => {
    const body = rangeBody.parse(await c.req.json());
    if (body.count < 1 || body.count > MAX_RANGE) refuse("InvalidCount");
    purge();
    const keys = [...mapOf(c.req.param("name")).entries()]
      .filter(([key]) =>
        (body.lower === undefined || key > body.lower) &&
        (body.upper === undefined || key < body.upper)
      )
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (body.direction === "Descending") keys.reverse();
    const items = keys.slice(0, body.count).map(([key, item]) => ({ key, value: item.value }));
    spend(Math.max(1, items.length));
    return c.json({ items });
  });

  app.post("/queues/:name/add", async (c) => {
    const body = addBody.parse(await c.req.json());
    purge();
    spend(1);
    checkValue(body.value);
    checkExpiration(body.expiration);
    const bytes = encoder.encode(body.value).length;
    grow(bytes);
    queueOf(c.req.param("name")).push({
      value: body.value,
      expiresAt: now() + body.expiration * 1_000,
      priority: body.priority,
      visibleAt: 0,
      readId: null,
      bytes,
      order: ++order,
    });
    return c.json({});
  });

  app.post("/queues/:name/read", async (c) => {
    const body = readBody.parse(await c.req.json());
    if (body.count < 1 || body.count > MAX_READ) refuse("InvalidCount");
    const name = c.req.param("name");
    const until = now() + body.waitSeconds * 1_000;
    // Roblox tries again every two seconds while it waits; a finer step only answers sooner.
    for (;;) {
      purge();
      const ready = visible(queueOf(name));
      if (ready.length >= body.count || (now() >= until && ready.length > 0)) break;
      if (now() >= until) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const ready = visible(queueOf(name));
    const taken = ready.length >= body.count || !body.allOrNothing
      ? ready.slice(0, body.count)
      : [];
    spend(Math.max(1, taken.length));
    if (taken.length === 0) return c.json({ values: [], readId: null });
    const readId = crypto.randomUUID();
    for (const item of taken) {
      item.readId = readId;
      item.visibleAt = now() + body.invisibilitySeconds * 1_000;
    }
    return c.json({ values: taken.map((item) => item.value), readId });
  });

  app.post("/queues/:name/remove", async (c) => {
    const { readId } = z.object({ readId: z.string() }).parse(await c.req.json());
    purge();
    spend(1);
    const queue = queueOf(c.req.param("name"));
    const at = now();
    // Only items still hidden under this read: ones that came back were not its to remove.
    const kept = queue.filter((item) => !(item.readId === readId && item.visibleAt > at));
    for (const item of queue) if (!kept.includes(item)) memory -= item.bytes;
    queues.set(c.req.param("name"), kept);
    return c.json({});
  });

  app.get("/_usage", (c) => c.json(usage()));
  app.post("/_control/users", async (c) => {
    users = z.object({ users: z.number().int().min(0) }).parse(await c.req.json()).users;
    return c.json(usage());
  });

  function usage(): MemoryStoreUsage {
    purge();
    let items = 0;
    for (const map of maps.values()) items += map.size;
    for (const queue of queues.values()) items += queue.length;
    return {
      users,
      unitsPerMinuteLimit: unitsLimit(),
      unitsByMinute: [...byMinute].map(([minute, units]) => ({ minute, units })),
      memoryLimitBytes: memoryLimit(),
      memoryBytes: memory,
      peakMemoryBytes: peakMemory,
      items,
      refused: { ...refused },
    };
  }

  const server = await serveApp(app, options);
  return {
    url: server.url,
    setUsers: (count) => {
      users = count;
    },
    usage,
    seed: (name, key, value, expirationSeconds) => {
      const text = JSON.stringify(value);
      const bytes = encoder.encode(key).length + encoder.encode(text).length;
      const map = mapOf(name);
      memory += bytes - (map.get(key)?.bytes ?? 0);
      peakMemory = Math.max(peakMemory, memory);
      map.set(key, {
        value: text,
        expiresAt: now() + expirationSeconds * 1_000,
        version: ++version,
        bytes,
      });
    },
    close: () => server.close(),
  };
}
