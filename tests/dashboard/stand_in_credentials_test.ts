/**
 * Stand-in credentials (`lib/projects/sandbox_roblox.ts`): on a service on this machine, one click
 * on the settings page registers an OAuth app and a publishing key with the Roblox stand-ins and
 * saves them, so a project the newcomer created links players and publishes events.
 */
import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import {
  createProjectAs,
  getPage,
  postForm,
  postJson,
  signInDeveloper,
} from "../support/dashboard.ts";
import { createTestApp } from "../support/test_app.ts";
import { signInPlayer, startLinkWorld } from "../support/sign_in.ts";
import { getProject } from "../../kv/projects.ts";
import { startMessagingStandIn } from "../../sandbox/roblox/mod.ts";

Deno.test("POST /dashboard/projects/:id/settings/stand-in makes a new project link players and publish events", async () => {
  const messaging = await startMessagingStandIn();
  await using world = await startLinkWorld({ config: { publishUrl: messaging.url } });
  const { t } = world;
  try {
    const dev = await signInDeveloper(t.app);
    const created = await createProjectAs(t.app, dev);
    const settings =
      await (await getPage(t.app, `/dashboard/projects/${created.id}/settings`, dev.jar))
        .text();
    assert.ok(settings.includes('data-testid="use-stand-in"'), "the settings page offers them");

    // When the developer clicks "Use stand-in credentials"
    const res = await postForm(t.app, `/dashboard/projects/${created.id}/settings/stand-in`, {}, {
      jar: dev.jar,
    });
    assert.equal(res.status, 303);
    const page = await (await getPage(t.app, res.headers.get("location")!, dev.jar)).text();
    assert.ok(page.includes("Stand-in credentials saved"), "the flash says so");
    assert.ok(page.includes('data-testid="events-on"'), "events are on");

    // Then a player signs in with Roblox on the project's linking page
    const project = (await getProject(t.kv, created.id))!;
    const { location } = await signInPlayer(world, project, 1001);
    assert.equal(location, `/link/${project.slug}`);
    // And the test event reaches the messaging stand-in under the saved key
    const ping = await postJson(t.app, `/dashboard/projects/${created.id}/ping`, {}, {
      jar: dev.jar,
    });
    assert.equal(ping.status, 200, await ping.clone().text());
    const [message] = await messaging.waitForMessages(1);
    assert.equal(message!.universeId, project.settings.universeId);
  } finally {
    await messaging.close();
  }
});

Deno.test("POST /dashboard/projects/:id/settings/stand-in saves nothing the stand-ins did not take", async () => {
  // The IDP is nowhere (the test config's port 9): nothing may be saved.
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const created = await createProjectAs(t.app, dev);
  const res = await postJson(t.app, `/dashboard/projects/${created.id}/settings/stand-in`, {}, {
    jar: dev.jar,
  });
  await assertErrorCode(res, 502, "stand_in_unavailable");
  const project = (await getProject(t.kv, created.id))!;
  assert.equal(project.settings.oauthClientId, null);
  assert.equal(project.settings.publishingKeyEnc ?? null, null);
});
