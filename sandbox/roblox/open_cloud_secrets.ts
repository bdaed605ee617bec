// Stand-in for Open Cloud's universe secrets API (beta): a public key per universe, values stored
// as libsodium sealed boxes under it, problem-details errors and 120 requests a minute per
// authorization. It keeps each universe's private key, so tests can open what was stored; it
// opens with libsodium itself, independently of the service's own sealing code.
import type { Context, Hono } from "hono";
import sodium from "libsodium-wrappers";
import { z } from "zod";

/** A stored secret: its sealed value as sent, and what the stand-in knows about it. */
export interface StoredSecret {
  id: string;
  /** Base64 of the sealed box, as the client sent it. */
  secret: string;
  keyId: string;
  domain: string;
  createTime: number;
  updateTime: number;
}

interface UniverseSecrets {
  publicKey: Uint8Array;
  privateKey: Uint8Array;
  keyId: string;
  secrets: Map<string, StoredSecret>;
}

/** The secrets of every universe the stand-in has seen, with their key pairs. */
export interface SecretsStore {
  universes: Map<string, UniverseSecrets>;
  /** Requests taken this minute per authorization. */
  minutes: Map<string, { minute: number; count: number }>;
  now: () => number;
}

const SECRET_ID = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_SECRETS = 500;
const MAX_VALUE_LENGTH = 1_024;
const REQUESTS_PER_MINUTE = 120;

const createBody = z.strictObject({
  id: z.string(),
  secret: z.string().min(1),
  key_id: z.string().min(1),
  domain: z.string().min(1),
});
const updateBody = createBody.omit({ id: true }).partial({ domain: true });

/** Creates an empty store; libsodium must be ready (`await sodium.ready`) before it is used. */
export async function createSecretsStore(now: () => number): Promise<SecretsStore> {
  await sodium.ready;
  return { universes: new Map(), minutes: new Map(), now };
}

function universeOf(store: SecretsStore, universeId: string): UniverseSecrets {
  let found = store.universes.get(universeId);
  if (!found) {
    const pair = sodium.crypto_box_keypair();
    const keyId = String(100_000 + store.universes.size);
    found = { publicKey: pair.publicKey, privateKey: pair.privateKey, keyId, secrets: new Map() };
    store.universes.set(universeId, found);
  }
  return found;
}

/** Opens a stored secret with the universe's private key; null when absent or it does not open. */
export function openStoredSecret(
  store: SecretsStore,
  universeId: string,
  secretId: string,
): string | null {
  const universe = store.universes.get(universeId);
  const stored = universe?.secrets.get(secretId);
  if (!universe || !stored) return null;
  return openSealed(universe, stored.secret);
}

function openSealed(universe: UniverseSecrets, sealed: string): string | null {
  try {
    const box = sodium.from_base64(sealed, sodium.base64_variants.ORIGINAL);
    const plain = sodium.crypto_box_seal_open(box, universe.publicKey, universe.privateKey);
    return new TextDecoder("utf-8", { fatal: true }).decode(plain);
  } catch {
    return null;
  }
}

/** A problem-details error, as the secrets API answers. */
function problem(c: Context, status: 400 | 401 | 403 | 404 | 409 | 429, detail: string) {
  const titles = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    429: "Too Many Requests",
  };
  c.header("content-type", "application/problem+json");
  return c.body(
    JSON.stringify({ type: "about:blank", title: titles[status], status, detail }),
    status,
  );
}

function view(secret: StoredSecret) {
  return {
    id: secret.id,
    domain: secret.domain,
    key_id: secret.keyId,
    create_time: new Date(secret.createTime).toISOString(),
    update_time: new Date(secret.updateTime).toISOString(),
  };
}

/**
 * Adds the secrets routes under /cloud/v2/universes/{universeId}/secrets. `authorize` answers the
 * caller's authorization (an error Response, or a name to count its requests under) for a scope.
 */
export function addSecretsRoutes(
  app: Hono,
  store: SecretsStore,
  authorize: (c: Context, scope: string) => Response | string,
): void {
  // Authorizes, counts against the minute's budget and finds the universe.
  function enter(c: Context, scope: string): Response | UniverseSecrets {
    const universeId = c.req.param("universeId") ?? "";
    if (!/^\d{1,20}$/.test(universeId)) return problem(c, 400, "Invalid universe ID");
    const who = authorize(c, scope);
    if (who instanceof Response) return who;
    const minute = Math.floor(store.now() / 60_000);
    const taken = store.minutes.get(who);
    const count = taken?.minute === minute ? taken.count : 0;
    if (count >= REQUESTS_PER_MINUTE) {
      c.header("retry-after", String(Math.ceil((minute + 1) * 60 - store.now() / 1_000)));
      return problem(c, 429, "Too many requests to the secrets API");
    }
    store.minutes.set(who, { minute, count: count + 1 });
    return universeOf(store, universeId);
  }

  async function body<T>(c: Context, schema: z.ZodType<T>): Promise<T | string> {
    const parsed = schema.safeParse(await c.req.json().catch(() => undefined));
    if (parsed.success) return parsed.data;
    return parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
  }

  // Checks a sealed value against the universe's current key; a problem text when it fails.
  function checkValue(universe: UniverseSecrets, input: { secret: string; key_id: string }) {
    if (input.key_id !== universe.keyId) return "key_id is not the universe's current public key";
    const plain = openSealed(universe, input.secret);
    if (plain === null) return "secret is not a sealed box under the universe's public key";
    if (plain.length > MAX_VALUE_LENGTH) {
      return `secret must be at most ${MAX_VALUE_LENGTH} characters`;
    }
    return null;
  }

  const base = "/cloud/v2/universes/:universeId/secrets";
  app.get(`${base}/public-key`, (c) => {
    const universe = enter(c, "universe.secret:read");
    if (universe instanceof Response) return universe;
    return c.json({
      id: "public-key",
      secret: sodium.to_base64(universe.publicKey, sodium.base64_variants.ORIGINAL),
      key_id: universe.keyId,
    });
  });
  app.get(base, (c) => {
    const universe = enter(c, "universe.secret:read");
    if (universe instanceof Response) return universe;
    const limit = Math.min(Math.max(Number(c.req.query("limit") ?? 10) || 10, 1), 500);
    const all = [...universe.secrets.values()].sort((a, b) => a.id.localeCompare(b.id));
    const start = Number(c.req.query("cursor") ?? 0) || 0;
    const page = all.slice(start, start + limit);
    const next = start + limit < all.length ? String(start + limit) : "";
    return c.json({ secrets: page.map(view), next_page_cursor: next });
  });
  app.post(base, async (c) => {
    const universe = enter(c, "universe.secret:write");
    if (universe instanceof Response) return universe;
    const input = await body(c, createBody);
    if (typeof input === "string") return problem(c, 400, input);
    if (!SECRET_ID.test(input.id)) {
      return problem(c, 400, "id must be 1 to 64 letters, digits or _, not starting with a digit");
    }
    if (universe.secrets.has(input.id)) return problem(c, 409, `Secret ${input.id} already exists`);
    if (universe.secrets.size >= MAX_SECRETS) return problem(c, 400, "Too many secrets");
    const invalid = checkValue(universe, input);
    if (invalid) return problem(c, 400, invalid);
    const at = store.now();
    const stored: StoredSecret = {
      id: input.id,
      secret: input.secret,
      keyId: input.key_id,
      domain: input.domain,
      createTime: at,
      updateTime: at,
    };
    universe.secrets.set(input.id, stored);
    return c.json(view(stored), 201);
  });
  app.patch(`${base}/:secretId`, async (c) => {
    const universe = enter(c, "universe.secret:write");
    if (universe instanceof Response) return universe;
    const stored = universe.secrets.get(c.req.param("secretId") ?? "");
    if (!stored) return problem(c, 404, "No such secret");
    const input = await body(c, updateBody);
    if (typeof input === "string") return problem(c, 400, input);
    const invalid = checkValue(universe, input);
    if (invalid) return problem(c, 400, invalid);
    Object.assign(stored, {
      secret: input.secret,
      keyId: input.key_id,
      domain: input.domain ?? stored.domain,
      updateTime: store.now(),
    });
    return c.json(view(stored));
  });
  app.delete(`${base}/:secretId`, (c) => {
    const universe = enter(c, "universe.secret:write");
    if (universe instanceof Response) return universe;
    if (!universe.secrets.delete(c.req.param("secretId") ?? "")) {
      return problem(c, 404, "No such secret");
    }
    return c.body(null, 204);
  });
}

/** Answers an authorization failure as problem details. */
export function secretsAuthProblem(c: Context, status: 401 | 403, message: string): Response {
  return problem(c, status, message);
}
