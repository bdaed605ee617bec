/**
 * The dashboard's list of the project's open rewards (issue 41's gaps, item 2): held and paying
 * rewards, newest first, a page at a time, with player, amount, why each waits and its expiry; an
 * admin cancels a held one there through the game API's cancel, audited, and the game is told.
 */
import assert from "node:assert/strict";
import { getPage, postForm, postJson, startWalletProject } from "../support/dashboard.ts";
import { createKeyAs, createProjectAs, signInDeveloper } from "../support/dashboard.ts";
import { holdNextWrite, startRemoteStore } from "../support/remote_store.ts";
import { createTestWallet } from "../support/sign_in.ts";
import { okJson, startTxHarness } from "../support/tx_harness.ts";
import { linkPlayer, rewardEvents, rewardsOf, solReward } from "../support/rewards_harness.ts";
import { DAY_MS } from "../../lib/rewards/request_body.ts";
import { joinTeam } from "../support/team.ts";
import { assertErrorCode } from "../support/assertions.ts";
import { createGemMint, paidReward, putReward, rewardRecord } from "../support/rewards.ts";
import { plain, rowsOf } from "../support/html_table.ts";
import { call, createTestApp } from "../support/test_app.ts";
import { formatTime } from "../../components/dashboard/format.ts";
import { getReward } from "../../kv/rewards.ts";
import { listAuditEntries } from "../../kv/audit_log.ts";

const rewardsPath = (projectId: string) => `/dashboard/projects/${projectId}/rewards`;

Deno.test("The rewards page lists the project's open rewards newest first, a page at a time, with player, amount, why each waits and its expiry", async () => {
  await using w = await startWalletProject();
  const { chain, t, dev, projectId } = w;
  const { gem } = await createGemMint(chain);
  const now = t.clock.now();
  // Given 50 older held rewards, then three open ones and two settled ones, newer
  for (let i = 0; i < 50; i++) {
    const key = `old-${String(i).padStart(2, "0")}`;
    await putReward(
      t.kv,
      projectId,
      rewardRecord({ key, userId: 2000 + i, createdAt: now - 1_000 + i }, now),
    );
  }
  await putReward(t.kv, projectId, rewardRecord({ key: "win-1", createdAt: now - 30 }, now));
  await putReward(
    t.kv,
    projectId,
    rewardRecord({
      key: "win-2",
      userId: 1003,
      waitingFor: "retry",
      error: "Simulation failed",
      createdAt: now - 20,
    }, now),
  );
  await putReward(
    t.kv,
    projectId,
    rewardRecord({
      key: "win-3",
      userId: 1004,
      kind: "transfer-token",
      mint: gem,
      amount: "10",
      units: "1000",
      status: "paying",
      waitingFor: null,
      createdAt: now - 10,
    }, now),
  );
  const paid = rewardRecord({ key: "won-paid", createdAt: now - 5 }, now);
  await putReward(
    t.kv,
    projectId,
    paidReward(paid, "PaidWallet111111111111111111111111111111111", "Sig", now),
  );
  await putReward(
    t.kv,
    projectId,
    rewardRecord({
      key: "won-cancelled",
      status: "cancelled",
      waitingFor: null,
      settledAt: now,
      createdAt: now - 4,
    }, now),
  );

  // When a member opens the rewards page
  const html = await (await getPage(t.app, rewardsPath(projectId), dev.jar)).text();

  // Then it lists the open ones, newest first: player, key, amount, why it waits, granted, expiry
  const rows = rowsOf(html, "open-rewards");
  assert.equal(rows.length, 50, "a page of 50");
  const expires = formatTime(now + 30 * 24 * 3_600_000);
  assert.deepEqual(rows.slice(0, 3).map((row) => row.split(" | ").slice(0, 6).join(" | ")), [
    `1004 | win-3 | 10 GEM | being paid | ${formatTime(now - 10)} | ${expires}`,
    `1003 | win-2 | 0.5 SOL | held: its payment failed, tried againSimulation failed | ${
      formatTime(now - 20)
    } | ${expires}`,
    `1002 | win-1 | 0.5 SOL | held until they link a wallet | ${formatTime(now - 30)} | ${expires}`,
  ]);
  assert.ok(rows[3]!.startsWith("2049 | old-49 |"), rows[3]);
  assert.ok(
    !html.includes("won-paid") && !html.includes("won-cancelled"),
    "settled ones are not listed",
  );
  assert.match(html, /href="\/dashboard\/projects\/[^"]+\/players\?q=1004"/);

  // And the next page goes on from there
  const next = html.match(/href="([^"]+)" data-testid="rewards-next"/)?.[1];
  assert.ok(next, "a link to older rewards");
  const older = await (await getPage(t.app, next.replaceAll("&amp;", "&"), dev.jar)).text();
  assert.deepEqual(rowsOf(older, "open-rewards").map((row) => row.split(" | ")[1]), [
    "old-02",
    "old-01",
    "old-00",
  ]);
});

Deno.test("An admin cancels a held reward from the rewards page, audited, and the game is told; a developer may not", async () => {
  await using w = await startWalletProject();
  const { t, dev: owner, projectId } = w;
  const admin = await joinTeam(t.app, owner, projectId, "admin");
  const developer = await joinTeam(t.app, owner, projectId, "developer");
  const { key: apiKey } = await createKeyAs(t.app, owner, projectId);
  const now = t.clock.now();
  await putReward(t.kv, projectId, rewardRecord({ key: "win 1", createdAt: now - 2 }, now));
  await putReward(
    t.kv,
    projectId,
    rewardRecord({ key: "win-2", status: "paying", waitingFor: null, createdAt: now - 1 }, now),
  );
  const cancel = (jar: typeof admin.jar, key: string) =>
    postJson(t.app, `${rewardsPath(projectId)}/cancel`, { key }, { jar });

  // The page offers the cancel to an admin, for held rewards only, and not to a developer
  const page = await (await getPage(t.app, rewardsPath(projectId), admin.jar)).text();
  assert.equal(page.match(/name="key" value="win 1"/g)?.length, 1, "held: cancellable");
  assert.ok(!page.includes('value="win-2"'), "paying: not cancellable");
  const developerPage = await (await getPage(t.app, rewardsPath(projectId), developer.jar)).text();
  assert.ok(developerPage.includes("win 1") && !developerPage.includes('name="key"'), "no cancel");

  // When a developer tries anyway, it is refused and the reward stays held
  await assertErrorCode(await cancel(developer.jar, "win 1"), 403, "insufficient_role");
  assert.equal((await getReward(t.kv, projectId, "win 1")).value?.status, "held");

  // When the admin cancels it (its key as sent, spaces and all)
  const cancelled = await cancel(admin.jar, "win 1");
  const body = await cancelled.json();

  // Then it is cancelled as through the API, and no longer listed
  assert.equal(cancelled.status, 200, JSON.stringify(body));
  assert.equal(body.reward.status, "cancelled");
  const read = await call(t.app, `/v1/rewards/${encodeURIComponent("win 1")}`, { apiKey });
  assert.equal((await read.json()).status, "cancelled");
  const after = await (await getPage(t.app, rewardsPath(projectId), admin.jar)).text();
  assert.deepEqual(rowsOf(after, "open-rewards").map((row) => row.split(" | ")[1]), ["win-2"]);
  // And the game is told, and the audit log records who did it
  const events = await call(t.app, "/v1/events?types=reward_cancelled", { apiKey });
  const listed = (await events.json()).events as Array<{ key: string }>;
  assert.deepEqual(listed.map((e) => e.key), ["win 1"]);
  const audit = await Array.fromAsync(listAuditEntries(t.kv, projectId, { now: t.clock.now() }));
  const entries = audit.filter((e) => e.action === "reward_cancelled");
  assert.equal(entries.length, 1);
  assert.equal(entries[0]!.actor, admin.address);
  assert.deepEqual(entries[0]!.details, { key: "win 1", userId: 1002, amount: "0.5 SOL" });
  const auditPage =
    await (await getPage(t.app, `/dashboard/projects/${projectId}/audit`, admin.jar)).text();
  assert.ok(plain(auditPage).includes("win 1: 0.5 SOL for player 1002"), "on the audit log");

  // Cancelling it again answers the same and records nothing; a paying one cannot be cancelled
  assert.equal((await (await cancel(admin.jar, "win 1")).json()).reward.status, "cancelled");
  assert.equal(
    (await Array.fromAsync(listAuditEntries(t.kv, projectId, { now: t.clock.now() })))
      .filter((e) => e.action === "reward_cancelled").length,
    1,
  );
  await assertErrorCode(await cancel(admin.jar, "win-2"), 409, "reward_not_cancellable");
  await assertErrorCode(await cancel(admin.jar, "nope"), 404, "not_found");

  // And from the page's form, a browser lands back on the page with the outcome
  await putReward(t.kv, projectId, rewardRecord({ key: "win-3", createdAt: now }, now));
  const posted = await postForm(t.app, `${rewardsPath(projectId)}/cancel`, { key: "win-3" }, {
    jar: admin.jar,
  });
  assert.equal(posted.status, 303);
  assert.equal(posted.headers.get("location"), rewardsPath(projectId));
  const landed = await (await getPage(t.app, rewardsPath(projectId), admin.jar)).text();
  assert.ok(plain(landed).includes("Reward win-3 of player 1002 cancelled"), "the flash");
});

Deno.test("A reward leaves the rewards page in the commit that pays, cancels or expires it", async () => {
  const owner = createTestWallet();
  await using h = await startTxHarness({ developer: owner.address });
  await h.policy({ maxSolPerTransfer: "5" });
  const api = rewardsOf(h);
  // Signed in afresh each time: the clock moves past a session's life.
  const listed = async () => {
    const { jar } = await signInDeveloper(h.a.app, owner);
    const page = await getPage(h.a.app, rewardsPath(h.project.id), jar);
    return rowsOf(await page.text(), "open-rewards").map((row) => row.split(" | ")[1]);
  };
  // Given four rewards granted to players without a wallet, and one to a linked player (paid)
  await h.link(85);
  for (const [userId, key] of [[81, "r1"], [82, "r2"], [83, "r3"], [84, "r4"]] as const) {
    await okJson(await api.grant(solReward(userId, key)));
  }
  await okJson(await api.grant(solReward(85, "r5")));
  await rewardEvents(h);
  assert.equal((await api.read("r5")).status, "paid");
  assert.deepEqual(await listed(), ["r4", "r3", "r2", "r1"]);

  // When one is paid on link, one cancelled by the game, one expired
  await linkPlayer(h, 81);
  await okJson(await api.cancel("r2"));
  await okJson(await api.grant({ ...solReward(86, "r6"), expiresInDays: 1 }));
  h.a.clock.advance(DAY_MS);
  await rewardEvents(h);

  // Then only the one still held is listed
  assert.equal((await api.read("r1")).status, "paid");
  assert.equal((await api.read("r6")).status, "expired");
  assert.deepEqual(await listed(), ["r4", "r3"]);
});

Deno.test("A reward's cancel by an admin removed while it was on its way changes nothing", async () => {
  await using store = await startRemoteStore();
  await using app = await createTestApp({ kvPath: store.url });
  const owner = await signInDeveloper(app.app);
  const project = await createProjectAs(app.app, owner);
  const admin = await joinTeam(app.app, owner, project.id, "admin");
  const now = app.clock.now();
  await putReward(app.kv, project.id, rewardRecord({ key: "race-cancel", createdAt: now }, now));

  // Given: the admin's cancel read the reward and its member entry, its commit held at the store
  const hold = holdNextWrite(store, "race-cancel");
  const cancelling = postJson(app.app, `${rewardsPath(project.id)}/cancel`, {
    key: "race-cancel",
  }, { jar: admin.jar });
  await hold.held;

  // When: the owner removes the admin, then the cancel's commit goes on
  const removed = await postJson(
    app.app,
    `/dashboard/projects/${project.id}/members/${admin.address}/remove`,
    {},
    { jar: owner.jar },
  );
  assert.equal(removed.status, 200);
  hold.release();

  // Then: the cancel is refused, the reward is still held, and nothing is audited
  await assertErrorCode(await cancelling, 404, "project_not_found");
  assert.equal((await getReward(app.kv, project.id, "race-cancel")).value?.status, "held");
  const audit = await Array.fromAsync(
    listAuditEntries(app.kv, project.id, { now: app.clock.now() }),
  );
  assert.deepEqual(audit.filter((e) => e.action === "reward_cancelled"), []);
});
