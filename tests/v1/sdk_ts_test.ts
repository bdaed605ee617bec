/**
 * The TypeScript SDK (sdk/ts): its generated types are current, it runs the client rules' shared
 * cases (sdk/client_rules.json, which the Luau SDK runs too), wrong calls do not type-check, and
 * it works against the real service (the Luau SDK's world: the app with its worker on a real
 * port behind a front that can fail requests on purpose, the sandbox cluster, the Roblox
 * stand-ins), in Deno and, built with tsc, in Node.
 */
import assert from "node:assert/strict";
import { generateTsTypes, SCHEMA_FILE } from "../../scripts/generate_ts_types.ts";
import {
  Blocklink,
  HOLD_JITTER_SECONDS,
  holdUntil,
  idempotencyKey,
  MAX_ATTEMPTS,
  RETRY_DELAYS_MS,
  shouldRetry,
} from "../../sdk/ts/src/mod.ts";
import { type LuauWorld, startLuauWorld } from "../support/luau_world.ts";

const SDK = new URL("../../sdk/ts/", import.meta.url).pathname;

Deno.test("sdk/ts/src/schema.ts is what `deno task sdk:types` generates from the document", async () => {
  const current = await Deno.readTextFile(SCHEMA_FILE);
  assert.ok(
    current === await generateTsTypes(),
    "sdk/ts/src/schema.ts is stale: run `deno task sdk:types` and commit it",
  );
});

Deno.test("The TypeScript SDK runs the client rules' shared cases (sdk/client_rules.json)", async () => {
  const rules = JSON.parse(await Deno.readTextFile(`${SDK}../client_rules.json`));
  assert.deepEqual(MAX_ATTEMPTS, rules.retry.attempts);
  assert.deepEqual(RETRY_DELAYS_MS, rules.retry.delaysSeconds.map((s: number) => s * 1000));
  for (const { status, code, retry } of rules.retry.cases) {
    assert.equal(shouldRetry(status, code), retry, `${status} ${code}`);
  }
  assert.deepEqual(HOLD_JITTER_SECONDS, rules.hold.jitterSeconds);
  for (const { code, now, from, jitter } of rules.hold.cases) {
    if (from === null) {
      assert.equal(holdUntil(code, now * 1000), null, code);
      continue;
    }
    // The jitter's two ends.
    assert.equal(holdUntil(code, now * 1000, () => 0), from * 1000, `${code} at ${now}`);
    const latest = holdUntil(code, now * 1000, () => 0.999_999)!;
    assert.ok(latest > from * 1000 && latest < (from + jitter) * 1000, `${code}: ${latest}`);
  }
  for (const { parts, key } of rules.idempotencyKey) {
    assert.equal(idempotencyKey(...parts), key, JSON.stringify(parts));
    assert.ok(new TextEncoder().encode(key).length <= 128);
  }
  assert.throws(() => idempotencyKey(), TypeError);
  assert.throws(() => idempotencyKey("round", 1.5), /part 2 must be a string or a whole number/);
  assert.equal(idempotencyKey("round", 42n), "round:42");
});

Deno.test("Wrong calls of the TypeScript SDK do not type-check; right ones do", async (t) => {
  await t.step("sdk/ts/tests/wrong_calls.ts passes deno check", async () => {
    const result = await check(`${SDK}tests/wrong_calls.ts`);
    assert.equal(result.code, 0, result.output);
  });
  await t.step("the check fails when a marked call type-checks after all", async () => {
    // Marking a right call as wrong must fail: the marks are checked, not ignored.
    const source = await Deno.readTextFile(`${SDK}tests/wrong_calls.ts`);
    const marked = source.replace(
      "  await blocklink.getPlayerWallet(1001);",
      "  // @ts-expect-error\n  await blocklink.getPlayerWallet(1001);",
    );
    assert.notEqual(marked, source);
    const copy = `${SDK}tests/_marked_${crypto.randomUUID()}.ts`;
    await Deno.writeTextFile(copy, marked);
    try {
      const result = await check(copy);
      assert.notEqual(result.code, 0);
      assert.match(result.output, /Unused '@ts-expect-error' directive/);
    } finally {
      await Deno.remove(copy);
    }
  });
});

async function check(file: string): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["check", file],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code, output: decoder.decode(stdout) + decoder.decode(stderr) };
}

Deno.test("The TypeScript SDK against the real service, in Deno and in Node", async (t) => {
  await using world = await startLuauWorld();
  const baseUrl = world.info.baseUrl;
  const blocklink = new Blocklink({ baseUrl, apiKey: world.apiKey });
  const control = (path: string, body?: unknown) =>
    fetch(`${baseUrl}/_test/${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).then((res) => res.json());
  const requests = async () => {
    const log = await control("requests") as Array<{ path: string; at: number; status: number }>;
    await fetch(`${baseUrl}/_test/requests`, { method: "DELETE" }).then((r) => r.body?.cancel());
    return log;
  };

  await t.step("the key from BLOCKLINK_API_KEY, never shown", async () => {
    Deno.env.set("BLOCKLINK_API_KEY", world.apiKey);
    try {
      const fromEnv = new Blocklink({ baseUrl });
      const project = await fromEnv.getProject();
      assert.ok(project.ok && project.data.id === world.project.id, JSON.stringify(project));
      for (
        const shown of [
          Deno.inspect(fromEnv, { showHidden: true, depth: 10 }),
          JSON.stringify(fromEnv),
        ]
      ) {
        assert.ok(!shown.includes(world.apiKey), shown);
      }
    } finally {
      Deno.env.delete("BLOCKLINK_API_KEY");
    }
    assert.throws(() => new Blocklink({ baseUrl }), /BLOCKLINK_API_KEY/);
    const wrong = await new Blocklink({ baseUrl, apiKey: "blk_live_wrong" }).getProject();
    assert.deepEqual([wrong.ok, wrong.status, !wrong.ok && wrong.code], [
      false,
      401,
      "unauthorized",
    ]);
  });

  await t.step("reads: every answer typed as the document says", async () => {
    const health = await blocklink.getHealth();
    assert.ok(health.ok && health.data.ok);
    const balance = await blocklink.getBalance(world.info.walletAddress);
    assert.ok(balance.ok && BigInt(balance.data.lamports) > 0n, JSON.stringify(balance));
    const tokens = await blocklink.getTokens(world.info.walletAddress, {
      mint: world.info.foreignMint,
    });
    assert.ok(tokens.ok && tokens.data.tokens[0]?.amount === "1000", JSON.stringify(tokens));
    const nobody = await blocklink.getPlayerWallet(999_999);
    assert.deepEqual(nobody.ok && nobody.data, { userId: 999_999, address: null, linkedAt: null });
  });

  await t.step("a reward: held for a player without a wallet, paid when they link", async () => {
    const key = idempotencyKey("ts-reward", 2005);
    const body = {
      userId: 2005,
      kind: "transfer-sol" as const,
      amount: "0.01",
      idempotencyKey: key,
    };
    const granted = await blocklink.grantReward(body);
    assert.ok(granted.ok && granted.data.status === "held", JSON.stringify(granted));
    assert.equal(granted.data.waitingFor, "wallet");
    const listed = await blocklink.listPlayerRewards(2005);
    assert.ok(listed.ok && listed.data.rewards[0]?.key === key, JSON.stringify(listed));
    const conflict = await blocklink.grantReward({ ...body, amount: "0.02" });
    assert.ok(!conflict.ok && conflict.status === 409 && conflict.code === "idempotency_conflict");
    const address = (await control("link", { userId: 2005 })).address;
    // The link's job pays it on the service's worker: follow the feed to its reward_paid (from
    // the feed's start: it may be paid before a reader at the feed's end would start).
    const controller = new AbortController();
    const paidEvents = blocklink.events({
      after: "0",
      types: ["reward_paid"],
      intervalMs: 100,
      signal: controller.signal,
    });
    for await (const event of paidEvents) if (event.key === key) controller.abort();
    const reward = await blocklink.getReward(key);
    assert.ok(reward.ok && reward.data.status === "paid", JSON.stringify(reward));
    assert.equal(reward.data.recipient, address);
    const cancel = await blocklink.cancelReward(key);
    assert.ok(!cancel.ok && cancel.status === 409 && cancel.code === "reward_not_cancellable");
    const payment = await blocklink.getTx(reward.data.txKey);
    assert.ok(payment.ok && payment.data.status === "confirmed", JSON.stringify(payment));
  });

  await t.step(
    "a payout: paid once per key, waited for, and its errors typed by status",
    async () => {
      const address = (await control("link", { userId: 2001 })).address;
      const key = idempotencyKey("ts-round", 1, 2001);
      const first = await blocklink.transferSol({
        to: { userId: 2001 },
        amount: "0.01",
        idempotencyKey: key,
      });
      assert.ok(first.ok, JSON.stringify(first));
      assert.equal(first.data.recipient, address);
      const again = await blocklink.transferSol({
        to: { userId: 2001 },
        amount: "0.01",
        idempotencyKey: key,
      });
      assert.ok(again.ok && again.data.signature === first.data.signature, "the same attempt");
      const final = await blocklink.waitForTx(key, { timeoutMs: 20_000, pollMs: 200 });
      assert.ok(final.ok && final.data.status === "confirmed", JSON.stringify(final));
      const unlinked = await blocklink.transferSol({
        to: { userId: 2002 },
        amount: "0.01",
        idempotencyKey: idempotencyKey("ts-round", 1, 2002),
      });
      assert.ok(!unlinked.ok && unlinked.status === 404);
      assert.equal(unlinked.code, "wallet_not_linked");
      // A batch: the key already paid answers as its request, the unlinked player as an error
      const batch = await blocklink.transferBatch({
        items: [
          { kind: "transfer-sol", to: { userId: 2001 }, amount: "0.01", idempotencyKey: key },
          {
            kind: "transfer-sol",
            to: { userId: 2002 },
            amount: "0.01",
            idempotencyKey: idempotencyKey("ts-round", 2, 2002),
          },
        ],
      });
      assert.ok(batch.ok, JSON.stringify(batch));
      assert.equal(batch.data.items[0]?.result?.signature, first.data.signature);
      assert.equal(batch.data.items[1]?.error?.code, "wallet_not_linked");
    },
  );

  await t.step(
    "retries: 5xx and no answer three times, 0.5 then 1.5 s apart; limits at once",
    async () => {
      await requests();
      await control("fail", { count: 2, status: 503, path: "/v1/project" });
      const recovered = await blocklink.getProject();
      const log = await requests();
      assert.ok(recovered.ok);
      assert.equal(log.length, 3);
      assert.ok(
        log[1]!.at - log[0]!.at >= 0.5 && log[2]!.at - log[1]!.at >= 1.5,
        JSON.stringify(log),
      );

      await control("fail", { count: 3, status: 0, drop: true, path: "/v1/project" });
      const dropped = await blocklink.getProject();
      assert.deepEqual([dropped.ok, !dropped.ok && dropped.code, (await requests()).length], [
        false,
        "network_error",
        3,
      ]);

      await control("fail", { count: 3, status: 502, path: "/v1/project" });
      const proxy = await blocklink.getProject();
      assert.ok(
        !proxy.ok && proxy.code === "http_error" && proxy.httpStatus === 502,
        JSON.stringify(proxy),
      );
      assert.equal((await requests()).length, 3);

      await control("fail", {
        count: 1,
        status: 429,
        code: "recipient_rate_limited",
        path: "/v1/tx/",
      });
      const limited = await blocklink.transferSol({
        to: { userId: 2001 },
        amount: "0.01",
        idempotencyKey: idempotencyKey("ts-limited"),
      });
      assert.ok(!limited.ok && limited.status === 429 && limited.code === "recipient_rate_limited");
      assert.equal((await requests()).length, 1, "not retried");
    },
  );

  await t.step(
    "quota back-off: after rate_limited, waitForTx's polls wait for the next minute",
    async () => {
      const held = new Blocklink({ baseUrl, apiKey: world.apiKey });
      await control("fail", { count: 3, status: 429, code: "rate_limited", path: "/v1/project" });
      const limited = await held.getProject();
      assert.ok(!limited.ok && limited.code === "rate_limited");
      assert.equal((await requests()).length, 3, "the caller's own call is retried");
      const waited = await held.waitForTx(idempotencyKey("ts-round", 1, 2001), {
        timeoutMs: 1_000,
      });
      assert.ok(!waited.ok && waited.code === "timeout", JSON.stringify(waited));
      assert.deepEqual(await requests(), [], "no status poll while held");
      const direct = await held.getTx(idempotencyKey("ts-round", 1, 2001));
      assert.ok(direct.ok, "the caller's own calls are never held");
      await requests();
    },
  );

  await t.step("the event feed: each event once, in order, from a saved cursor on", async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    const reader = blocklink.events({ intervalMs: 200, signal: controller.signal });
    const reading = (async () => {
      for await (const event of reader) {
        seen.push(`${event.id}:${event.type}`);
        if (seen.length === 2) controller.abort();
      }
    })();
    // Once the reader has read the feed's position (its first page), the link comes after it
    while (reader.cursor() === null) await new Promise((resolve) => setTimeout(resolve, 5));
    await control("link", { userId: 2003 });
    await control("ping", {});
    await reading;
    assert.deepEqual(seen.map((s) => s.split(":")[1]), ["wallet_linked", "ping"]);
    const cursor = reader.cursor();
    assert.equal(cursor, seen[1]!.split(":")[0]);

    // Read on from the saved cursor, only pings: the next ping, nothing before it.
    await control("link", { userId: 2004 });
    await control("ping", {});
    const pings = blocklink.events({ after: cursor!, types: ["ping"], intervalMs: 200 });
    for await (const event of pings) {
      assert.equal(event.type, "ping");
      assert.ok(Number(event.id) === Number(cursor) + 2, `${event.id} after ${cursor}`);
      assert.equal(typeof event.at, "number");
      break;
    }
  });

  await t.step("a cursor the service refuses is dropped with a warning", async () => {
    const warnings: string[] = [];
    const controller = new AbortController();
    const reader = blocklink.events({
      after: "999999",
      intervalMs: 100,
      signal: controller.signal,
      onWarning: (message) => {
        warnings.push(message);
        controller.abort();
      },
    });
    for await (const _ of reader) break;
    assert.match(warnings[0] ?? "", /refused cursor 999999/);
    assert.equal(reader.cursor(), null);
  });

  await t.step("in Node, built with tsc", () => nodeSmoke(world));
});

/** Installs the package's pinned dependencies, builds it and runs a Node script against the world. */
async function nodeSmoke(world: LuauWorld): Promise<void> {
  for (const args of [["ci", "--no-audit", "--no-fund"], ["run", "build"]]) {
    const npm = await new Deno.Command("npm", { args, cwd: SDK, stdout: "piped", stderr: "piped" })
      .output();
    const decoder = new TextDecoder();
    assert.equal(npm.code, 0, `npm ${args.join(" ")}: ${decoder.decode(npm.stderr)}`);
  }
  const node = await new Deno.Command("node", {
    args: [`${SDK}tests/node_smoke.mjs`],
    env: { BLOCKLINK_URL: world.info.baseUrl, BLOCKLINK_API_KEY: world.apiKey },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  assert.equal(node.code, 0, decoder.decode(node.stderr));
  const out = JSON.parse(decoder.decode(node.stdout));
  assert.deepEqual(out, {
    project: world.project.id,
    unlinked: [false, 404, "wallet_not_linked"],
    key: "round-reward:42:1001",
    keyShown: false,
    webhook: ["wallet_linked", false],
  });
}
