import type { DeliverEventJob } from "../../lib/events/job_payloads.ts";
import assert from "node:assert/strict";
import { drain, startEventsHarness } from "../support/events_harness.ts";
import {
  browse,
  createTestWallet,
  linkWith,
  type LinkWorld,
  signInPlayer,
} from "../support/sign_in.ts";
import { TEST_BASE_URL } from "../support/test_app.ts";
import { type OauthStandIn, startOauthStandIn } from "../../sandbox/roblox/oauth.ts";
import { encryptOauthClientSecret } from "../../lib/auth/oauth_app.ts";
import { updateProject } from "../../kv/projects.ts";
import { eventSeqKey } from "../../kv/event_feed.ts";
import type { JobRecord } from "../../kv/jobs.ts";
import { linkByUserKey } from "../../kv/links.ts";
import { linkPlayerWallet, unlinkPlayerWallet } from "../../lib/link/linking.ts";

Deno.test("Link events reach the game's servers through the job worker and the messaging service", async () => {
  const idp = await startOauthStandIn();
  try {
    await scenario(idp);
  } finally {
    await idp.close();
  }
});

async function scenario(idp: OauthStandIn) {
  // Given a project with events on and its own OAuth app.
  await using h = await startEventsHarness({ config: { idpUrl: idp.idpUrl } });
  idp.registerClient({
    clientId: "game",
    clientSecret: "game-secret",
    redirectUris: [`${TEST_BASE_URL}/auth/idp/callback`],
  });
  const oauthClientSecretEnc = await encryptOauthClientSecret(h.a.ctx, h.project.id, "game-secret");
  const project = (await updateProject(h.a.kv, h.project.id, (p) => ({
    ...p,
    settings: { ...p.settings, oauthClientId: "game", oauthClientSecretEnc },
  })))!;
  const world = { t: h.a, app: h.a.app, clock: h.a.clock, idp } as unknown as LinkWorld;
  const alice = (await signInPlayer(world, project, 1001)).jar;
  const bob = (await signInPlayer(world, project, 1002)).jar;
  const wallet = createTestWallet();

  // When Alice links, Bob takes the wallet, then Bob unlinks.
  assert.deepEqual((await linkWith(world, project, alice, wallet)).status, 200);
  assert.deepEqual((await linkWith(world, project, bob, wallet)).status, 200);
  const unlink = await browse(world.app, `/api/link/${project.slug}/unlink`, {
    jar: bob,
    method: "POST",
  });
  assert.deepEqual(unlink.status, 200);
  assert.deepEqual(h.standIn.inbox().length, 0, "requests only queue their events");
  await drain(h.a.worker);

  // Then each event arrived once, as v1 messages.
  const received = h.standIn.inbox().map((m) => m.data as Record<string, unknown>);
  const key = (e: Record<string, unknown>) => `${e.v}:${e.type}:${e.userId}:${e.address}`;
  assert.deepEqual(received.map(key).sort(), [
    `1:wallet_linked:1001:${wallet.address}`,
    `1:wallet_linked:1002:${wallet.address}`,
    `1:wallet_unlinked:1001:${wallet.address}`,
    `1:wallet_unlinked:1002:${wallet.address}`,
  ]);
}

Deno.test("linkPlayerWallet() and unlinkPlayerWallet() write their events' delivery jobs in the link change's own atomic commit", async (t) => {
  // A job written in the change's commit carries that commit's versionstamp; one queued after it
  // (where a crash in between loses it) carries a later one.
  await using h = await startEventsHarness();
  const wallet = createTestWallet();
  const projectId = h.project.id;
  const deliveryJob = async (type: string, userId: number) => {
    for await (const entry of h.a.kv.list<JobRecord>({ prefix: ["jobs"] })) {
      const payload = entry.value.payload as DeliverEventJob;
      if (
        payload.type === "deliver_event" && payload.event.type === type &&
        (payload.event as { userId: number }).userId === userId
      ) return entry.versionstamp;
    }
    return null;
  };

  await t.step("a link that takes the wallet from another player: both events", async () => {
    await linkPlayerWallet(h.a.ctx, projectId, { userId: 1, address: wallet.address });
    await linkPlayerWallet(h.a.ctx, projectId, { userId: 2, address: wallet.address });
    const link = await h.a.kv.get(linkByUserKey(projectId, 2));
    assert.deepEqual(await deliveryJob("wallet_linked", 2), link.versionstamp);
    assert.deepEqual(await deliveryJob("wallet_unlinked", 1), link.versionstamp);
  });

  await t.step("an unlink: its job lands with the feed counter the same commit moved", async () => {
    await unlinkPlayerWallet(h.a.ctx, projectId, 2);
    assert.deepEqual((await h.a.kv.get(linkByUserKey(projectId, 2))).versionstamp, null);
    const counter = await h.a.kv.get(eventSeqKey(projectId));
    assert.deepEqual(
      counter.value,
      4,
      "1 event for the first link, 2 for the second, 1 for the unlink",
    );
    assert.deepEqual(await deliveryJob("wallet_unlinked", 2), counter.versionstamp);
  });
});
