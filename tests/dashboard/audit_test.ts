/** The audit log: every dashboard action recorded with its change (who, when, what), never a secret; filters, export, one year. */
import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import {
  createProjectAs,
  getPage,
  postJson,
  signInDeveloper,
  type TestDeveloper,
} from "../support/dashboard.ts";
import { browse } from "../support/sign_in.ts";
import { joinTeam, startTeam, type TeamWorld } from "../support/team.ts";
import {
  addAuditEntry,
  type AuditAction,
  type AuditEntry,
  listAuditEntries,
} from "../../kv/audit_log.ts";
import { MAX_ACTIVE_KEYS_PER_PROJECT } from "../../kv/api_keys.ts";
import { createTestApp } from "../support/test_app.ts";
import { countListings } from "../support/list_counts.ts";
import { getProject } from "../../kv/projects.ts";

const WATCH_ADDRESS = "Vote111111111111111111111111111111111111111";
const OAUTH_SECRET = "oauth-client-secret-that-must-never-be-logged";
const PUBLISHING_KEY = "publishing-key-that-must-never-be-logged";

async function entries(w: { t: { kv: Deno.Kv; clock: { now(): number } } }, projectId: string) {
  const now = w.t.clock.now();
  return (await Array.fromAsync(listAuditEntries(w.t.kv, projectId, { now }))).reverse();
}

async function post(w: TeamWorld, who: TestDeveloper, rest: string, body?: unknown) {
  const res = await postJson(w.app, `/dashboard/projects/${w.projectId}${rest}`, body, {
    jar: who.jar,
  });
  assert.ok(res.status === 200 || res.status === 201, `${rest}: ${await res.clone().text()}`);
  return await res.json();
}

Deno.test("Every dashboard action is recorded in the audit log with who did it, when and what", async () => {
  await using w = await startTeam();
  const { owner, admin, developer } = w.as;
  const start = (await entries(w, w.projectId)).length;
  const nameBefore = (await getProject(w.t.kv, w.projectId))!.name;

  // When: the team runs the project for a while
  await post(w, developer, "/settings", {
    name: "Renamed",
    oauthClientId: "client-1",
    oauthClientSecret: OAUTH_SECRET,
    universeId: "4242",
    publishingKey: PUBLISHING_KEY,
  });
  await post(w, admin, "/policy", { maxSolPerTransfer: "2" });
  await post(w, developer, "/policy", { maxSolPerTransfer: "1" });
  const { watch } = await post(w, developer, "/watches", { name: "vault", address: WATCH_ADDRESS });
  await post(w, developer, `/watches/${watch.id}/delete`);
  const key = await post(w, developer, "/keys", { scopes: ["read"] });
  await post(w, developer, `/keys/${key.id}/revoke`);
  await post(w, admin, "/wallet");
  await post(w, admin, `/members/${w.as.viewer.address}/role`, { role: "developer" });
  await post(w, admin, `/invitations/${w.invited}/revoke`);
  await post(w, owner, "/transfer", { address: admin.address });
  await post(w, developer, "/leave");

  // Then: one entry per change, in order, each naming its member and time
  const log = (await entries(w, w.projectId)).slice(start);
  assert.deepEqual(log.map((e) => [e.action, e.actor]), [
    ["settings_saved", developer.address],
    ["policy_saved", admin.address],
    ["policy_saved", developer.address],
    ["watch_added", developer.address],
    ["watch_removed", developer.address],
    ["key_created", developer.address],
    ["key_revoked", developer.address],
    ["wallet_created", admin.address],
    ["member_role_changed", admin.address],
    ["invitation_revoked", admin.address],
    ["ownership_transferred", owner.address],
    ["member_left", developer.address],
  ]);
  for (const entry of log) assert.equal(entry.at, w.t.clock.now());
  const [settings, , tightened, added, , created] = log as AuditEntry[];
  assert.deepEqual(settings!.details, {
    changes: {
      name: { before: nameBefore, after: "Renamed" },
      oauthClientId: { before: null, after: "client-1" },
      universeId: { before: null, after: "4242" },
      oauthClientSecret: "set",
      publishingKey: "set",
    },
  });
  assert.deepEqual(tightened!.details, {
    before: {
      maxSolPerTransfer: "2",
      allowedMints: [],
      perRecipientPerHour: null,
      perPlayerPerHour: null,
      hourlyBudgets: [],
    },
    after: {
      maxSolPerTransfer: "1",
      allowedMints: [],
      perRecipientPerHour: null,
      perPlayerPerHour: null,
      hourlyBudgets: [],
    },
  });
  assert.deepEqual(added!.details, { watchId: watch.id, name: "vault", address: WATCH_ADDRESS });
  assert.deepEqual(created!.details, {
    keyId: key.id,
    preview: key.preview,
    scopes: ["read"],
  });
  assert.deepEqual(log[8]!.details, {
    address: w.as.viewer.address,
    before: "viewer",
    after: "developer",
  });

  // And no secret is in the log, nor in its export
  const exported =
    await (await getPage(w.app, `/dashboard/projects/${w.projectId}/audit/export`, owner.jar))
      .text();
  for (const secret of [OAUTH_SECRET, PUBLISHING_KEY, key.key]) {
    assert.ok(!JSON.stringify(log).includes(secret));
    assert.ok(!exported.includes(secret));
  }
});

Deno.test("A refused action records nothing", async () => {
  await using w = await startTeam();
  const before = (await entries(w, w.projectId)).length;
  for (let i = 1; i < MAX_ACTIVE_KEYS_PER_PROJECT; i++) await post(w, w.as.owner, "/keys");
  const after = (await entries(w, w.projectId)).length;
  await assertErrorCode(
    await postJson(w.app, `/dashboard/projects/${w.projectId}/keys`, undefined, {
      jar: w.as.owner.jar,
    }),
    403,
    "key_limit_reached",
  );
  await assertErrorCode(
    await postJson(w.app, `/dashboard/projects/${w.projectId}/policy`, { maxSolPerTransfer: "1" }, {
      jar: w.as.developer.jar,
    }),
    403,
    "insufficient_role",
  );
  await assertErrorCode(
    await postJson(w.app, `/dashboard/projects/${w.projectId}/settings`, { name: "" }, {
      jar: w.as.developer.jar,
    }),
    400,
    "invalid_settings",
  );
  assert.equal(after - before, MAX_ACTIVE_KEYS_PER_PROJECT - 1);
  assert.equal((await entries(w, w.projectId)).length, after);
});

Deno.test("A sign-in is recorded in the log of every project of the member", async () => {
  await using t = await createTestApp();
  const a = await signInDeveloper(t.app);
  const b = await signInDeveloper(t.app);
  const mine = await createProjectAs(t.app, a);
  const theirs = await createProjectAs(t.app, b);
  const member = await joinTeam(t.app, b, theirs.id, "viewer");
  await createProjectAs(t.app, member);
  const count = async (projectId: string) =>
    (await entries({ t }, projectId)).filter((e) =>
      e.action === "signed_in" && e.actor === member.address
    ).length;
  const [inMine, inTheirs] = [await count(mine.id), await count(theirs.id)];

  // When: the member signs in again
  await signInDeveloper(t.app, member.wallet);

  // Then: the project they are on records it, the one they are not on does not
  assert.deepEqual([await count(mine.id), await count(theirs.id)], [inMine, inTheirs + 1]);
});

Deno.test("The audit page filters by action, member and day, pages, exports JSON, and keeps a year", async (t) => {
  await using w = await startTeam();
  const base = `/dashboard/projects/${w.projectId}/audit`;
  const day = 24 * 3_600_000;
  for (let i = 0; i < 60; i++) {
    await post(w, w.as.developer, "/settings", { name: `Name ${i}` });
  }
  w.t.clock.advance(2 * day);
  // Sessions last 12 hours: sign in again.
  for (const role of ["admin", "viewer", "outsider"] as const) {
    w.as[role] = await signInDeveloper(w.app, w.as[role].wallet);
  }
  await post(w, w.as.admin, "/policy", {});

  await t.step("by action and member, newest first, 50 a page", async () => {
    const html = await (await getPage(
      w.app,
      `${base}?action=settings_saved&actor=${w.as.developer.address}`,
      w.as.viewer.jar,
    )).text();
    assert.equal(html.match(/data-action="settings_saved"/g)?.length, 50);
    assert.ok(!html.includes('data-action="policy_saved"'));
    const next = html.match(/href="([^"]*before=[^"]*)"/)![1]!.replaceAll("&amp;", "&");
    const older = await (await getPage(w.app, next, w.as.viewer.jar)).text();
    assert.equal(older.match(/data-action="settings_saved"/g)?.length, 10);
    assert.ok(!older.includes("Older entries"));
  });

  await t.step("by day", async () => {
    const today = new Date(w.t.clock.now()).toISOString().slice(0, 10);
    const html = await (await getPage(w.app, `${base}?from=${today}&to=${today}`, w.as.viewer.jar))
      .text();
    assert.deepEqual(html.match(/data-action="[a-z_]+"/g), [
      'data-action="policy_saved"',
      'data-action="signed_in"',
      'data-action="signed_in"',
    ]);
  });

  await t.step("export: every matching entry as JSON, for any member", async () => {
    const res = await getPage(w.app, `${base}/export?action=settings_saved`, w.as.viewer.jar);
    assert.equal(res.status, 200);
    assert.match(
      res.headers.get("content-disposition")!,
      /^attachment; filename="audit-.*\.json"$/,
    );
    const body = await res.json();
    assert.equal(body.projectId, w.projectId);
    assert.equal(body.entries.length, 60);
    assert.ok(body.entries.every((e: AuditEntry) => e.action === "settings_saved"));
    const outsider = await browse(w.app, `${base}/export`, { jar: w.as.outsider.jar });
    await assertErrorCode(outsider, 404, "project_not_found");
  });

  await t.step("a year later the entries are gone, even before the store drops them", async () => {
    w.t.clock.advance(365 * day - 3_600_000);
    w.as.viewer = await signInDeveloper(w.app, w.as.viewer.wallet);
    const html = await (await getPage(w.app, base, w.as.viewer.jar)).text();
    assert.ok(!html.includes('data-action="settings_saved"'));
    assert.ok(html.includes('data-action="policy_saved"'));
  });
});

// Adds `count` entries of `actor` doing `action`, one millisecond apart, oldest first.
async function addEntries(w: TeamWorld, actor: string, count: number, action: AuditAction) {
  for (let i = 0; i < count; i += 100) {
    const op = w.t.kv.atomic();
    for (let j = i; j < Math.min(count, i + 100); j++) {
      w.t.clock.advance(1);
      addAuditEntry(op, { projectId: w.projectId, actor, action, at: w.t.clock.now() });
    }
    assert.ok((await op.commit()).ok);
  }
}

Deno.test("A filtered audit page looks at 1,000 entries at most, then offers to search on", async () => {
  await using w = await startTeam();
  const base = `/dashboard/projects/${w.projectId}/audit`;
  // Given one policy save, then 2,500 newer entries of other kinds
  await post(w, w.as.admin, "/policy", {});
  await addEntries(w, w.as.developer.address, 2_500, "settings_saved");
  const reads = countListings(w.t.kv, "audit_log");

  // When the policy saves are asked for
  let html = await (await getPage(w.app, `${base}?action=policy_saved`, w.as.viewer.jar)).text();

  // Then the page looked at no more than 1,000 entries, found none there, and says so
  assert.ok(reads.entries <= 1_000, `${reads.entries} entries read`);
  assert.ok(!html.includes("data-action="), "no entry among the latest 1,000");
  assert.ok(html.includes('data-testid="audit-unsearched"'));
  assert.ok(!html.includes('data-testid="audit-older"'));
  // And following "Continue searching" finds the entry, a bounded look each time
  const pages = [html];
  while (!html.includes('data-action="policy_saved"')) {
    const next = /href="([^"]*)" data-testid="audit-continue"/.exec(html)?.[1];
    assert.ok(next, "each page without the entry offers to continue");
    const before = reads.entries;
    html = await (await getPage(w.app, next.replaceAll("&amp;", "&"), w.as.viewer.jar)).text();
    assert.ok(reads.entries - before <= 1_000, `${reads.entries - before} entries read`);
    pages.push(html);
  }
  assert.equal(pages.length, 3);
  assert.equal(html.match(/data-action="policy_saved"/g)?.length, 1);
  assert.ok(!html.includes('data-testid="audit-continue"'), "the end of the log was reached");
});

Deno.test("The audit export reads the store only as fast as the client reads the body", async () => {
  await using w = await startTeam();
  await addEntries(w, w.as.developer.address, 1_000, "settings_saved");
  const reads = countListings(w.t.kv, "audit_log");
  const res = await getPage(
    w.app,
    `/dashboard/projects/${w.projectId}/audit/export`,
    w.as.viewer.jar,
  );
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";

  // When the client has read only the head, nothing was read from the log yet
  text += decoder.decode((await reader.read()).value, { stream: true });
  assert.match(text, /^\{"projectId":/);
  assert.deepEqual(reads, { listings: 0, entries: 0 });

  // Then each further read of the body reads one page of the log, and nothing ahead of it
  for (let page = 1; page <= 3; page++) {
    text += decoder.decode((await reader.read()).value, { stream: true });
    assert.equal(reads.listings, page, `after ${page} reads of entries`);
    assert.ok(reads.entries <= page * 101, `${reads.entries} entries read for ${page} pages`);
    assert.equal(text.split("\n").length - 1, page * 100, "the page's entries were sent");
  }

  // And the whole body is still the whole log, as JSON
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    text += decoder.decode(chunk.value, { stream: true });
  }
  const body = JSON.parse(text);
  assert.equal(body.projectId, w.projectId);
  assert.equal(body.entries.filter((e: AuditEntry) => e.action === "settings_saved").length, 1_000);
  assert.ok(reads.listings <= 12, `${reads.listings} listings for 1,000 entries`);
});
