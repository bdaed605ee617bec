import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import assert from "node:assert/strict";
import { call, createTestApp } from "../support/test_app.ts";
import { getPage, signInDeveloper } from "../support/dashboard.ts";
import { testTiming } from "../support/tx_harness.ts";
import { browse, CookieJar, toBase64 } from "../support/sign_in.ts";
import {
  DEMO_UNIVERSE_ID,
  exampleRecipient,
  registerSandboxConnectApp,
  seedDemoProject,
} from "../../tasks/demo_project.ts";
import { startChain } from "../../sandbox/chain/mod.ts";
import { startMessagingStandIn, startOauthStandIn } from "../../sandbox/roblox/mod.ts";
import { startWebhookReceiver } from "../../sandbox/webhooks/receiver.ts";
import { JobWorker } from "../../jobs/worker.ts";
import { drain } from "../support/events_harness.ts";
import { verifyWebhook } from "../../sdk/ts/src/verify_webhook.ts";

Deno.test("seedDemoProject() leaves a project ready for /v1, transactions, events and sign-in", async (t) => {
  // Given the sandbox world deno task dev starts
  const chain = await startChain({ slotMs: 10 });
  const oauth = await startOauthStandIn();
  const messaging = await startMessagingStandIn({ checkAccessToken: oauth.checkAccessToken });
  const webhooks = await startWebhookReceiver();
  await using _stop = {
    async [Symbol.asyncDispose]() {
      await webhooks.close();
      await oauth.close();
      await messaging.close();
      await chain.close();
    },
  };
  await using app = await createTestApp({
    config: {
      rpcUrls: { devnet: chain.rpcUrl, mainnet: chain.rpcUrl },
      publishUrl: messaging.url,
      idpUrl: oauth.idpUrl,
      webhooksAllowLoopback: true,
      robloxConnectApp: { clientId: "blocklink-connect", clientSecret: "sandbox-secret" },
    },
  });
  app.ctx.tx.timing = testTiming();
  registerSandboxConnectApp(oauth, app.ctx.config);

  // When
  const demo = await seedDemoProject(app.ctx, { chain, messaging, oauth, webhooks });
  const v1 = (path: string, json?: unknown) =>
    call(app.app, path, { apiKey: demo.apiKey, method: json ? "POST" : "GET", json });

  await t.step("the key answers the project, with its wallet and events on", async () => {
    const project = await (await v1("/v1/project")).json();
    assert.deepEqual(
      [project.name, project.cluster, project.walletAddress, project.events],
      ["Demo Game", "devnet", demo.walletAddress, true],
    );
  });
  await t.step("the wallet holds 10 SOL and 1,000 demo tokens", async () => {
    const balance = await (await v1(`/v1/wallets/${demo.walletAddress}/balance`)).json();
    assert.deepEqual(balance.sol, "10");
    const tokens = await (await v1(`/v1/wallets/${demo.walletAddress}/tokens?mint=${demo.mint}`))
      .json();
    assert.deepEqual([tokens.tokens[0].uiAmount, tokens.tokens[0].decimals], ["1000", 6]);
  });
  await t.step("SOL transfers, token transfers and mints fit the policy and land", async () => {
    const to = { address: await exampleRecipient() };
    for (
      const [kind, body] of [
        ["transfer-sol", { to, amount: "0.1", idempotencyKey: "sol-1" }],
        ["transfer-token", { to, mint: demo.mint, amount: "2", idempotencyKey: "token-1" }],
        ["mint-token", { to, mint: demo.mint, amount: "5", idempotencyKey: "mint-1" }],
      ] as const
    ) {
      const result = await (await v1(`/v1/tx/${kind}`, body)).json();
      assert.deepEqual([kind, result.status, result.error], [kind, "confirmed", null]);
    }
  });
  await t.step(
    "the settled transactions reach the sandbox's webhook receiver, signed",
    async () => {
      await drain(new JobWorker(app.ctx, { owner: "playground" }));
      const got = webhooks.received().filter((r) => r.path === "/demo");
      assert.deepEqual(got.map((r) => JSON.parse(r.body).type), ["tx", "tx", "tx"]);
      const now = Math.floor(app.clock.now() / 1000);
      for (const r of got) {
        await verifyWebhook(
          demo.webhook!.secret,
          new Headers(r.headers),
          r.body,
          now,
        );
      }
    },
  );
  await t.step("a test ping reaches the messaging stand-in", async () => {
    const dev = await signInAs(demo.developerKey);
    const before = messaging.inbox().length;
    const res = await browse(app.app, `/dashboard/projects/${demo.project.id}/ping`, {
      method: "POST",
      jar: dev,
      headers: { accept: "application/json" },
    });
    assert.deepEqual(await res.json(), { ok: true });
    assert.deepEqual(messaging.inbox().length, before + 1);
  });
  await t.step("players can sign in with Roblox on its linking page", async () => {
    const page = await (await browse(app.app, `/link/${demo.project.slug}`)).text();
    assert.ok(page.includes("/auth/idp/start?next="));
    const start = await browse(app.app, `/auth/idp/start?next=/link/${demo.project.slug}`);
    const back = await oauth.authorizeAutomatically(start.headers.get("location")!, 1001);
    assert.ok(back.startsWith("http://localhost:8000/auth/idp/callback?code="), back);
  });
  await t.step(
    "the printed developer key signs in to the dashboard and sees the demo",
    async () => {
      const dev = await signInAs(demo.developerKey);
      const list = await (await getPage(app.app, "/dashboard", dev)).text();
      assert.ok(list.includes("Demo Game"));
      const other = await signInDeveloper(app.app);
      const theirs = await (await getPage(app.app, "/dashboard", other.jar)).text();
      assert.ok(!theirs.includes("Demo Game"));
    },
  );

  await t.step(
    "the game connects with Roblox through the service's app, nothing to configure",
    async () => {
      const dev = await signInAs(demo.developerKey);
      const start = await getPage(
        app.app,
        `/dashboard/projects/${demo.project.id}/roblox/connect`,
        dev,
      );
      const back = new URL(
        await oauth.authorizeAutomatically(start.headers.get("location")!, 1001, {
          universeIds: [DEMO_UNIVERSE_ID],
        }),
      );
      const done = await getPage(app.app, `${back.pathname}${back.search}`, dev);
      assert.equal(done.status, 303);
      const res = await browse(app.app, `/dashboard/projects/${demo.project.id}/ping`, {
        method: "POST",
        jar: dev,
        headers: { accept: "application/json" },
      });
      assert.deepEqual(await res.json(), { ok: true });
      assert.deepEqual(
        messaging.attempts().map((a) => [a.universeId, a.via]).at(-1),
        [DEMO_UNIVERSE_ID, "oauth"],
      );
    },
  );

  /** Signs in with the printed 64-byte key, as the sandbox key form does. */
  async function signInAs(developerKey: string) {
    const secret = base58.decode(developerKey).slice(0, 32);
    const address = base58.encode(ed25519.getPublicKey(secret));
    assert.deepEqual(address, demo.developerAddress);
    const jar = new CookieJar();
    const challenge = await browse(app.app, "/auth/wallet/challenge", { jar, json: { address } });
    const { message } = await challenge.json();
    const signature = toBase64(ed25519.sign(new TextEncoder().encode(message), secret));
    await browse(app.app, "/auth/wallet/verify", { jar, json: { signature } });
    return jar;
  }
});

Deno.test("deno task dev starts, serves the demo and a chunked body, and prints no warning", async () => {
  // Given: dev.ts as `deno task dev` runs it, with nothing configured but free ports
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--unstable-cron", "dev.ts"],
    env: { PORT: String(port), CHAIN_PORT: "0" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output: string[] = [];
  const read = (stream: ReadableStream<Uint8Array<ArrayBuffer>>) =>
    (async () => {
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) output.push(chunk);
    })();
  const drained = Promise.all([read(child.stdout), read(child.stderr)]);
  try {
    const apiKey = await waitFor(() => output.join("").match(/API key\s+(\S+)/)?.[1]);
    const base = `http://localhost:${port}`;

    // When: a JSON body sent without a length (chunked), as some clients do, then a printed call
    const chunked = await fetch(`${base}/v1/players/wallets`, {
      method: "POST",
      headers: { "x-api-key": apiKey, "content-type": "application/json" },
      body: ReadableStream.from([new TextEncoder().encode('{"userIds":[1001]}')]),
    });
    assert.deepEqual(await chunked.json(), { wallets: { "1001": null } });
    const project = await fetch(`${base}/v1/project`, { headers: { "x-api-key": apiKey } });
    assert.deepEqual(project.status, 200);
    await project.body?.cancel();
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await drained;
  }

  // Then: the playground's own lines, and no warning: none of Deno's (request.signal's legacy
  // abort, ignored build scripts) and no warn-level log line
  const text = output.join("");
  assert.ok(text.includes("Blocklink playground"), text);
  assert.doesNotMatch(text, /warn|legacy|deprecat|request\.signal/i);
});

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  listener.close();
  return (listener.addr as Deno.NetAddr).port;
}

async function waitFor<T>(probe: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("dev.ts did not print its demo project in time");
}

Deno.test("deno task dev serves on loopback only: its demo allows webhooks to loopback", async () => {
  // Given a non-loopback address of this machine, and a free port
  const outside = Deno.networkInterfaces().find((i) =>
    i.family === "IPv4" && !i.address.startsWith("127.")
  );
  assert.ok(outside, "this machine has a non-loopback IPv4 address to try");
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = probe.addr.port;
  probe.close();

  // When the playground starts
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--unstable-cron", "dev.ts"],
    cwd: new URL("../..", import.meta.url),
    env: { PORT: String(port), CHAIN_PORT: "0" },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  await using _stop = {
    async [Symbol.asyncDispose]() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
  let printed = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stdout) {
    printed += decoder.decode(chunk, { stream: true });
    if (printed.includes("Try it:")) break;
  }
  assert.match(printed, /Blocklink playground/);

  // Then it answers on loopback, and nothing listens on the machine's other address
  const health = await fetch(`http://127.0.0.1:${port}/health`);
  await health.body?.cancel();
  assert.equal(health.status, 200);
  await assert.rejects(
    Deno.connect({ hostname: outside.address, port }),
    Deno.errors.ConnectionRefused,
  );
});
