import { type Address, generateKeyPairSigner } from "@solana/kit";
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
  startChainDashboard,
} from "../support/dashboard.ts";
import { drain } from "../support/events_harness.ts";
import { listDeliveries } from "../../kv/deliveries.ts";
import { linkWallet } from "../../kv/links.ts";
import { airdrop } from "../../sandbox/chain/fixtures.ts";

const UNIVERSE = "4242";
const PUBLISH_KEY = "dashboard-test-publishing-key";
// A fresh address (a program id such as Vote111... cannot receive a plain transfer).
const PLAYER_WALLET = (await generateKeyPairSigner()).address;

Deno.test("From the dashboard: managed wallet, its balance, a transaction, linked players, test ping and the event log", async (t) => {
  // Given the sandbox cluster, the messaging stand-in, and the app reading and publishing to them
  await using world = await startChainDashboard({
    publishKey: PUBLISH_KEY,
    universeId: UNIVERSE,
    owner: "dashboard-test",
  });
  const { chain, standIn, app, worker } = world;
  const dev = await signInDeveloper(app.app);
  const project = await createProjectAs(app.app, dev, { name: "Chain Game" });
  const key = await createKeyAs(app.app, dev, project.id);
  const base = `/dashboard/projects/${project.id}`;
  let wallet = "";

  await t.step("create the managed wallet, once", async () => {
    const res = await postJson(app.app, `${base}/wallet`, undefined, { jar: dev.jar });
    assert.deepEqual(res.status, 201);
    wallet = (await res.json()).walletAddress;
    const v1 = await (await call(app.app, "/v1/project", { apiKey: key.key })).json();
    assert.deepEqual(v1.walletAddress, wallet);
    const again = await postJson(app.app, `${base}/wallet`, undefined, { jar: dev.jar });
    await assertErrorCode(again, 409, "wallet_exists");
  });

  await t.step("the overview shows the wallet and its SOL balance", async () => {
    await airdrop(chain, wallet as Address, 2_500_000_000n);
    const page = await (await getPage(app.app, base, dev.jar)).text();
    assert.ok(page.includes(wallet));
    assert.ok(/data-testid="wallet-balance">2.5 SOL</.test(page), "balance shown");
  });

  await t.step("a test ping with events off says so", async () => {
    const res = await postJson(app.app, `${base}/ping`, undefined, { jar: dev.jar });
    const body = await res.json();
    assert.deepEqual([res.status, body.ok, body.status], [200, false, null]);
    assert.deepEqual(standIn.attempts().length, 0);
  });

  await t.step("a test ping reaches the messaging stand-in once events are on", async () => {
    await postJson(app.app, `${base}/settings`, {
      universeId: UNIVERSE,
      publishingKey: PUBLISH_KEY,
    }, {
      jar: dev.jar,
    });
    const res = await postJson(app.app, `${base}/ping`, undefined, { jar: dev.jar });
    assert.deepEqual(await res.json(), { ok: true });
    const ping = standIn.inbox().find((m) => (m.data as { type?: string })?.type === "ping");
    const id = (ping?.data as { id?: string }).id;
    assert.deepEqual(ping?.data, { v: 1, type: "ping", id, at: app.clock.now() });
    assert.ok(id && /^[1-9][0-9]*$/.test(id), "the ping's feed id");
    assert.deepEqual(ping?.topic, "svc");
  });

  await t.step("a transaction sent with the key is listed with an explorer link", async () => {
    await postJson(app.app, `${base}/policy`, { maxSolPerTransfer: "1" }, { jar: dev.jar });
    await linkWallet(app.kv, project.id, {
      userId: 42,
      address: PLAYER_WALLET,
      now: app.clock.now(),
    });
    const tx = await call(app.app, "/v1/tx/transfer-sol", {
      method: "POST",
      apiKey: key.key,
      json: { to: { userId: 42 }, amount: "0.25", idempotencyKey: "reward-1" },
    });
    const result = await tx.json();
    assert.deepEqual([tx.status, result.status, result.error], [200, "confirmed", null]);
    const page = await (await getPage(app.app, `${base}/transactions`, dev.jar)).text();
    assert.ok(
      page.includes(">confirmed<") && page.includes("transfer-sol") && page.includes("0.25 SOL"),
    );
    assert.ok(page.includes("Player 42"));
    const explorer =
      `https://explorer.solana.com/tx/${result.signature}?cluster=custom&amp;customUrl=${
        encodeURIComponent(chain.rpcUrl)
      }`;
    assert.ok(page.includes(explorer), "signature linked to the explorer for the cluster");
  });

  await t.step("linked players are listed and searchable by user id or address", async () => {
    const list = await (await getPage(app.app, `${base}/players`, dev.jar)).text();
    assert.ok(list.includes(PLAYER_WALLET) && list.includes(">42<"));
    const byId = await (await getPage(app.app, `${base}/players?q=42`, dev.jar)).text();
    assert.ok(byId.includes(PLAYER_WALLET));
    const byAddress = await (await getPage(app.app, `${base}/players?q=${PLAYER_WALLET}`, dev.jar))
      .text();
    assert.ok(byAddress.includes(">42<"));
    const none = await (await getPage(app.app, `${base}/players?q=43`, dev.jar)).text();
    assert.ok(none.includes("No linked player matches.") && !none.includes(PLAYER_WALLET));
    const bad = await (await getPage(app.app, `${base}/players?q=hello`, dev.jar)).text();
    assert.ok(
      bad.includes("Enter a Roblox user ID (digits, no leading zero) or a Solana wallet address."),
    );
  });

  await t.step("a refused ping shows the platform's answer on the page", async () => {
    standIn.failNext("401");
    const res = await postForm(app.app, `${base}/ping`, {}, { jar: dev.jar });
    assert.deepEqual(res.headers.get("location"), `${base}/settings#events`);
    const page = await (await getPage(app.app, `${base}/settings`, dev.jar)).text();
    assert.ok(page.includes("Roblox answered HTTP 401."));
  });

  await t.step("the event log lists deliveries with the answers", async () => {
    await drain(worker);
    const page = await (await getPage(app.app, `${base}/events`, dev.jar)).text();
    assert.ok(page.includes(">ping<") && page.includes(">delivered<") && page.includes("HTTP 401"));
    assert.ok(page.includes(">tx<"), "the transaction's event was delivered too");
    const deliveries = await listDeliveries(app.kv, project.id);
    for (const { eventId } of deliveries) {
      assert.ok(
        page.includes(`<td data-label="Event ID"><div class="mono">${eventId}</div></td>`),
        `event id ${eventId} shown`,
      );
    }
  });

  await t.step("the transactions page filters by status without JavaScript", async () => {
    const failed = await (await getPage(app.app, `${base}/transactions?status=failed`, dev.jar))
      .text();
    assert.ok(failed.includes("No transactions match.") && !failed.includes("0.25 SOL"));
    assert.ok(failed.includes('<option value="failed" selected'));
    const confirmed = await (await getPage(
      app.app,
      `${base}/transactions?status=confirmed`,
      dev.jar,
    )).text();
    assert.ok(confirmed.includes("0.25 SOL") && !confirmed.includes("Load more"));
  });

  await t.step("past 50 transactions, Load more is a plain link to the older ones", async () => {
    app.clock.advance(1); // newer than the first transaction
    for (let batch = 0; batch < 5; batch++) {
      await Promise.all(Array.from({ length: 10 }, (_, i) =>
        call(app.app, "/v1/tx/transfer-sol", {
          method: "POST",
          apiKey: key.key,
          json: {
            to: { userId: 42 },
            amount: "0.001",
            idempotencyKey: `small-${batch * 10 + i}`,
          },
        }).then((res) => res.body?.cancel())));
    }
    const rows = (html: string) => html.split('data-label="Status"').length - 1;
    const loadMore = (html: string) =>
      html.match(/href="([^"]+)" data-testid="tx-load-more"/)?.[1]?.replaceAll("&amp;", "&");
    const newest = await (await getPage(
      app.app,
      `${base}/transactions?status=confirmed`,
      dev.jar,
    )).text();
    assert.deepEqual(rows(newest), 50);
    assert.ok(!newest.includes("0.25 SOL"), "the oldest is not on the first page");
    const next = loadMore(newest);
    assert.ok(next?.startsWith(`${base}/transactions?status=confirmed&after=`), next);
    const older = await (await getPage(app.app, next!, dev.jar)).text();
    assert.deepEqual(rows(older), 1);
    assert.ok(older.includes("0.25 SOL") && older.includes("Back to the newest"));
    assert.deepEqual(loadMore(older), undefined);
  });

  await t.step(
    "a batch's payouts are listed one a row, marked as sharing their transaction",
    async () => {
      app.clock.advance(1); // newer than the 50 above, so on the first page
      const res = await call(app.app, "/v1/tx/batch", {
        method: "POST",
        apiKey: key.key,
        json: {
          items: [0.002, 0.003, 0.004].map((amount, i) => ({
            kind: "transfer-sol",
            to: { userId: 42 },
            amount: String(amount),
            idempotencyKey: `batch-${i}`,
          })),
        },
      });
      const { items } = await res.json();
      const signature = items[0].result.signature;
      const page = await (await getPage(app.app, `${base}/transactions`, dev.jar)).text();
      for (const amount of ["0.002 SOL", "0.003 SOL", "0.004 SOL"]) {
        assert.ok(
          page.includes(amount),
        );
      }
      assert.deepEqual(page.split(`title="${signature}"`).length - 1, 3);
      assert.deepEqual(page.split("One of 3 payouts of a batch in this transaction").length - 1, 3);
    },
  );
  await worker.stop();
});

Deno.test("With managed wallets off, creating one answers wallets_unavailable and the overview says why", async () => {
  await using t = await createTestApp({ config: { walletProvider: "none" } });
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);

  // When
  const res = await postJson(t.app, `/dashboard/projects/${project.id}/wallet`, undefined, {
    jar: dev.jar,
  });

  // Then
  await assertErrorCode(res, 503, "wallets_unavailable");
  const form = await postForm(t.app, `/dashboard/projects/${project.id}/wallet`, {}, {
    jar: dev.jar,
  });
  assert.deepEqual(form.headers.get("location"), `/dashboard/projects/${project.id}`);
  const page = await (await getPage(t.app, `/dashboard/projects/${project.id}`, dev.jar)).text();
  assert.ok(page.includes("Managed wallets are not turned on"));
  assert.ok(page.includes("Managed wallets are turned off on this service"));
});

Deno.test("The overview still renders when the balance cannot be read", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  await postJson(t.app, `/dashboard/projects/${project.id}/wallet`, undefined, { jar: dev.jar });

  // When the cluster's RPC endpoint refuses connections
  const res = await getPage(t.app, `/dashboard/projects/${project.id}`, dev.jar);

  // Then
  assert.deepEqual(res.status, 200);
  assert.ok((await res.text()).includes("Could not be read right now"));
});
