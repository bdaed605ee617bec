import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import { call, createTestApp } from "../support/test_app.ts";
import {
  createKeyAs,
  createProjectAs,
  getPage,
  postForm,
  postJson,
  signInDeveloper,
} from "../support/dashboard.ts";
import { browse } from "../support/sign_in.ts";
import { getProject } from "../../kv/projects.ts";
import { getOauthApp } from "../../lib/auth/oauth_app.ts";
import { decryptSecretText } from "../../lib/crypto/encryption.ts";

Deno.test("POST /dashboard/projects/:id/settings saves every setting; secrets are encrypted and never answered", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev, { name: "Before" });
  const key = await createKeyAs(t.app, dev, project.id);
  const linkBefore = await (await browse(t.app, `/link/${project.slug}`)).text();
  assert.ok(linkBefore.includes("has not set up Roblox sign-in yet"));

  // When
  const res = await postJson(t.app, `/dashboard/projects/${project.id}/settings`, {
    name: "After",
    oauthClientId: "1234567890123456789",
    oauthClientSecret: "RBX-oauth-secret-value",
    universeId: "4242",
    publishingKey: "open-cloud-key-value",
    topic: "game_events",
  }, { jar: dev.jar });

  // Then
  assert.deepEqual(res.status, 200);
  const text = await res.text();
  assert.ok(!text.includes("RBX-oauth-secret-value") && !text.includes("open-cloud-key-value"));
  assert.deepEqual(JSON.parse(text), {
    settings: {
      name: "After",
      oauth: {
        clientId: "1234567890123456789",
        clientSecretSet: true,
        redirectUri: "http://localhost:8000/auth/idp/callback",
      },
      connectApp: {
        clientId: null,
        clientSecretSet: false,
        redirectUri: "http://localhost:8000/dashboard/roblox/callback",
        serviceApp: false,
      },
      events: {
        universeId: "4242",
        topic: "game_events",
        publishingKeySet: true,
        events: true,
        packEvents: false,
        messagesPerMinute: null,
      },
      lowSolBalance: null,
    },
  });
  const stored = (await getProject(t.kv, project.id))!;
  assert.deepEqual(stored.slug, project.slug, "the slug does not follow the name");
  assert.ok(
    !JSON.stringify(stored).includes("secret-value") &&
      !JSON.stringify(stored).includes("key-value"),
  );
  assert.deepEqual(await getOauthApp(t.ctx, stored), {
    clientId: "1234567890123456789",
    clientSecret: "RBX-oauth-secret-value",
  });
  assert.deepEqual(
    await decryptSecretText(t.ctx.keys, stored.settings.publishingKeyEnc!, {
      purpose: "publishing_key",
      context: project.id,
    }),
    "open-cloud-key-value",
  );
  const v1 = await (await call(t.app, "/v1/project", { apiKey: key.key })).json();
  assert.deepEqual({ name: v1.name, events: v1.events }, { name: "After", events: true });
  const linkAfter = await (await browse(t.app, `/link/${project.slug}`)).text();
  assert.ok(linkAfter.includes("/auth/idp/start?next="), "players can now sign in");
});

Deno.test("Settings fields left out keep their value; blanks keep secrets, clear IDs and reset the topic", async (t) => {
  await using app = await createTestApp();
  const dev = await signInDeveloper(app.app);
  const project = await createProjectAs(app.app, dev);
  const save = async (body: unknown) => {
    const res = await postJson(app.app, `/dashboard/projects/${project.id}/settings`, body, {
      jar: dev.jar,
    });
    assert.deepEqual(res.status, 200);
    return (await res.json()).settings;
  };
  await save({
    oauthClientId: "client",
    oauthClientSecret: "secret",
    universeId: "1",
    publishingKey: "k",
    topic: "t",
  });

  await t.step("an empty body changes nothing", async () => {
    const settings = await save({});
    assert.deepEqual(settings.events, {
      universeId: "1",
      topic: "t",
      publishingKeySet: true,
      events: true,
      packEvents: false,
      messagesPerMinute: null,
    });
    assert.deepEqual(settings.oauth.clientSecretSet, true);
  });
  await t.step("blank secrets keep the saved ones", async () => {
    const settings = await save({ oauthClientSecret: "", publishingKey: "" });
    assert.deepEqual([settings.oauth.clientSecretSet, settings.events.publishingKeySet], [
      true,
      true,
    ]);
  });
  await t.step("clear flags remove the secrets", async () => {
    const settings = await save({ clearOauthClientSecret: true, clearPublishingKey: true });
    assert.deepEqual([settings.oauth.clientSecretSet, settings.events.publishingKeySet], [
      false,
      false,
    ]);
    assert.deepEqual(settings.events.events, false);
  });
  await t.step("blank IDs clear them and a blank topic is svc again", async () => {
    const settings = await save({ oauthClientId: "", universeId: "", topic: "" });
    assert.deepEqual([settings.oauth.clientId, settings.events.universeId, settings.events.topic], [
      null,
      null,
      "svc",
    ]);
  });
});

Deno.test("Invalid settings answer invalid_settings naming each field, and nothing is saved", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev, { name: "Stable" });

  // When
  const res = await postJson(t.app, `/dashboard/projects/${project.id}/settings`, {
    name: "",
    oauthClientId: "has space",
    oauthClientSecret: "fine-secret",
    clearPublishingKey: "maybe",
    universeId: "12a",
    topic: "no spaces please",
  }, { jar: dev.jar });

  // Then
  const { error } = await assertErrorCode(res, 400, "invalid_settings");
  assert.deepEqual(
    error.message,
    [
      "name: must not be empty",
      "oauthClientId: must be one word of printable characters",
      "universeId: must contain digits only (the universe ID, not a place ID)",
      "clearPublishingKey: must be true or false",
      "topic: must be 1 to 80 letters, digits, - or _",
    ].join("; "),
  );
  const stored = (await getProject(t.kv, project.id))!;
  assert.deepEqual(stored.name, "Stable");
  assert.deepEqual(stored.settings.oauthClientSecretEnc, null, "a valid field is not saved either");
});

Deno.test("The settings page saves each form by plain post and shows the result beside it", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  const settingsPage = `/dashboard/projects/${project.id}/settings`;

  // When the OAuth form is posted
  const res = await postForm(t.app, `/dashboard/projects/${project.id}/settings`, {
    form: "oauth",
    oauthClientId: "987654321",
    oauthClientSecret: "form-secret",
  }, { jar: dev.jar });

  // Then
  assert.deepEqual([res.status, res.headers.get("location")], [303, settingsPage]);
  const page = await (await getPage(t.app, settingsPage, dev.jar)).text();
  assert.ok(page.includes("Settings saved"));
  assert.ok(
    page.includes("http://localhost:8000/auth/idp/callback"),
    "the redirect URI to register",
  );
  assert.ok(page.includes('value="987654321"') && !page.includes("form-secret"));
  assert.ok(page.includes("Saved: leave blank to keep it"));

  // When the events form is refused
  const bad = await postForm(t.app, `/dashboard/projects/${project.id}/settings`, {
    form: "events",
    universeId: "place-123",
    publishingKey: "typed-key",
    topic: "ok",
  }, { jar: dev.jar });
  assert.deepEqual(bad.headers.get("location"), settingsPage);
  const refused = await (await getPage(t.app, settingsPage, dev.jar)).text();
  assert.ok(refused.includes("Universe ID: must contain digits only"));
  assert.ok(refused.includes('value="place-123"'), "what was typed is kept");
  assert.ok(!refused.includes("typed-key"), "but never a secret");
  assert.deepEqual((await getProject(t.kv, project.id))!.settings.universeId, null);
});

Deno.test("Renaming keeps the linking URL; a form checkbox clears a secret", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev, { name: "Old Name" });
  await postJson(t.app, `/dashboard/projects/${project.id}/settings`, {
    oauthClientId: "c",
    oauthClientSecret: "s",
  }, { jar: dev.jar });

  // When
  await postForm(t.app, `/dashboard/projects/${project.id}/settings`, {
    form: "general",
    name: "New Name",
  }, { jar: dev.jar });
  await postForm(t.app, `/dashboard/projects/${project.id}/settings`, {
    form: "oauth",
    oauthClientId: "c",
    oauthClientSecret: "",
    clearOauthClientSecret: "true",
  }, { jar: dev.jar });

  // Then
  const stored = (await getProject(t.kv, project.id))!;
  assert.deepEqual([stored.name, stored.slug], ["New Name", "old-name"]);
  assert.deepEqual([stored.settings.oauthClientId, stored.settings.oauthClientSecretEnc], [
    "c",
    null,
  ]);
});

Deno.test("The events form saves packing and the messages-a-minute cap, and refuses a bad cap by field", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  const settingsPage = `/dashboard/projects/${project.id}/settings`;

  // When: the form is posted with the box ticked (its hidden "false" comes first).
  await postForm(t.app, settingsPage, {
    form: "events",
    packEvents: ["false", "true"],
    messagesPerMinute: "80",
  }, { jar: dev.jar });

  // Then
  const saved = (await getProject(t.kv, project.id))!.settings;
  assert.deepEqual([saved.packEvents, saved.messagesPerMinute], [true, 80]);
  const page = await (await getPage(t.app, settingsPage, dev.jar)).text();
  assert.ok(
    page.includes('value="80"') &&
      /data-testid="pack-events"[^>]*checked|checked[^>]*data-testid="pack-events"/.test(page),
  );

  // When: a bad cap is posted as JSON, with the box unticked.
  const res = await postJson(t.app, settingsPage, { packEvents: "false", messagesPerMinute: "0" }, {
    jar: dev.jar,
  });

  // Then: refused by field, nothing saved.
  const { error } = await assertErrorCode(res, 400, "invalid_settings");
  assert.equal(
    error.message,
    "messagesPerMinute: must be a whole number from 1 to 5000, or empty for no cap",
  );
  const kept = (await getProject(t.kv, project.id))!.settings;
  assert.deepEqual([kept.packEvents, kept.messagesPerMinute], [true, 80]);

  // When: the form clears the cap and unticks the box.
  await postForm(t.app, settingsPage, {
    form: "events",
    packEvents: "false",
    messagesPerMinute: "",
  }, { jar: dev.jar });
  const cleared = (await getProject(t.kv, project.id))!.settings;
  assert.deepEqual([cleared.packEvents, cleared.messagesPerMinute], [false, null]);
});
