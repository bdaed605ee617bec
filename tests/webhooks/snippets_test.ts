// The README's verification snippets are the files in sdk/webhooks/, and they verify real
// deliveries: the TypeScript one in this process, the Luau one under Lune, and the Lune receiver
// as a real process that a delivery reaches through the system's resolver (`localhost`).
import assert from "node:assert/strict";
import { ManualClock } from "../../core/clock.ts";
import { recordEvents } from "../../lib/events/record.ts";
import { rotateWebhookSecret } from "../../lib/webhooks/endpoints.ts";
import { resolveWithDns } from "../../lib/webhooks/runtime.ts";
import { listWebhookDeliveries } from "../../kv/webhook_deliveries.ts";
import { verifyWebhook } from "../../sdk/ts/src/verify_webhook.ts";
import { luauTools } from "../support/luau_world.ts";
import { until } from "../support/assertions.ts";
import type { ReceivedWebhook } from "../../sandbox/webhooks/receiver.ts";
import { startWebhooksHarness, type WebhooksHarness } from "../support/webhooks_harness.ts";

const README = Deno.readTextFileSync(new URL("../../README.md", import.meta.url));
const snippet = (path: string) => Deno.readTextFileSync(new URL(`../../${path}`, import.meta.url));
const LINKED = {
  type: "wallet_linked" as const,
  userId: 42,
  address: "Vote111111111111111111111111111111111111111",
};

Deno.test("The README shows the verification snippets as they are in sdk/webhooks/", () => {
  for (const path of ["sdk/ts/src/verify_webhook.ts", "sdk/webhooks/lune_receiver.luau"]) {
    assert.ok(README.includes(snippet(path).trim()), `README.md shows ${path} word for word`);
  }
});

// One real delivery, signed by a rotated endpoint's two secrets; with the secrets that sign it.
async function rotatedDelivery(
  h: WebhooksHarness,
): Promise<{ got: ReceivedWebhook; current: string; previous: string }> {
  const { endpoint, secret: previous } = await h.addEndpoint();
  const { secret: current } = await rotateWebhookSecret(h.t.ctx, {
    projectId: h.project.id,
    endpointId: endpoint.id,
    dropPrevious: false,
    actor: "dev",
  });
  await recordEvents(h.t.ctx, h.project.id, [LINKED]);
  await h.drain();
  const [got] = h.receiver.received();
  assert.ok(got);
  assert.equal(got.headers["webhook-signature"]!.split(" ").length, 2, "both secrets sign");
  return { got, current, previous };
}

Deno.test("The TypeScript snippet accepts a real delivery with either secret of a rotation, and refuses forgeries", async () => {
  await using h = await startWebhooksHarness();
  const { got, current, previous } = await rotatedDelivery(h);
  const now = Number(got.headers["webhook-timestamp"]);
  const headers = new Headers(got.headers);
  for (const secret of [current, previous]) {
    assert.deepEqual((await verifyWebhook(secret, headers, got.body, now)).type, "wallet_linked");
  }
  const other = `whsec_${btoa("y".repeat(32))}`;
  await assert.rejects(verifyWebhook(other, headers, got.body, now), /No valid webhook signature/);
  await assert.rejects(verifyWebhook(current, headers, `${got.body} `, now), /No valid/);
  await assert.rejects(verifyWebhook(current, headers, got.body, now + 301), /5 minutes/);
  headers.delete("webhook-id");
  await assert.rejects(verifyWebhook(current, headers, got.body, now), /Missing webhook headers/);
});

Deno.test("The Luau verifier, under Lune, accepts a real delivery and refuses what was changed", async () => {
  await using h = await startWebhooksHarness();
  const { got, current, previous } = await rotatedDelivery(h);
  const now = Number(got.headers["webhook-timestamp"]);
  const base = { secret: current, headers: got.headers, body: got.body, now };
  const { ["webhook-id"]: _dropped, ...withoutId } = got.headers;
  const cases = [
    base,
    { ...base, secret: previous },
    { ...base, body: got.body.replace("42", "43") },
    { ...base, secret: `whsec_${btoa("z".repeat(32))}` },
    { ...base, now: now + 600 },
    { ...base, headers: withoutId },
    { ...base, headers: { ...got.headers, "webhook-id": `${got.headers["webhook-id"]}0` } },
  ];
  const file = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(file, JSON.stringify(cases));
    const { code, output } = await luauTools([
      "lune",
      "run",
      "tests/webhooks/verify_webhook.luau",
      file,
    ]);
    assert.equal(code, 0, output);
    const results = JSON.parse(output.trim().split("\n").at(-1)!);
    assert.deepEqual(results, [
      { ok: true },
      { ok: true },
      { ok: false, problem: "no valid signature" },
      { ok: false, problem: "no valid signature" },
      { ok: false, problem: "webhook timestamp is too far from now" },
      { ok: false, problem: "missing webhook headers" },
      { ok: false, problem: "no valid signature" },
    ]);
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("The Lune receiver example gets real deliveries at localhost, resolved by the system, and refuses a forgery", async () => {
  // Given the real resolver and a clock at the real time (Lune checks the timestamp against its own)
  await using h = await startWebhooksHarness({ clock: new ManualClock(Date.now()) });
  h.t.ctx.webhooks.resolve = resolveWithDns;
  const port = freePort();
  const url = `http://localhost:${port}/blocklink`;
  const { secret } = await h.addEndpoint(url);
  const lune = new Deno.Command("sh", {
    args: ["scripts/luau_tools.sh", "lune", "run", "sdk/webhooks/lune_receiver.luau"],
    env: { BLOCKLINK_WEBHOOK_SECRET: secret, PORT: String(port) },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const reading = (async () => {
    for await (const chunk of lune.stdout.pipeThrough(new TextDecoderStream())) {
      lines.push(...chunk.split("\n").filter((line) => line !== ""));
    }
  })();
  try {
    await until(() => lines.some((line) => line.startsWith("listening")), 15_000, "Lune to listen");
    // When the service records an event
    const [event] = await recordEvents(h.t.ctx, h.project.id, [LINKED]);
    await h.drain();
    // Then Lune verified it and handled it
    const [delivery] = (await listWebhookDeliveries(h.t.kv, h.project.id, { limit: 1 })).deliveries;
    assert.deepEqual([delivery?.status, delivery?.responseStatus], ["delivered", 200]);
    await until(() => lines.length >= 2, 5_000, "Lune to print the event");
    assert.deepEqual(JSON.parse(lines[1]!).id, event!.id);
    // And a request without a valid signature is refused
    const forged = await fetch(url, {
      method: "POST",
      headers: {
        "webhook-id": "x",
        "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
        "webhook-signature": "v1,AAAA",
      },
      body: "{}",
    });
    assert.deepEqual([forged.status, await forged.text()], [401, "no valid signature"]);
  } finally {
    lune.kill();
    await lune.status;
    await reading.catch(() => {});
    await lune.stderr.cancel();
  }
});

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}
