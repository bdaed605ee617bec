// The OpenAPI document: it lists every route the app serves, it is served without a key, and real
// answers of every route (sent here, and by every other test through `call()`) match it.
import assert from "node:assert/strict";
import { createFundedSigner, createMint, mintTo } from "../../sandbox/chain/fixtures.ts";
import { buildOpenApiDocument } from "../../routes/v1/openapi.ts";
import { V1_OPERATIONS } from "../../routes/v1/operations.ts";
import { ERROR_CODES } from "../../routes/v1/error_codes.ts";
import { call, createTestApp, TEST_BASE_URL } from "../support/test_app.ts";
import { checkAnswer, checkedSamples } from "../support/openapi_conformance.ts";
import { addFormats } from "../support/openapi_formats.ts";
import { Ajv2020 } from "ajv/dist/2020.js";
import { startTxHarness } from "../support/tx_harness.ts";

/** `GET /v1/tx/{idempotencyKey}`-style names of the app's own routes under /v1 and /health. */
function servedRoutes(routes: ReadonlyArray<{ method: string; path: string }>): Set<string> {
  return new Set(
    routes
      .filter((r) => r.method !== "ALL" && (r.path.startsWith("/v1/") || r.path === "/health"))
      .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`),
  );
}

Deno.test("buildOpenApiDocument() lists exactly the /v1 routes the app serves", async () => {
  await using t = await createTestApp();
  const documented = new Set(
    V1_OPERATIONS.map((op) => `${op.method.toUpperCase()} ${op.path}`),
  );
  const served = servedRoutes(t.app.routes);
  assert.ok(served.size >= 12, `only ${served.size} routes found: ${[...served]}`);
  assert.deepEqual(
    [...served].filter((r) => !documented.has(r)),
    [],
    "routes missing from the document",
  );
  assert.deepEqual([...documented].filter((r) => !served.has(r)), [], "documented, not served");
});

Deno.test("servedRoutes() sees a route added to the app, so a missing one fails the test above", () => {
  const routes = [{ method: "GET", path: "/v1/project" }, { method: "GET", path: "/v1/events" }];
  assert.deepEqual([...servedRoutes(routes)], ["GET /v1/project", "GET /v1/events"]);
});

Deno.test("GET /openapi.json answers the OpenAPI 3.1 document without a key", async () => {
  await using t = await createTestApp();
  const res = await call(t.app, "/openapi.json");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal(res.headers.get("access-control-allow-origin"), "*");
  const document = await res.json();
  assert.deepEqual(
    document,
    JSON.parse(
      JSON.stringify(buildOpenApiDocument({ serverUrl: TEST_BASE_URL, title: "Blocklink" })),
    ),
  );
  assert.equal(document.openapi, "3.1.0");
  assert.deepEqual(document.components.securitySchemes.apiKey, {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "A project API key, created in the dashboard with the scopes `read` and/or " +
      "`pay` (keys made before scopes have both)",
  });
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(methods as Record<string, Record<string, unknown>>)) {
      const responses = op.responses as Record<string, { content: unknown }>;
      // Every keyed route names the scope it needs: `pay` for the transaction routes and to grant
      // or cancel a reward; /health none.
      const scope = path === "/health"
        ? []
        : [{ apiKey: [method === "post" && /^\/v1\/(tx|rewards)\b/.test(path) ? "pay" : "read"] }];
      assert.deepEqual(op.security, scope, `${method} ${path} security`);
      if (path.startsWith("/v1/")) {
        // The feed has a limit of its own instead of the quotas.
        const limits = path === "/v1/events"
          ? ["feed_rate_limited"]
          : ["rate_limited", "daily_quota_exceeded"];
        for (const code of ["unauthorized", ...limits, "insufficient_scope", "internal"]) {
          assert.ok(errorCodesOf(responses).includes(code), `${method} ${path} lacks ${code}`);
        }
        if (path === "/v1/events") {
          assert.ok(!errorCodesOf(responses).includes("rate_limited"), "the feed is not counted");
        }
      }
      for (const [status, response] of Object.entries(responses)) {
        if (status === "200") continue;
        for (const code of codesIn(response)) {
          assert.equal(String(ERROR_CODES[code as keyof typeof ERROR_CODES].status), status);
        }
      }
    }
  }
  const tx = document.paths["/v1/tx/transfer-sol"].post;
  assert.deepEqual(
    Object.keys(tx.responses),
    ["200", "400", "401", "403", "404", "409", "413", "422", "429", "500", "502"],
  );
  assert.deepEqual(tx.requestBody.content["application/json"].schema, {
    $ref: "#/components/schemas/TransferSolRequest",
  });
  assert.deepEqual(document.components.schemas.TransferSolRequest.required, [
    "to",
    "amount",
    "idempotencyKey",
  ]);
  const tokens = document.paths["/v1/wallets/{address}/tokens"].get;
  assert.deepEqual(
    tokens.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`),
    ["path:address", "query:mint"],
  );
});

Deno.test("Each operation lists, per status, exactly the catalogue's codes of that status it can answer", () => {
  const document = buildOpenApiDocument({ serverUrl: TEST_BASE_URL, title: "Blocklink" });
  const listed = new Set<string>();
  for (const op of V1_OPERATIONS) {
    const { responses } = document.paths[op.path]![op.method] as {
      responses: Record<string, unknown>;
    };
    for (const [status, response] of Object.entries(responses)) {
      if (status === "200") continue;
      const codes = codesIn(response);
      assert.ok(codes.length > 0, `${op.id} ${status} lists no code`);
      for (const code of codes) {
        listed.add(code);
        assert.equal(
          String(ERROR_CODES[code as keyof typeof ERROR_CODES].status),
          status,
          `${op.id}: ${code} under ${status}`,
        );
      }
    }
  }
  // Every code of the catalogue is answered by some operation.
  assert.deepEqual(Object.keys(ERROR_CODES).filter((code) => !listed.has(code)), []);
  // The money path, status by status, in the spec's order of checks.
  const sol = (document.paths["/v1/tx/transfer-sol"]!.post as {
    responses: Record<string, unknown>;
  }).responses;
  const byStatus = Object.fromEntries(
    Object.entries(sol).filter(([s]) => s !== "200").map(([s, r]) => [s, codesIn(r)]),
  );
  assert.deepEqual(byStatus, {
    "400": ["invalid_json", "invalid_request", "invalid_address", "invalid_amount"],
    "401": ["unauthorized"],
    "403": ["insufficient_scope", "sol_transfers_disabled", "amount_over_limit"],
    "404": ["wallet_not_linked"],
    "409": ["wallet_not_configured", "idempotency_conflict"],
    "413": ["payload_too_large"],
    "422": ["invalid_limit_config"],
    "429": [
      "rate_limited",
      "daily_quota_exceeded",
      "daily_tx_quota_exceeded",
      "recipient_rate_limited",
      "player_rate_limited",
      "hourly_budget_exceeded",
      "daily_failed_tx_quota_exceeded",
    ],
    "500": ["internal"],
    "502": ["wallet_unavailable", "rpc_error"],
  });
});

Deno.test("Every operation has a unique operationId, a tag, a summary and examples the document accepts", () => {
  const document = buildOpenApiDocument({ serverUrl: TEST_BASE_URL, title: "Blocklink" });
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, "doc");
  const tags = new Set((document.tags as Array<{ name: string }>).map((tag) => tag.name));
  const ids = new Set<string>();
  type Media = { schema: unknown; example?: unknown };
  type Op = {
    operationId: string;
    tags: string[];
    summary: string;
    parameters?: Array<{ name: string; schema: unknown; example?: unknown }>;
    requestBody?: { content: Record<string, Media> };
    responses: Record<string, { content: Record<string, Media> }>;
  };
  const valid = (schema: unknown, value: unknown, what: string) => {
    const validate = ajv.compile(schema as object);
    assert.ok(validate(value), `${what}: ${ajv.errorsText(validate.errors)}`);
  };
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, raw] of Object.entries(methods)) {
      const op = raw as Op;
      const name = `${method} ${path}`;
      assert.match(op.operationId, /^[a-z][A-Za-z]+$/, name);
      assert.ok(!ids.has(op.operationId), `${op.operationId} twice`);
      ids.add(op.operationId);
      assert.deepEqual(op.tags.length, 1, name);
      assert.ok(tags.has(op.tags[0]!), `${name}: tag ${op.tags[0]}`);
      assert.ok(op.summary.length > 0, name);
      for (const parameter of op.parameters ?? []) {
        if (parameter.example === undefined) continue;
        valid(resolved(parameter.schema), parameter.example, `${name} ${parameter.name}`);
      }
      // A path parameter has an example whenever the operation has one.
      for (const parameter of op.parameters ?? []) {
        if ((parameter as { in?: string }).in === "path") {
          assert.ok(parameter.example !== undefined, `${name}: ${parameter.name} has no example`);
        }
      }
      const body = op.requestBody?.content["application/json"];
      if (body) {
        assert.ok(body.example !== undefined, `${name}: no request example`);
        valid(resolved(body.schema), body.example, `${name} body`);
      }
      const answer = op.responses["200"]!.content["application/json"]!;
      assert.ok(answer.example !== undefined, `${name}: no answer example`);
      valid(resolved(answer.schema), answer.example, `${name} answer`);
    }
  }
  assert.equal(ids.size, V1_OPERATIONS.length);

  /** A schema whose `$ref` points into the document, made absolute for Ajv. */
  function resolved(schema: unknown): object {
    const ref = (schema as { $ref?: string }).$ref;
    return ref ? { $ref: `doc${ref}` } : schema as object;
  }
});

function codesIn(response: unknown): string[] {
  type ErrorSchema = { properties: { error: { properties: { code: { enum: string[] } } } } };
  const { content } = response as { content: { "application/json": { schema: ErrorSchema } } };
  return content["application/json"].schema.properties.error.properties.code.enum;
}

function errorCodesOf(responses: Record<string, unknown>): string[] {
  return Object.entries(responses).filter(([s]) => s !== "200").flatMap(([, r]) => codesIn(r));
}

Deno.test("checkAnswer() refuses an undescribed field, code or status", async (t) => {
  const request = { method: "GET", url: `${TEST_BASE_URL}/v1/project` };
  const project = {
    id: "p",
    name: "n",
    slug: "s",
    cluster: "devnet",
    walletAddress: null,
    linkUrl: "u",
    events: false,
  };
  await t.step("a described answer passes", () => {
    checkAnswer(request, { status: 200, body: project });
  });
  await t.step("an extra field fails", () => {
    assert.throws(
      () => checkAnswer(request, { status: 200, body: { ...project, extra: 1 } }),
      /does not match/,
    );
  });
  await t.step("a code the route does not answer fails", () => {
    const body = { error: { code: "invalid_mint", message: "m" } };
    assert.throws(() => checkAnswer(request, { status: 400, body }), /does not list/);
    assert.throws(
      () => checkAnswer(request, { status: 401, body: { error: { code: "x", message: "m" } } }),
      /does not match/,
    );
  });
  await t.step("a route outside the document fails", () => {
    assert.throws(
      () =>
        checkAnswer({ method: "GET", url: `${TEST_BASE_URL}/v1/not-a-route` }, {
          status: 200,
          body: [],
        }),
      /not in the OpenAPI document/,
    );
  });
});

Deno.test("Real answers of every route match the OpenAPI document", async () => {
  // Given: a project with a funded wallet, a token it holds and one it mints, a linked player
  await using h = await startTxHarness();
  const issuer = await createFundedSigner(h.chain);
  const held = await createMint(h.chain, { payer: issuer, decimals: 6 });
  await mintTo(h.chain, {
    payer: issuer,
    mint: held,
    authority: issuer,
    owner: h.wallet!,
    amount: 10_000_000n,
    decimals: 6,
  });
  const own = await createMint(h.chain, { payer: issuer, decimals: 0, mintAuthority: h.wallet! });
  await h.policy({
    maxSolPerTransfer: "1",
    allowedMints: [{ mint: held, maxPerTransaction: "5" }, { mint: own, maxPerTransaction: "5" }],
  });
  const player = await h.link(7);
  const get = (path: string, apiKey = h.apiKey) => call(h.a.app, path, { apiKey });
  const post = (path: string, json: unknown) =>
    call(h.a.app, path, { method: "POST", apiKey: h.apiKey, json });

  // When: every route answers, and the common errors come back (call() checks each answer)
  await call(h.a.app, "/health");
  await get("/v1/project");
  await get("/v1/project", "sk_not_a_key");
  await get("/v1/players/7/wallet");
  await get("/v1/players/0/wallet");
  await post("/v1/players/wallets", { userIds: [7, 8] });
  await post("/v1/players/wallets", { userIds: "7" });
  await call(h.a.app, "/v1/players/wallets", { method: "POST", apiKey: h.apiKey, body: "{" });
  await get(`/v1/wallets/${h.wallet}/balance`);
  await get("/v1/wallets/nope/balance");
  await get(`/v1/wallets/${h.wallet}/tokens`);
  await get(`/v1/wallets/${h.wallet}/tokens?mint=${player}`);
  await get(`/v1/wallets/${h.wallet}/assets`);
  const sol = await post("/v1/tx/transfer-sol", {
    to: { userId: 7 },
    amount: "0.01",
    idempotencyKey: "sol-1",
  });
  const { signature } = await sol.json();
  await get(`/v1/signatures/${signature}`);
  await get("/v1/signatures/nope");
  await post("/v1/tx/transfer-sol", { to: { userId: 7 }, amount: "2", idempotencyKey: "sol-2" });
  await post("/v1/tx/transfer-sol", { to: { userId: 9 }, amount: "0.1", idempotencyKey: "sol-3" });
  await post("/v1/tx/transfer-sol", { to: { userId: 7 }, amount: "0.02", idempotencyKey: "sol-1" });
  await post("/v1/tx/transfer-token", {
    to: { address: player },
    mint: held,
    amount: "1",
    idempotencyKey: "tok-1",
  });
  await post("/v1/tx/mint-token", {
    to: { userId: 7 },
    mint: own,
    amount: "3",
    idempotencyKey: "mint-1",
  });
  await post("/v1/tx/mint-token", {
    to: { userId: 7 },
    mint: issuer.address,
    amount: "3",
    idempotencyKey: "mint-2",
  });
  await post("/v1/tx/batch", {
    items: [
      { kind: "transfer-sol", to: { userId: 7 }, amount: "0.01", idempotencyKey: "sol-1" },
      { kind: "transfer-sol", to: { userId: 7 }, amount: "0.03", idempotencyKey: "batch-1" },
      { kind: "transfer-sol", to: { userId: 9 }, amount: "0.1", idempotencyKey: "batch-2" },
      { kind: "mint-token", to: { userId: 7 }, mint: own, amount: "1", idempotencyKey: "batch-3" },
    ],
  });
  await post("/v1/tx/batch", { items: [] });
  await get("/v1/tx/sol-1");
  await get("/v1/tx/none");
  await get("/v1/tx?limit=2");
  await get("/v1/tx?status=unknown");
  const reward = { kind: "transfer-sol", amount: "0.01", idempotencyKey: "reward-1" };
  await post("/v1/rewards", { ...reward, userId: 8 });
  await post("/v1/rewards", { ...reward, userId: 9 });
  await post("/v1/rewards", { ...reward, userId: 7, idempotencyKey: "reward-2" });
  await post("/v1/rewards", { ...reward, userId: 8, amount: "2", idempotencyKey: "reward-3" });
  await get("/v1/rewards/reward-1");
  await get("/v1/rewards/none");
  await post("/v1/rewards/reward-1/cancel", {});
  await post("/v1/rewards/reward-2/cancel", {});
  await get("/v1/players/8/rewards");
  await get("/v1/events?types=tx,wallet_linked");
  await get("/v1/events?limit=0");

  // Then: each route was sampled with its answer, and each error above with its status
  const samples = checkedSamples();
  for (const op of V1_OPERATIONS) {
    const sample = `${op.method.toUpperCase()} ${op.path} 200`;
    assert.ok(samples.has(sample), `no 200 sample of ${op.method} ${op.path}`);
  }
  for (
    const sample of [
      "GET /v1/project 401",
      "GET /v1/players/{userId}/wallet 400",
      "POST /v1/players/wallets 400",
      "GET /v1/wallets/{address}/balance 400",
      "GET /v1/wallets/{address}/tokens 400",
      "GET /v1/signatures/{signature} 400",
      "POST /v1/tx/transfer-sol 403",
      "POST /v1/tx/transfer-sol 404",
      "POST /v1/tx/transfer-sol 409",
      "POST /v1/tx/mint-token 403",
      "GET /v1/tx/{idempotencyKey} 404",
      "GET /v1/tx 400",
      "GET /v1/events 400",
      "POST /v1/rewards 403",
      "POST /v1/rewards 409",
      "GET /v1/rewards/{key} 404",
      "POST /v1/rewards/{key}/cancel 409",
    ]
  ) assert.ok(samples.has(sample), `no sample ${sample}`);
});

Deno.test("The README's table of error codes is the catalogue: every code, its status, nothing else", () => {
  const readme = Deno.readTextFileSync(new URL("../../README.md", import.meta.url));
  const section = readme.slice(readme.indexOf("**Error codes.**"), readme.indexOf("**Clients.**"));
  const rows = section.split("\n").filter((line) => line.startsWith("| `"));
  const listed = rows.map((row) => {
    const [code, status] = row.split("|").slice(1, 3).map((cell) => cell.trim());
    return [code!.replaceAll("`", ""), Number(status)];
  });
  const catalogue = Object.entries(ERROR_CODES).map(([code, info]) => [code, info.status]);
  assert.ok(catalogue.length > 20);
  assert.deepEqual(listed, catalogue);
});

Deno.test("The README's list of errors added to the spec names exactly the catalogue's codes the spec does not", () => {
  const readme = Deno.readTextFileSync(new URL("../../README.md", import.meta.url));
  const spec = Deno.readTextFileSync(
    new URL("../../../shared/spec/service-api.md", import.meta.url),
  );
  const start = readme.indexOf("**Errors added to the spec's list.**");
  const bullet = readme.slice(start, readme.indexOf("\n- **", start));
  const listed = new Set([...bullet.matchAll(/`([a-z_]+)`\s+\(\d{3}/g)].map((m) => m[1]));
  listed.delete("rate_limited"); // named for the abuse limits, a use the spec does not have
  const added = Object.keys(ERROR_CODES).filter((code) => !spec.includes(code));
  assert.ok(added.length >= 5);
  assert.deepEqual([...listed].sort(), added.sort());
});
