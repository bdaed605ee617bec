// Headers on every answer (issue 12, item 4): nosniff everywhere, HSTS over https, and on every
// HTML page a policy that runs scripts only from our bundle.
import assert from "node:assert/strict";
import { call, createTestApp, createTestProject, TEST_BASE_URL } from "../support/test_app.ts";
import {
  createProjectAs,
  getPage,
  postForm,
  postJson,
  signInDeveloper,
} from "../support/dashboard.ts";
import { browse } from "../support/sign_in.ts";

const SPEC_CSP = "frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

Deno.test("Every answer carries X-Content-Type-Options: nosniff, JSON, errors and pages alike", async () => {
  await using t = await createTestApp();
  for (const path of ["/health", "/v1/project", "/no-such-route", "/", "/static/islands.js"]) {
    const res = await call(t.app, path);
    await res.body?.cancel();
    assert.deepEqual(res.headers.get("x-content-type-options"), "nosniff", path);
    assert.deepEqual(res.headers.get("strict-transport-security"), null, path);
  }
  const big = await call(t.app, "/auth/wallet/challenge", {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": "99999999" },
    body: "{}",
  });
  await big.body?.cancel();
  assert.deepEqual(big.headers.get("x-content-type-options"), "nosniff", "a 413 too");
});

Deno.test("Every /v1, /api and /auth answer carries Cache-Control: no-store, errors included", async () => {
  await using t = await createTestApp();
  const { apiKey } = await createTestProject(t);
  const origin = { origin: new URL(TEST_BASE_URL).origin };
  const answers: [string, Response][] = [
    ["200 project", await call(t.app, "/v1/project", { apiKey })],
    ["200 player", await call(t.app, "/v1/players/7/wallet", { apiKey })],
    ["401", await call(t.app, "/v1/project")],
    ["400 invalid_user_id", await call(t.app, "/v1/players/x/wallet", { apiKey })],
    ["404 unknown /v1 route", await call(t.app, "/v1/nope", { apiKey })],
    ["404 unknown key", await call(t.app, "/v1/tx/none", { apiKey })],
    [
      "400 invalid_json",
      await call(t.app, "/v1/players/wallets", { method: "POST", apiKey, body: "{" }),
    ],
    [
      "200 sign-in challenge",
      await call(t.app, "/auth/wallet/challenge", {
        method: "POST",
        headers: origin,
        json: { address: "Vote111111111111111111111111111111111111111" },
      }),
    ],
    ["403 linking", await call(t.app, "/api/link/none/challenge", { method: "POST", json: {} })],
  ];
  for (const [what, res] of answers) {
    await res.body?.cancel();
    assert.deepEqual(res.headers.get("cache-control"), "no-store", what);
  }
  // What holds no one's data may still be cached (revalidated).
  for (const path of ["/static/islands.js", "/openapi.json"]) {
    const res = await call(t.app, path);
    await res.body?.cancel();
    assert.deepEqual(res.headers.get("cache-control"), "no-cache", path);
  }
});

Deno.test("Every /dashboard answer carries Cache-Control: no-store: secrets in JSON, redirects, errors", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  const base = `/dashboard/projects/${project.id}`;
  const answers: [string, Response][] = [
    [
      "201 a new API key's plaintext",
      await postJson(t.app, `${base}/keys`, undefined, { jar: dev.jar }),
    ],
    [
      "201 a webhook's signing secret",
      await postJson(t.app, `${base}/webhooks`, { url: "https://93.184.216.34/in" }, {
        jar: dev.jar,
      }),
    ],
    [
      "200 the webhooks as JSON",
      await browse(t.app, `${base}/webhooks`, {
        jar: dev.jar,
        headers: { accept: "application/json" },
      }),
    ],
    ["303 a form's redirect", await postForm(t.app, `${base}/keys`, {}, { jar: dev.jar })],
    [
      "404 an error",
      await postJson(t.app, "/dashboard/projects/nope/keys", undefined, {
        jar: dev.jar,
      }),
    ],
    ["401 signed out", await postJson(t.app, `${base}/keys`, undefined)],
  ];
  for (const [what, res] of answers) {
    await res.body?.cancel();
    assert.ok(res.status < 500, `${what}: ${res.status}`);
    assert.deepEqual(res.headers.get("cache-control"), "no-store", what);
  }
});

Deno.test("The webhooks page, JSON or HTML by Accept, says Vary: Accept", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  for (const accept of ["application/json", "text/html"]) {
    const res = await browse(t.app, `/dashboard/projects/${project.id}/webhooks`, {
      jar: dev.jar,
      headers: { accept },
    });
    await res.body?.cancel();
    assert.equal(res.status, 200, accept);
    assert.ok(res.headers.get("content-type")?.includes(accept.split("/")[1]!), accept);
    assert.match(res.headers.get("vary") ?? "", /\baccept\b/i, accept);
  }
});

Deno.test("Strict-Transport-Security is sent when BASE_URL is https", async () => {
  await using t = await createTestApp({ config: { baseUrl: "https://blocklink.example" } });
  for (const path of ["/health", "/", "/link/nobody"]) {
    const res = await t.app.request(`https://blocklink.example${path}`);
    await res.body?.cancel();
    assert.deepEqual(res.headers.get("strict-transport-security"), "max-age=31536000", path);
  }
});

Deno.test("Every HTML page has a CSP with script-src 'self', object-src 'none' and frame-ancestors 'none'", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  for (const path of ["/", "/dashboard", "/dashboard/sign-in", "/link/no-such-game"]) {
    const res = await getPage(t.app, path, path === "/dashboard" ? dev.jar : undefined);
    const html = await res.text();
    assert.ok(res.headers.get("content-type")?.startsWith("text/html"), path);
    const csp = res.headers.get("content-security-policy") ?? "";
    assert.ok(csp.startsWith(SPEC_CSP), `${path}: ${csp}`);
    for (const directive of ["script-src 'self'", "object-src 'none'", "frame-ancestors 'none'"]) {
      assert.ok(csp.split("; ").includes(directive), `${path}: ${directive} in ${csp}`);
    }
    assert.deepEqual(res.headers.get("x-frame-options"), "DENY", path);
    // Island props are inert data; the only script that runs is the bundle, loaded from us.
    for (const tag of html.match(/<script\b[^>]*>/g) ?? []) {
      assert.ok(
        tag === '<script type="application/json" id="__islands">' ||
          tag === '<script type="module" src="/static/islands.js">',
        `${path}: ${tag}`,
      );
    }
  }
  // The API reference sets a stricter policy of its own; it still has the three directives.
  const docs = await getPage(t.app, "/docs");
  await docs.body?.cancel();
  const csp = (docs.headers.get("content-security-policy") ?? "").split("; ");
  for (const directive of ["script-src 'self'", "object-src 'none'", "frame-ancestors 'none'"]) {
    assert.ok(csp.includes(directive), `/docs: ${directive} in ${csp.join("; ")}`);
  }
});
