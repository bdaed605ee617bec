// A standing fuzz suite (issue 12, item 6): every route meets a corpus of hostile requests. Each
// answers a 4xx in the spec's error shape (redirect routes: a redirect that stays on this site;
// HTML pages: a 4xx page or the sign-in redirect), never a 5xx, and the store is left exactly as it
// was, compared entry by entry (versionstamps included) before and after.
import assert from "node:assert/strict";
import {
  CookieJar,
  createLinkProject,
  createTestWallet,
  type LinkWorld,
  signInPlayer,
  startLinkWorld,
} from "../support/sign_in.ts";
import { createKeyAs, createProjectAs, postJson, signInDeveloper } from "../support/dashboard.ts";
import { TEST_BASE_URL } from "../support/test_app.ts";
import { createApiKey } from "../../kv/api_keys.ts";

const ORIGIN = new URL(TEST_BASE_URL).origin;
const VALID = "11111111111111111111111111111112";
const LONG = "x".repeat(10 * 1024);

/** Bodies no route accepts: broken JSON, odd shapes, wrong types, hostile strings. */
const BODIES: string[] = [
  "",
  " ",
  "{",
  '{"address":',
  '{"address":"abc',
  "nul",
  "\u0000",
  "[".repeat(5000) + "]".repeat(5000),
  '{"to":' + "[".repeat(3000) + "]".repeat(3000) + "}",
  "null",
  "true",
  "42",
  '"text"',
  "[]",
  JSON.stringify({
    address: 123,
    next: 7,
    nonce: [],
    signature: {},
    userIds: "1",
    to: "x",
    mint: false,
    amount: 1,
    idempotencyKey: null,
    name: 5,
    cluster: [],
    oauthClientId: [],
    oauthClientSecret: {},
    universeId: {},
    topic: 9,
    publishingKey: [],
    maxSolPerTransfer: {},
    perRecipientPerHour: "many",
    perPlayerPerHour: [],
    allowedMints: "x",
    hourlyBudgets: 1,
  }),
  '{"userIds":[1e400,-1,0,1.5]}',
  '{"to":{"userId":1e400},"amount":"1","idempotencyKey":"k","mint":"' + VALID + '"}',
  JSON.stringify({ to: { address: VALID }, amount: "1e9", idempotencyKey: "k", mint: VALID }),
  JSON.stringify({ to: { address: VALID }, amount: 1e9, idempotencyKey: "k", mint: VALID }),
  JSON.stringify({ to: { userId: 1, address: VALID }, amount: "1", idempotencyKey: "k" }),
  JSON.stringify({
    address: "",
    nonce: "",
    signature: "",
    name: "",
    cluster: "",
    to: { address: "" },
    mint: "",
    amount: "",
    idempotencyKey: "",
    userIds: [""],
    maxSolPerTransfer: "",
    allowedMints: [{ mint: "", maxPerTransaction: "" }],
  }),
  JSON.stringify({
    address: LONG,
    nonce: LONG,
    signature: LONG,
    name: LONG,
    cluster: LONG,
    next: LONG,
    to: { address: LONG },
    mint: LONG,
    amount: LONG,
    idempotencyKey: LONG,
    oauthClientId: LONG,
    universeId: LONG,
    topic: LONG,
    maxSolPerTransfer: LONG,
  }),
  '{"address":"\\ud800","nonce":"\\udfff","signature":"\\ud83d","name":"\\ud800",' +
  '"cluster":"devnet","to":{"address":"\\ud800"},"mint":"\\ud800","amount":"1",' +
  '"idempotencyKey":"k\\ud800","topic":"\\udc00","\\ud800":1}',
  JSON.stringify({
    address: "a\u0000b",
    nonce: "\u0007",
    signature: "\r\n",
    name: "a\u0000b\u001f",
    cluster: "dev\u0000net",
    to: { address: "\u202e" + VALID },
    mint: VALID + "\u0000",
    amount: "1\u0000",
    idempotencyKey: "\u0000",
    universeId: "1\u0000",
    topic: "t\u0000",
    maxSolPerTransfer: "1\u0000",
  }),
  '{"__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}}}',
];

/** Form bodies (urlencoded) no route accepts. */
const FORMS: string[] = [
  "name=%00%ZZ&cluster=%",
  `name=${encodeURIComponent(LONG)}&cluster=devnet`,
  "name=a%00b&cluster=devnet&universeId=1%00&topic=%0a&maxSolPerTransfer=-1",
  "name=&name=&cluster=moon&cluster=sun&universeId=x&maxSolPerTransfer=1e9",
];

/** Path parameters: traversal, control characters, malformed UTF-8, huge and odd values. */
const PARAMS: string[] = [
  "..%2F..%2Fetc%2Fpasswd",
  "%2e%2e%2f%2e%2e%2f",
  "..%5C..%5Cwindows",
  "%00",
  "%0d%0aSet-Cookie:%20x=1",
  "%ED%A0%80",
  "%FF%FE",
  "%F0%9F%98%80",
  LONG,
  "%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E",
  "-1",
  "0",
  "1e9",
  "99999999999999999999999999",
  "%20",
];

/** Open-redirect payloads for `next`. */
const NEXTS: string[] = [
  "//evil.example",
  "/\\evil.example",
  "/%5Cevil.example",
  "https://evil.example/dashboard",
  "javascript:alert(1)",
  "/dashboard@evil.example",
  "/%2F%2Fevil.example",
  "/link/..%2F..%2F%2F%2Fevil.example",
  "\t//evil.example",
  "/dashboard/../..//evil.example",
  LONG,
];

const ORIGINS = ["https://evil.example", "null", `${ORIGIN}.evil.example`, `${ORIGIN}/`, ""];

interface Fixture {
  world: LinkWorld;
  apiKey: string;
  slug: string;
  projectId: string;
  keyId: string;
  dev: CookieJar;
  player: CookieJar;
}

async function setUp(world: LinkWorld): Promise<Fixture> {
  const linkProject = await createLinkProject(world);
  const { plaintext: apiKey } = await createApiKey(world.t.kv, linkProject.id, world.clock.now());
  const player = (await signInPlayer(world, linkProject, 1001)).jar;
  const developer = await signInDeveloper(world.app);
  const owned = await createProjectAs(world.app, developer, { name: "Fuzzed" });
  const key = await createKeyAs(world.app, developer, owned.id);
  const watch = await postJson(world.app, `/dashboard/projects/${owned.id}/watches`, {
    name: "hot",
    address: createTestWallet().address,
  }, { jar: developer.jar });
  assert.deepEqual(watch.status, 201);
  return {
    world,
    apiKey,
    slug: linkProject.slug,
    projectId: owned.id,
    keyId: key.id,
    dev: developer.jar,
    player,
  };
}

type Auth = "api" | "player" | "developer" | "none";

/** One route: how it authenticates, what it reads, how it answers. */
interface Route {
  method: "GET" | "POST";
  /** With `{param}` where hostile path values go; other parts are filled from the fixture. */
  path: (f: Fixture, param?: string) => string;
  auth: Auth;
  body?: "json" | "form";
  /** `json`: the spec's error shape; `html`: a page; `redirect`: a same-site redirect. */
  answer: "json" | "html" | "redirect";
  /** Hostile values are tried in this path parameter. */
  param?: boolean;
  /** Query parameters hostile values are tried in. */
  query?: string[];
  /** A read the spec answers for any input (the page, `me` without a session): 200 is fine. */
  anyInput?: boolean;
}

const ROUTES: Route[] = [
  { method: "GET", path: () => "/v1/project", auth: "api", answer: "json" },
  {
    method: "GET",
    path: (_, p = "1") => `/v1/players/${p}/wallet`,
    auth: "api",
    answer: "json",
    param: true,
  },
  { method: "POST", path: () => "/v1/players/wallets", auth: "api", body: "json", answer: "json" },
  {
    method: "GET",
    path: (_, p = VALID) => `/v1/wallets/${p}/balance`,
    auth: "api",
    answer: "json",
    param: true,
  },
  {
    method: "GET",
    path: (_, p = VALID) => `/v1/wallets/${p}/tokens`,
    auth: "api",
    answer: "json",
    param: true,
    query: ["mint"],
  },
  {
    method: "GET",
    path: (_, p = VALID) => `/v1/wallets/${p}/assets`,
    auth: "api",
    answer: "json",
    param: true,
    query: ["collection"],
  },
  {
    method: "GET",
    path: (_, p = "1") => `/v1/signatures/${p}`,
    auth: "api",
    answer: "json",
    param: true,
  },
  { method: "POST", path: () => "/v1/tx/transfer-sol", auth: "api", body: "json", answer: "json" },
  {
    method: "POST",
    path: () => "/v1/tx/transfer-token",
    auth: "api",
    body: "json",
    answer: "json",
  },
  { method: "POST", path: () => "/v1/tx/mint-token", auth: "api", body: "json", answer: "json" },
  {
    method: "GET",
    path: (_, p = "none") => `/v1/tx/${p}`,
    auth: "api",
    answer: "json",
    param: true,
  },
  {
    method: "GET",
    path: (f, p = f.slug) => `/link/${p}`,
    auth: "player",
    answer: "html",
    param: true,
    query: ["error"],
    anyInput: true,
  },
  {
    method: "GET",
    path: (f, p = f.slug) => `/api/link/${p}/me`,
    auth: "player",
    answer: "json",
    param: true,
    anyInput: true,
  },
  {
    method: "POST",
    path: (f, p = f.slug) => `/api/link/${p}/challenge`,
    auth: "player",
    body: "json",
    answer: "json",
    param: true,
  },
  {
    method: "POST",
    path: (f, p = f.slug) => `/api/link/${p}/verify`,
    auth: "player",
    body: "json",
    answer: "json",
    param: true,
  },
  {
    method: "POST",
    path: (_, p = "no-such-game") => `/api/link/${p}/unlink`,
    auth: "player",
    answer: "json",
    param: true,
  },
  {
    method: "GET",
    path: () => "/auth/idp/start",
    auth: "none",
    answer: "redirect",
    query: ["next"],
  },
  {
    method: "GET",
    path: () => "/auth/idp/callback",
    auth: "none",
    answer: "redirect",
    query: ["code", "state", "error"],
  },
  {
    method: "POST",
    path: () => "/auth/wallet/challenge",
    auth: "none",
    body: "json",
    answer: "json",
  },
  { method: "POST", path: () => "/auth/wallet/verify", auth: "none", body: "json", answer: "json" },
  {
    method: "GET",
    path: () => "/dashboard/sign-in",
    auth: "developer",
    answer: "redirect",
    query: ["next"],
    anyInput: true,
  },
  {
    method: "GET",
    path: (f, p = f.projectId) => `/dashboard/projects/${p}`,
    auth: "developer",
    answer: "html",
    param: true,
  },
  {
    method: "GET",
    path: (f) => `/dashboard/projects/${f.projectId}/players`,
    auth: "developer",
    answer: "html",
    query: ["q"],
    anyInput: true,
  },
  {
    method: "POST",
    path: () => "/dashboard/projects",
    auth: "developer",
    body: "json",
    answer: "json",
  },
  {
    method: "POST",
    path: (_, p = "no-such-project") => `/dashboard/projects/${p}/delete`,
    auth: "developer",
    answer: "json",
    param: true,
  },
  {
    method: "POST",
    path: (_, p = "no-such-project") => `/dashboard/projects/${p}/keys`,
    auth: "developer",
    answer: "json",
    param: true,
  },
  {
    method: "POST",
    path: (f, p = "no-such-key") => `/dashboard/projects/${f.projectId}/keys/${p}/revoke`,
    auth: "developer",
    answer: "json",
    param: true,
  },
  {
    method: "POST",
    path: (_, p = "no-such-project") => `/dashboard/projects/${p}/wallet`,
    auth: "developer",
    answer: "json",
    param: true,
  },
  {
    method: "POST",
    path: (f, p = f.projectId) => `/dashboard/projects/${p}/settings`,
    auth: "developer",
    body: "json",
    answer: "json",
    param: true,
  },
  {
    method: "POST",
    path: (f, p = f.projectId) => `/dashboard/projects/${p}/policy`,
    auth: "developer",
    body: "json",
    answer: "json",
    param: true,
  },
  {
    method: "POST",
    path: (f, p = f.projectId) => `/dashboard/projects/${p}/watches`,
    auth: "developer",
    body: "json",
    answer: "json",
    param: true,
  },
  {
    method: "POST",
    path: (f, p = "not-watched") => `/dashboard/projects/${f.projectId}/watches/${p}/delete`,
    auth: "developer",
    answer: "json",
    param: true,
    anyInput: true,
  },
  {
    method: "POST",
    path: (_, p = "no-such-project") => `/dashboard/projects/${p}/ping`,
    auth: "developer",
    answer: "json",
    param: true,
  },
  {
    method: "POST",
    path: () => "/dashboard/sign-out-everywhere",
    auth: "developer",
    answer: "json",
  },
  { method: "POST", path: () => "/auth/logout", auth: "none", answer: "json" },
];

interface Attack {
  label: string;
  path: string;
  headers: Record<string, string>;
  body?: string | undefined;
  /** Logout needs no session: foreign cookies get its normal answer, but still change nothing. */
  allowOk?: boolean;
}

function credentials(f: Fixture, auth: Auth): Record<string, string> {
  if (auth === "api") return { "x-api-key": f.apiKey };
  if (auth === "player") return { cookie: f.player.header() };
  if (auth === "developer") return { cookie: f.dev.header() };
  return {};
}

/** Every hostile request for one route. */
function attacksOn(f: Fixture, route: Route): Attack[] {
  const base = route.path(f);
  const common: Record<string, string> = {
    accept: "application/json",
    ...credentials(f, route.auth),
    ...(route.method === "POST" ? { origin: ORIGIN } : {}),
  };
  const attacks: Attack[] = [];
  if (route.body) {
    for (const body of BODIES) {
      attacks.push({
        label: `body ${JSON.stringify(body.slice(0, 40))}`,
        path: base,
        headers: { ...common, "content-type": "application/json" },
        body,
      });
    }
    if (route.path(f).startsWith("/dashboard/")) {
      for (const body of FORMS) {
        attacks.push({
          label: `form ${body.slice(0, 40)}`,
          path: base,
          headers: { ...common, "content-type": "application/x-www-form-urlencoded" },
          body,
        });
      }
    }
  }
  if (route.param) {
    for (const param of PARAMS) {
      attacks.push({
        label: `param ${param.slice(0, 40)}`,
        path: route.path(f, param),
        headers: common,
        body: route.body ? "{}" : undefined,
      });
    }
  }
  for (const name of route.query ?? []) {
    for (const value of [...PARAMS, ...NEXTS.map(encodeURIComponent)]) {
      attacks.push({
        label: `query ${name}=${value.slice(0, 40)}`,
        path: `${base}?${name}=${value}`,
        headers: common,
      });
    }
  }
  if (route.method === "POST" && route.auth !== "api") {
    for (const origin of ORIGINS) {
      attacks.push({ label: `origin ${origin}`, path: base, headers: { ...common, origin } });
    }
    const { origin: _, ...withoutOrigin } = common;
    attacks.push({ label: "no origin", path: base, headers: withoutOrigin });
  }
  const cookieName = route.auth === "player" ? "__Host-svc_session" : "__Host-svc_dev";
  const real = route.auth === "player" ? f.player.get(cookieName) : f.dev.get(cookieName);
  const foreign = [
    `${cookieName}=${real?.slice(0, -4)}AAAA`,
    `${cookieName}=forged.value; ${cookieName}=${real}`,
    `${cookieName}=${real}; ${cookieName}=forged.value`,
    `${cookieName}=${"A".repeat(4000)}`,
    `__Host-svc_session=${f.dev.get("__Host-svc_dev")}`,
    `__Host-svc_dev=${f.player.get("__Host-svc_session")}`,
    `${cookieName}=%ED%A0%80.%00`,
  ];
  if (route.auth === "player" || route.auth === "developer" || route.path(f) === "/auth/logout") {
    for (const cookie of foreign) {
      // A duplicate cookie name may let the real one through; that is a browser's own cookie.
      const duplicate = cookie.includes(`; ${cookieName}=`);
      // Ending sessions with the real cookie along is no attack: it is what the button does.
      const ends = /logout|sign-out/.test(base);
      if (duplicate && ((!route.param && route.answer !== "json") || ends)) continue;
      attacks.push({
        label: `cookie ${cookie.slice(0, 50)}`,
        path: duplicate ? route.path(f, route.param ? "no-such-thing" : undefined) : base,
        headers: { ...common, cookie },
        allowOk: route.path(f) === "/auth/logout" || duplicate,
      });
    }
  }
  if (route.auth === "api") {
    for (const key of ["", "x".repeat(5000), `${f.apiKey}x`, f.apiKey.toUpperCase(), "%00"]) {
      attacks.push({
        label: `api key ${key.slice(0, 20)}`,
        path: base,
        headers: { ...common, "x-api-key": key },
      });
    }
  }
  return attacks;
}

async function check(f: Fixture, route: Route, attack: Attack): Promise<string | null> {
  const res = await f.world.app.request(`${TEST_BASE_URL}${attack.path}`, {
    method: route.method,
    headers: attack.headers,
    body: attack.body ?? null,
  });
  const where = `${route.method} ${attack.path.slice(0, 60)} [${attack.label}]`;
  const text = await res.text();
  if (res.status >= 500) return `${where}: ${res.status} ${text.slice(0, 200)}`;
  const type = res.headers.get("content-type") ?? "";
  if (res.status >= 300 && res.status < 400) {
    const location = res.headers.get("location") ?? "";
    const ours = location.startsWith("/") && !location.startsWith("//") &&
      !location.startsWith("/\\");
    const provider = location.startsWith(f.world.idp.idpUrl);
    if (!ours && !provider) return `${where}: redirects off-site to ${location}`;
    if (route.answer === "redirect" || route.answer === "html") return null;
    return `${where}: redirected to ${location}`;
  }
  if (res.status < 400) {
    return attack.allowOk || route.anyInput ? null : `${where}: accepted with ${res.status}`;
  }
  if (type.startsWith("application/json")) {
    const body = JSON.parse(text);
    const shaped = typeof body?.error?.code === "string" &&
      typeof body?.error?.message === "string";
    if (!shaped) return `${where}: not the error shape: ${text.slice(0, 200)}`;
  } else if (route.answer === "json") {
    return `${where}: ${res.status} without a JSON error body`;
  }
  return null;
}

// The spec counts every /v1 request with a valid key, whatever its answer: these keys count them,
// and the request log lists them.
const REQUEST_COUNTING_PREFIXES = new Set([
  "request_log",
  "request_counts",
  "request_count_shards",
  "usage_minutes",
  "usage_days",
]);

async function dump(kv: Deno.Kv): Promise<unknown[]> {
  const entries = [];
  for await (const entry of kv.list({ prefix: [] })) {
    if (REQUEST_COUNTING_PREFIXES.has(entry.key[0] as string)) continue;
    entries.push(entry);
  }
  return entries;
}

Deno.test("Every route answers hostile requests with a 4xx and changes nothing in the store", async () => {
  await using world = await startLinkWorld({
    // The limits are tested on their own; here they must not hide what each route answers.
    config: {
      abuseLimits: {
        signin_challenge: 1_000_000,
        developer_account: 1_000_000,
        project_change: 1_000_000,
        watch_create: 1_000_000,
        key_create: 1_000_000,
        test_ping: 1_000_000,
        dashboard_change: 1_000_000,
        sandbox_airdrop: 1_000_000,
      },
    },
  });
  const f = await setUp(world);
  const before = await dump(world.t.kv);
  const problems: string[] = [];
  let count = 0;
  for (const route of ROUTES) {
    for (const attack of attacksOn(f, route)) {
      count++;
      const problem = await check(f, route, attack);
      if (problem) problems.push(problem);
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(count > 1000, `${count} requests sent`);
  assert.deepEqual(await dump(world.t.kv), before);
});
