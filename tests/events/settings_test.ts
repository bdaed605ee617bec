import assert from "node:assert/strict";
import { getProject } from "../../kv/projects.ts";
import { decryptSecretText } from "../../lib/crypto/encryption.ts";
import { ApiError } from "../../core/api_error.ts";
import {
  type EventSettingsInput,
  saveEventSettings,
  validateEventSettings,
} from "../../lib/events/settings.ts";
import { call, createTestApp, createTestProject } from "../support/test_app.ts";

function refusal(input: EventSettingsInput): string {
  try {
    validateEventSettings(input);
  } catch (e) {
    assert.ok(e instanceof ApiError);
    assert.deepEqual([e.status, e.code], [400, "invalid_settings"]);
    return e.message;
  }
  throw new Error("Expected invalid_settings");
}

Deno.test("validateEventSettings() lists each bad field with its problem", async (t) => {
  await t.step("every field wrong at once", () => {
    assert.equal(
      refusal({ universeId: "place/123", publishingKey: "has space", topic: "bad topic!" }),
      "universeId: must contain digits only (the universe ID, not a place ID); " +
        "publishingKey: must be one line of printable characters without spaces; " +
        "topic: must be 1 to 80 letters, digits, - or _",
    );
  });

  await t.step("limits", () => {
    assert.equal(refusal({ universeId: "1".repeat(21) }), "universeId: must be at most 20 digits");
    assert.equal(
      refusal({ topic: "t".repeat(81) }),
      "topic: must be 1 to 80 letters, digits, - or _",
    );
    assert.equal(
      refusal({ publishingKey: "k".repeat(4_097) }),
      "publishingKey: must be at most 4096 characters",
    );
    assert.equal(
      refusal({ publishingKey: "k", clearPublishingKey: true }),
      "publishingKey: cannot be both given and cleared",
    );
    assert.equal(refusal({ universeId: 12 as never }), "universeId: must be text");
  });

  await t.step("packing and the cap on messages a minute", () => {
    const cap = "messagesPerMinute: must be a whole number from 1 to 5000, or empty for no cap";
    for (const bad of ["0", "5001", "1.5", "-3", "ten", 0, 2.5, 10_000]) {
      assert.equal(refusal({ messagesPerMinute: bad }), cap, `${bad} is refused`);
    }
    assert.equal(refusal({ packEvents: "yes" }), "packEvents: must be true or false");
    assert.deepEqual(
      validateEventSettings({ packEvents: "true", messagesPerMinute: " 80 " }),
      { packEvents: true, messagesPerMinute: 80 },
    );
    assert.deepEqual(
      validateEventSettings({ packEvents: false, messagesPerMinute: "" }),
      { packEvents: false, messagesPerMinute: null },
    );
    assert.deepEqual(validateEventSettings({ messagesPerMinute: 5_000 }), {
      messagesPerMinute: 5_000,
    });
  });

  await t.step("valid input, trimmed, with the defaults and keep rules", () => {
    assert.deepEqual(
      validateEventSettings({ universeId: " 123 ", publishingKey: " key ", topic: "a-Z_9" }),
      { universeId: "123", publishingKey: "key", topic: "a-Z_9" },
    );
    assert.deepEqual(validateEventSettings({ topic: "t".repeat(80) }), { topic: "t".repeat(80) });
    assert.deepEqual(
      validateEventSettings({ universeId: "", publishingKey: "", topic: "" }),
      { universeId: null, topic: "svc" },
    );
    assert.deepEqual(validateEventSettings({ clearPublishingKey: true }), { publishingKey: null });
    assert.deepEqual(validateEventSettings({}), {});
  });
});

Deno.test("saveEventSettings() stores the key encrypted, keeps it when left empty, and clears it on request", async () => {
  await using t = await createTestApp();
  const { project, apiKey } = await createTestProject(t);
  const events = async () => (await (await call(t.app, "/v1/project", { apiKey })).json()).events;
  assert.equal(await events(), false);

  // When: both settings are saved.
  const saved = await saveEventSettings(t.ctx, project.id, {
    universeId: "123",
    publishingKey: "secret-key",
  });

  // Then
  assert.deepEqual(saved, {
    universeId: "123",
    topic: "svc",
    publishingKeySet: true,
    events: true,
    packEvents: false,
    messagesPerMinute: null,
  });
  const stored = (await getProject(t.kv, project.id))!.settings;
  assert.ok(stored.publishingKeyEnc && !stored.publishingKeyEnc.includes("secret-key"));
  assert.equal(
    await decryptSecretText(t.ctx.keys, stored.publishingKeyEnc, {
      purpose: "publishing_key",
      context: project.id,
    }),
    "secret-key",
  );
  await assert.rejects(() =>
    decryptSecretText(t.ctx.keys, stored.publishingKeyEnc!, {
      purpose: "publishing_key",
      context: "other-project",
    })
  );
  assert.equal(await events(), true);

  // When: saved again with an empty key field and a new topic.
  const again = await saveEventSettings(t.ctx, project.id, { publishingKey: "", topic: "mine" });
  assert.deepEqual([again.publishingKeySet, again.topic], [true, "mine"]);
  assert.equal(
    (await getProject(t.kv, project.id))!.settings.publishingKeyEnc,
    stored.publishingKeyEnc,
  );

  // When: the key is cleared.
  const cleared = await saveEventSettings(t.ctx, project.id, { clearPublishingKey: true });
  assert.deepEqual([cleared.publishingKeySet, cleared.events], [false, false]);
  assert.equal(await events(), false);
});

Deno.test("saveEventSettings() refuses bad input and unknown projects without saving", async () => {
  await using t = await createTestApp();
  const { project } = await createTestProject(t);
  await assert.rejects(
    () => saveEventSettings(t.ctx, project.id, { universeId: "abc", publishingKey: "k" }),
    (e) => e instanceof ApiError && e.code === "invalid_settings",
  );
  assert.deepEqual((await getProject(t.kv, project.id))!.settings.publishingKeyEnc, null);
  await assert.rejects(
    () => saveEventSettings(t.ctx, "missing", { universeId: "1" }),
    (e) => e instanceof ApiError && e.status === 404 && e.code === "project_not_found",
  );
});
