// The request log: a project's /v1 calls, refusals included, with route, key, status and code,
// filterable, from every instance, kept 7 days.
import assert from "node:assert/strict";
import { call, createTestApp } from "../support/test_app.ts";
import { createKeyAs, createProjectAs, getPage, signInDeveloper } from "../support/dashboard.ts";
import { createTestWallet } from "../support/sign_in.ts";
import { REQUEST_LOG_KEPT_MS } from "../../kv/request_log.ts";

/** The rows of the log page: `METHOD route|status|code`. */
function rowsOf(html: string): string[] {
  const list = html.match(/data-testid="request-list"[\s\S]*?<\/table>/)?.[0] ?? "";
  return [...list.matchAll(/<tbody>([\s\S]*?)<\/tbody>/g)].flatMap((m) => m[1]!.split("</tr>"))
    .filter((row) => row.includes("<td"))
    .map((row) => row.replace(/<[^>]+>/g, "|").replace(/\|+/g, "|").trim())
    .map((text) => {
      const cells = text.split("|").filter((c) => c.trim() !== "");
      return [cells[1], cells[3], cells[4]].join("|");
    });
}

Deno.test("A refused payout is in the request log with its route, key, status and code, and filters find it", async () => {
  await using t = await createTestApp();
  const wallet = createTestWallet();
  const dev = await signInDeveloper(t.app, wallet);
  const project = await createProjectAs(t.app, dev);
  const key = await createKeyAs(t.app, dev, project.id);
  const base = `/dashboard/projects/${project.id}/requests`;
  // Given: a read that succeeds, a payout refused for an unlinked player, a bad body, and a
  // successful feed read (not listed)
  (await call(t.app, "/v1/project", { apiKey: key.key })).body?.cancel();
  const refused = await call(t.app, "/v1/tx/transfer-sol", {
    apiKey: key.key,
    method: "POST",
    json: { to: { userId: 77 }, amount: "0.01", idempotencyKey: "reward-77" },
  });
  const refusal = (await refused.json()).error.code;
  (await call(t.app, "/v1/tx/transfer-sol", { apiKey: key.key, method: "POST", json: {} })).body
    ?.cancel();
  (await call(t.app, "/v1/events?after=latest", { apiKey: key.key })).body?.cancel();
  (await call(t.app, "/v1/project", { apiKey: "blk_live_nope" })).body?.cancel();

  // Then: the log lists the project's calls, newest first, the refusal with its code
  const all = rowsOf(await (await getPage(t.app, base, dev.jar)).text());
  assert.deepEqual(all, [
    `POST /v1/tx/transfer-sol|${400}|invalid_request`,
    `POST /v1/tx/transfer-sol|${refused.status}|${refusal}`,
    "GET /v1/project|200|none",
  ]);
  // And filters by outcome, route and key
  const refusedOnly = rowsOf(
    await (await getPage(t.app, `${base}?outcome=refused`, dev.jar)).text(),
  );
  assert.equal(refusedOnly.length, 2);
  const byRoute = rowsOf(
    await (await getPage(t.app, `${base}?route=${encodeURIComponent("/v1/project")}`, dev.jar))
      .text(),
  );
  assert.deepEqual(byRoute, ["GET /v1/project|200|none"]);
  const other = await createKeyAs(t.app, dev, project.id);
  const byOtherKey = await (await getPage(t.app, `${base}?key=${other.id}`, dev.jar)).text();
  assert.ok(byOtherKey.includes('data-testid="no-requests"'));
  // And the key is shown by its preview, never in full
  const page = await (await getPage(t.app, base, dev.jar)).text();
  assert.ok(!page.includes(key.key), "the key is never shown");

  // And after 7 days the entries are gone
  t.clock.advance(REQUEST_LOG_KEPT_MS);
  const again = await signInDeveloper(t.app, wallet);
  const later = await (await getPage(t.app, base, again.jar)).text();
  assert.ok(later.includes('data-testid="no-requests"'));
});

Deno.test("Calls answered by two instances of one store are in one log", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using a = await createTestApp({ kvPath: path });
  await using b = await createTestApp({ kvPath: path });
  const dev = await signInDeveloper(a.app, createTestWallet());
  const project = await createProjectAs(a.app, dev);
  const key = await createKeyAs(a.app, dev, project.id);
  (await call(b.app, "/v1/project", { apiKey: key.key })).body?.cancel();
  (await call(b.app, "/v1/players/5/wallet", { apiKey: key.key })).body?.cancel();
  await b.ctx.requestLog.flush();
  const rows = rowsOf(
    await (await getPage(a.app, `/dashboard/projects/${project.id}/requests`, dev.jar)).text(),
  );
  assert.deepEqual(rows, [
    "GET /v1/players/{userId}/wallet|200|none",
    "GET /v1/project|200|none",
  ]);
});
