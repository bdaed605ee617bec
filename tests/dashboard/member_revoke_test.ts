/**
 * A member's rights end when they leave (issue 37, item 3): what a removed or demoted member made
 * and may no longer hold is withdrawn in the team change's own commit (their API keys, webhook
 * endpoints and invitations), unless the actor keeps a key or an endpoint; an invitation is
 * accepted only while its sender may still grant its role; and a team change is refused when its
 * actor was removed meanwhile.
 */
import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import {
  createKeyAs,
  createProjectAs,
  getPage,
  postForm,
  postJson,
  signInDeveloper,
  type TestDeveloper,
} from "../support/dashboard.ts";
import { createTestWallet } from "../support/sign_in.ts";
import { acceptAs, inviteAs, joinTeam, startTeam } from "../support/team.ts";
import { call, createTestApp, type TestApp } from "../support/test_app.ts";
import { startTxHarness } from "../support/tx_harness.ts";
import { startWebhooksHarness } from "../support/webhooks_harness.ts";
import { holdNextWrite, startRemoteStore } from "../support/remote_store.ts";
import { createApiKey, listApiKeys } from "../../kv/api_keys.ts";
import { listAuditEntries } from "../../kv/audit_log.ts";
import { listInvitations } from "../../kv/invitations.ts";
import { memberKey, membershipKey } from "../../kv/members.ts";
import { getTxRequest } from "../../kv/tx_requests.ts";
import { listWebhookEndpoints } from "../../kv/webhooks.ts";
import { recordEvents } from "../../lib/events/record.ts";
import { shortAddress } from "../../components/dashboard/format.ts";

const path = (projectId: string, rest = "") => `/dashboard/projects/${projectId}${rest}`;

async function auditOf(t: TestApp, projectId: string, action: string) {
  const now = t.clock.now();
  const entries = await Array.fromAsync(listAuditEntries(t.kv, projectId, { now }));
  return entries.filter((e) => e.action === action);
}

async function keyStatus(app: Parameters<typeof call>[0], key: string): Promise<number> {
  const res = await call(app, "/v1/project", { apiKey: key });
  await res.body?.cancel();
  return res.status;
}

Deno.test("Keys and endpoints record who made them; the keys and webhooks pages say so", async () => {
  await using h = await startWebhooksHarness();
  const owner = await signInDeveloper(h.t.app);
  const project = await createProjectAs(h.t.app, owner);
  const dev = await joinTeam(h.t.app, owner, project.id, "developer");

  // Given: a key and an endpoint the developer made, and a key from before makers were recorded
  const made = await createKeyAs(h.t.app, dev, project.id);
  await createApiKey(h.t.kv, project.id, h.t.clock.now());
  const added = await postJson(h.t.app, path(project.id, "/webhooks"), { url: h.hookUrl() }, {
    jar: dev.jar,
  });
  assert.equal(added.status, 201);
  assert.equal((await added.json()).endpoint.createdBy, dev.address);

  // When: the owner reads the pages
  const keys = await (await getPage(h.t.app, path(project.id, "/keys"), owner.jar)).text();
  const hooks = await (await getPage(h.t.app, path(project.id, "/webhooks"), owner.jar)).text();

  // Then: each names its maker, and the older key none
  const makers = [...keys.matchAll(/data-testid="key-maker">([^<]*)</g)].map((m) => m[1]);
  // Both keys were made in one millisecond of the test clock: their order is the ids' chance.
  const expected = [shortAddress(dev.address), "made before makers were recorded"];
  assert.deepEqual(makers.sort(), expected.sort());
  assert.ok(keys.includes(`data-key-id="${made.id}"`));
  assert.match(hooks, new RegExp(`by ${shortAddress(dev.address)}`));
});

Deno.test("A removed developer's pay key is refused on every instance, and pays nothing", async () => {
  const ownerWallet = createTestWallet();
  await using h = await startTxHarness({ store: "file", developer: ownerWallet.address });
  await h.policy({ maxSolPerTransfer: "1" });
  const to = await h.link(5);
  const owner = await signInDeveloper(h.a.app, ownerWallet);
  const dev = await joinTeam(h.a.app, owner, h.project.id, "developer");
  const made = await createKeyAs(h.a.app, dev, h.project.id);
  // Both instances have used the key, so both caches hold it.
  const b = await h.instance();
  assert.deepEqual([await keyStatus(h.a.app, made.key), await keyStatus(b.app, made.key)], [
    200,
    200,
  ]);

  // When: the owner removes the developer on instance a
  const removed = await postJson(
    h.a.app,
    path(h.project.id, `/members/${dev.address}/remove`),
    undefined,
    { jar: owner.jar },
  );
  assert.equal(removed.status, 200);

  // Then: a payout with their key is refused on both instances, and nothing is paid
  for (const [i, app] of [h.a.app, b.app].entries()) {
    const payout = { to: { userId: 5 }, amount: "0.5", idempotencyKey: `after-${i}` };
    const res = await call(app, "/v1/tx/transfer-sol", {
      method: "POST",
      apiKey: made.key,
      json: payout,
    });
    await assertErrorCode(res, 401, "unauthorized");
    assert.equal(await getTxRequest(h.a.kv, h.project.id, payout.idempotencyKey), null);
  }
  const balance = await h.rpc.getBalance(to, { commitment: "processed" }).send();
  assert.equal(balance.value, 0n);
  assert.deepEqual(await removed.json(), { ok: true, withdrawn: [`key:${made.id}`] });
  // And the key nobody made stays, and the revocation is in the log, by the owner
  assert.equal(await keyStatus(b.app, h.apiKey), 200);
  const [revoked] = await auditOf(h.a, h.project.id, "key_revoked");
  assert.deepEqual(
    [revoked?.actor, revoked?.details],
    [owner.address, { keyId: made.id, preview: made.key.slice(0, 13), madeBy: dev.address }],
  );
});

Deno.test("A removed developer's webhook endpoint stops receiving, its pending deliveries too", async () => {
  await using h = await startWebhooksHarness();
  const owner = await signInDeveloper(h.t.app);
  const project = await createProjectAs(h.t.app, owner);
  const dev = await joinTeam(h.t.app, owner, project.id, "developer");
  const hooks = path(project.id, "/webhooks");
  for (const [who, at] of [[dev, "/dev"], [owner, "/owner"]] as const) {
    const res = await postJson(h.t.app, hooks, { url: h.hookUrl(at) }, { jar: who.jar });
    assert.equal(res.status, 201);
  }
  const event = (userId: number) => ({
    type: "wallet_linked" as const,
    userId,
    address: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
  });
  // Given: both endpoints refused the first event, so both its deliveries wait for a retry
  h.receiver.answerNext({ status: 500 }, 2);
  await recordEvents(h.t.ctx, project.id, [event(1)]);
  await h.drain();
  assert.equal(h.receiver.received().length, 2);

  // When: the owner removes the developer
  const removed = await postJson(h.t.app, path(project.id, `/members/${dev.address}/remove`), {}, {
    jar: owner.jar,
  });
  assert.equal(removed.status, 200);

  // Then: the retry and the next event go to the owner's endpoint only
  h.t.clock.advance(3_600_000);
  await recordEvents(h.t.ctx, project.id, [event(2)]);
  await h.drain();
  const later = h.receiver.received().slice(2).map((r) => r.path);
  assert.deepEqual(later, ["/owner", "/owner"]);
  const left = await listWebhookEndpoints(h.t.kv, project.id);
  assert.deepEqual(left.map((e) => e.url), [h.hookUrl("/owner")]);
  const [entry] = await auditOf(h.t, project.id, "webhook_endpoint_removed");
  assert.deepEqual([entry?.actor, entry?.details.madeBy], [owner.address, dev.address]);
});

Deno.test("An invitation is accepted only while its sender may still grant its role", async (t) => {
  await t.step("its sender removed: withdrawn with them", async () => {
    await using w = await startTeam();
    const wallet = createTestWallet();
    // Given: the admin invites a second wallet of theirs as admin
    await inviteAs(w.app, w.as.admin, {
      projectId: w.projectId,
      address: wallet.address,
      role: "admin",
    });

    // When: the owner removes the admin, and the second wallet then accepts
    const removed = await postJson(
      w.app,
      path(w.projectId, `/members/${w.as.admin.address}/remove`),
      undefined,
      { jar: w.as.owner.jar },
    );
    const accepted = await acceptAs(w.app, await signInDeveloper(w.app, wallet), w.projectId);

    // Then: refused, the invitation gone with the admin in one change
    await assertErrorCode(accepted, 404, "invitation_not_found");
    assert.deepEqual(await removed.json(), {
      ok: true,
      withdrawn: [`invitation:${wallet.address}`],
    });
    const pending = await listInvitations(w.t.kv, w.projectId, w.t.clock.now());
    assert.deepEqual(pending.map((i) => i.address), [w.invited]);
  });

  await t.step(
    "its sender removed before invitations were withdrawn: refused at accept",
    async () => {
      await using w = await startTeam();
      const wallet = createTestWallet();
      const admin = w.as.admin.address;
      await inviteAs(w.app, w.as.admin, {
        projectId: w.projectId,
        address: wallet.address,
        role: "admin",
      });
      // Given: the admin was removed as the previous release removed members, invitations left
      await w.t.kv.atomic().delete(memberKey(w.projectId, admin))
        .delete(membershipKey(admin, w.projectId)).commit();

      // When
      const accepted = await acceptAs(w.app, await signInDeveloper(w.app, wallet), w.projectId);

      // Then
      await assertErrorCode(accepted, 404, "invitation_not_found");
      assert.equal((await w.t.kv.get(memberKey(w.projectId, wallet.address))).value, null);
    },
  );
});

Deno.test("Demoting withdraws what the new role may not hold, and nothing else", async () => {
  await using w = await startTeam();
  const { owner, admin, developer } = w.as;
  const devKey = await createKeyAs(w.app, developer, w.projectId);
  const adminKey = await createKeyAs(w.app, admin, w.projectId);
  const wallet = createTestWallet();
  await inviteAs(w.app, admin, {
    projectId: w.projectId,
    address: wallet.address,
    role: "developer",
  });
  const demote = async (who: TestDeveloper, role: string) => {
    const res = await postJson(w.app, path(w.projectId, `/members/${who.address}/role`), {
      role,
    }, { jar: owner.jar });
    assert.equal(res.status, 200);
    return (await res.json()).withdrawn;
  };

  // When: the developer becomes a viewer, and the admin a developer
  const fromDeveloper = await demote(developer, "viewer");
  const fromAdmin = await demote(admin, "developer");

  // Then: the viewer's key is revoked; the developer keeps their key but not their invitation
  assert.equal(await keyStatus(w.app, devKey.key), 401);
  assert.equal(await keyStatus(w.app, adminKey.key), 200);
  const accepted = await acceptAs(w.app, await signInDeveloper(w.app, wallet), w.projectId);
  await assertErrorCode(accepted, 404, "invitation_not_found");
  assert.deepEqual([fromDeveloper, fromAdmin], [[`key:${devKey.id}`], [
    `invitation:${wallet.address}`,
  ]]);
});

Deno.test("A member who leaves takes what they made with them", async () => {
  await using w = await startTeam();
  const { developer } = w.as;
  const made = await createKeyAs(w.app, developer, w.projectId);
  // When
  const left = await postJson(w.app, path(w.projectId, "/leave"), undefined, {
    jar: developer.jar,
  });
  // Then
  assert.equal(left.status, 200);
  assert.equal(await keyStatus(w.app, made.key), 401);
  assert.deepEqual(await left.json(), { ok: true, withdrawn: [`key:${made.id}`] });
});

Deno.test("The team page lists what a member made; only what the actor ticks stays", async () => {
  await using w = await startTeam();
  const { owner, developer } = w.as;
  const kept = await createKeyAs(w.app, developer, w.projectId);
  const dropped = await createKeyAs(w.app, developer, w.projectId);
  const page = await (await getPage(w.app, path(w.projectId, "/team"), owner.jar)).text();
  for (const key of [kept, dropped]) {
    assert.ok(page.includes(`name="keep" value="key:${key.id}"`), "a keep box for each key");
  }

  // When: the owner removes the developer from the page's form, keeping one key
  const res = await postForm(w.app, path(w.projectId, `/members/${developer.address}/remove`), {
    role: "developer",
    keep: `key:${kept.id}`,
  }, { jar: owner.jar });

  // Then: only the other key is revoked
  assert.deepEqual([res.status, res.headers.get("location")], [303, path(w.projectId, "/team")]);
  assert.deepEqual([await keyStatus(w.app, kept.key), await keyStatus(w.app, dropped.key)], [
    200,
    401,
  ]);
  const revoked = await auditOf(w.t, w.projectId, "key_revoked");
  assert.deepEqual(revoked.map((e) => e.details.keyId), [dropped.id]);
  const log = await (await getPage(w.app, path(w.projectId, "/audit"), owner.jar)).text();
  assert.ok(
    log.includes(`${dropped.key.slice(0, 13)}…, made by ${shortAddress(developer.address)}`),
  );
});

Deno.test("A team change by an admin removed meanwhile is refused", async (t) => {
  // Each change the admin makes of the viewer's place, and what it would have made.
  const wallet = createTestWallet().address;
  const changes = [
    { what: "invite", rest: () => "/members", body: { address: wallet, role: "admin" } },
    { what: "role", rest: (v: string) => `/members/${v}/role`, body: { role: "admin" } },
    { what: "remove", rest: (v: string) => `/members/${v}/remove`, body: {} },
  ];
  for (const change of changes) {
    await t.step(change.what, async () => {
      await using store = await startRemoteStore();
      await using app = await createTestApp({ kvPath: store.url });
      const owner = await signInDeveloper(app.app);
      const project = await createProjectAs(app.app, owner);
      const admin = await joinTeam(app.app, owner, project.id, "admin");
      const viewer = await joinTeam(app.app, owner, project.id, "viewer");
      // Given: the admin's change is held at the store, not yet applied
      const hold = holdNextWrite(store, "team_stamps");
      const changing = postJson(
        app.app,
        path(project.id, change.rest(viewer.address)),
        change.body,
        { jar: admin.jar },
      );
      await hold.held;

      // When: the owner removes the admin, then the change's write goes on
      const removed = await postJson(
        app.app,
        path(project.id, `/members/${admin.address}/remove`),
        {},
        { jar: owner.jar },
      );
      assert.equal(removed.status, 200);
      hold.release();

      // Then: the change is refused, and the viewer's place and the invitations are as they were
      await assertErrorCode(await changing, 404, "project_not_found");
      const member = await app.kv.get<{ role: string }>(memberKey(project.id, viewer.address));
      assert.equal(member.value?.role, "viewer");
      assert.deepEqual(await listInvitations(app.kv, project.id, app.clock.now()), []);
    });
  }
});

Deno.test("A key or an endpoint made by a developer removed meanwhile is refused", async (t) => {
  // Each: the developer's creation is held at the store while the owner removes them.
  const cases = [
    { what: "key", rest: "/keys", body: undefined, text: "api_key_counts" },
    { what: "endpoint", rest: "/webhooks", body: "url", text: "webhook_targets" },
  ] as const;
  for (const c of cases) {
    await t.step(c.what, async () => {
      await using store = await startRemoteStore();
      await using h = await startWebhooksHarness({ kvPath: store.url });
      const owner = await signInDeveloper(h.t.app);
      const project = await createProjectAs(h.t.app, owner);
      const dev = await joinTeam(h.t.app, owner, project.id, "developer");
      // Given: the developer's creation is held at the store, not yet applied
      const hold = holdNextWrite(store, c.text);
      const body = c.body ? { url: h.hookUrl() } : undefined;
      const making = postJson(h.t.app, path(project.id, c.rest), body, { jar: dev.jar });
      await hold.held;

      // When: the owner removes the developer, then the creation's write goes on
      const removed = await postJson(
        h.t.app,
        path(project.id, `/members/${dev.address}/remove`),
        {},
        { jar: owner.jar },
      );
      assert.equal(removed.status, 200);
      hold.release();

      // Then: refused, and nothing was made
      await assertErrorCode(await making, 404, "project_not_found");
      const now = h.t.clock.now();
      assert.deepEqual(await listApiKeys(h.t.kv, project.id, now), []);
      assert.deepEqual(await listWebhookEndpoints(h.t.kv, project.id), []);
    });
  }
});
