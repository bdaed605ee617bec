// The usage page: figures checked against traffic the test itself sends, and the low-balance
// warnings of the overview and the usage page.
import { type Address, generateKeyPairSigner } from "@solana/kit";
import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import { call, createTestApp, type TestApp } from "../support/test_app.ts";
import {
  createKeyAs,
  createProjectAs,
  getPage,
  postJson,
  signInDeveloper,
  startChainDashboard,
  type TestDeveloper,
} from "../support/dashboard.ts";
import { drain } from "../support/events_harness.ts";
import { linkWallet } from "../../kv/links.ts";
import { airdrop, createFundedSigner, createMint, mintTo } from "../../sandbox/chain/fixtures.ts";
import { lowBalanceWarnings, TX_COST_LAMPORTS } from "../../lib/projects/low_balance.ts";
import { emptyPolicy } from "../../kv/policy.ts";

/** The text of the element with `data-testid="<id>"` (first match), tags stripped. */
function textOf(html: string, id: string): string | null {
  const text = html.match(new RegExp(`data-testid="${id}"[^>]*>([\\s\\S]*?)</(span|p|div)>`))?.[1];
  return text === undefined ? null : text.replace(/<[^>]+>/g, "").replace(/\s+/g, " ").trim();
}

/** The low-balance notices' text. */
function warningsOf(html: string): string {
  const start = html.indexOf('data-testid="low-balance"');
  if (start < 0) return "";
  const end = html.indexOf("</div></div>", start);
  return html.slice(start, end).replace(/<[^>]+>/g, "").replace(/\s+/g, " ");
}

/** The tooltips of one chart's bars: `HH:MM UTC: ...`. */
function barsOf(html: string, chart: string): string[] {
  const start = html.indexOf(`data-testid="${chart}"`);
  const end = html.indexOf("</figure>", start);
  return [...html.slice(start, end).matchAll(/<g><title>([^<]+)<\/title>/g)].map(([, title]) =>
    title ?? ""
  );
}

function sendMany(t: TestApp, apiKey: string, n: number): Promise<Response[]> {
  return Promise.all(Array.from({ length: n }, () => call(t.app, "/v1/project", { apiKey })));
}

async function usagePage(t: TestApp, dev: TestDeveloper, projectId: string): Promise<string> {
  const res = await getPage(t.app, `/dashboard/projects/${projectId}/usage`, dev.jar);
  assert.deepEqual(res.status, 200);
  return await res.text();
}

Deno.test("The usage page counts exactly the requests the test sends, per minute and per UTC day", async (t) => {
  await using app = await createTestApp();
  const dev = await signInDeveloper(app.app);
  const project = await createProjectAs(app.app, dev, { name: "Counted" });
  const { key } = await createKeyAs(app.app, dev, project.id);
  const other = await createProjectAs(app.app, dev, { name: "Other" });
  const otherKey = await createKeyAs(app.app, dev, other.id);

  await t.step("requests of three minutes, a refused key and another project's", async () => {
    // Given: 12:00 UTC (the test clock's start)
    await sendMany(app, key, 7);
    await call(app.app, "/v1/project", { apiKey: "sk_wrong" });
    await sendMany(app, otherKey.key, 4);
    app.clock.advance(60_000);
    await call(app.app, "/v1/players/wallets", {
      method: "POST",
      apiKey: key,
      json: { userIds: [1] },
    });
    await call(app.app, "/v1/players/abc/wallet", { apiKey: key });
    await call(app.app, "/v1/players/5/wallet", { apiKey: key });
    app.clock.advance(30 * 60_000);
    await sendMany(app, key, 2);

    // Then
    const html = await usagePage(app, dev, project.id);
    assert.deepEqual(textOf(html, "requests-today-text"), "12 of 100,000");
    assert.deepEqual(textOf(html, "requests-minute-text"), "2 of 600");
    const bars = barsOf(html, "chart-requests");
    assert.deepEqual(bars.length, 60);
    assert.deepEqual(bars.filter((b) => !b.endsWith(": 0 requests")), [
      "12:00 UTC: 7 requests",
      "12:01 UTC: 3 requests",
      "12:31 UTC: 2 requests",
    ]);
  });

  await t.step(
    "a new UTC day starts from zero; refused requests count; old minutes leave",
    async () => {
      // Given: 00:00 UTC the next day, where minute slot 0 held 12:00's count
      app.clock.set(Date.UTC(2026, 10, 22, 0, 0, 10));
      const answers = await sendMany(app, key, 605);
      assert.deepEqual(answers.filter((r) => r.status === 429).length, 5);

      // Then (the 12-hour dashboard session ended meanwhile: sign in again)
      const html = await usagePage(app, await signInDeveloper(app.app, dev.wallet), project.id);
      assert.deepEqual(textOf(html, "requests-today-text"), "605 of 100,000");
      assert.deepEqual(textOf(html, "requests-minute-text"), "605 of 600");
      assert.deepEqual(
        barsOf(html, "chart-requests").filter((b) => !b.endsWith(": 0 requests")),
        ["00:00 UTC: 605 requests"],
      );
    },
  );
});

Deno.test("The usage page shows transactions, hourly budgets and event deliveries as they happened", async (t) => {
  // Given: the sandbox cluster, the messaging stand-in, a project with a funded wallet and events on
  await using world = await startChainDashboard({
    publishKey: "pub-key",
    universeId: "99",
    owner: "usage-test",
  });
  const { chain, standIn, app, worker } = world;
  const dev = await signInDeveloper(app.app);
  const project = await createProjectAs(app.app, dev, { name: "Busy" });
  const { key } = await createKeyAs(app.app, dev, project.id);
  const base = `/dashboard/projects/${project.id}`;
  const wallet = (await (await postJson(app.app, `${base}/wallet`, undefined, { jar: dev.jar }))
    .json()).walletAddress as Address;
  await airdrop(chain, wallet, 600_000_000n);
  const issuer = await createFundedSigner(chain);
  const mint = await createMint(chain, { payer: issuer, decimals: 2 });
  // A mint of the managed wallet's own: holding none of it is no problem.
  const own = await createMint(chain, { payer: issuer, decimals: 0, mintAuthority: wallet });
  await mintTo(chain, {
    payer: issuer,
    mint,
    authority: issuer,
    owner: wallet,
    amount: 200n,
    decimals: 2,
  });
  await postJson(app.app, `${base}/settings`, { universeId: "99", publishingKey: "pub-key" }, {
    jar: dev.jar,
  });
  const saved = await postJson(app.app, `${base}/policy`, {
    maxSolPerTransfer: "1",
    allowedMints: [{ mint, maxPerTransaction: "5" }, { mint: own, maxPerTransaction: "5" }],
    hourlyBudgets: [{ asset: "SOL", amount: "1" }],
  }, { jar: dev.jar });
  assert.deepEqual(saved.status, 200);
  const player = (await generateKeyPairSigner()).address;
  await linkWallet(app.kv, project.id, { userId: 9, address: player, now: app.clock.now() });
  const send = async (path: string, json: Record<string, unknown>) => {
    const res = await call(app.app, `/v1/tx/${path}`, { method: "POST", apiKey: key, json });
    return (await res.json()).status;
  };

  await t.step(
    "two transfers confirm, one fails; their events are delivered, a later one dropped",
    async () => {
      assert.deepEqual(
        await send("transfer-sol", { to: { userId: 9 }, amount: "0.1", idempotencyKey: "a" }),
        "confirmed",
      );
      assert.deepEqual(
        await send("transfer-sol", { to: { userId: 9 }, amount: "0.15", idempotencyKey: "b" }),
        "confirmed",
      );
      // The wallet holds 2 tokens: sending 3 is refused by the network in simulation.
      assert.deepEqual(
        await send("transfer-token", { to: { userId: 9 }, mint, amount: "3", idempotencyKey: "c" }),
        "failed",
      );
      await drain(worker);
      standIn.failNext("401");
      assert.deepEqual(
        await send("transfer-sol", { to: { userId: 9 }, amount: "0.05", idempotencyKey: "d" }),
        "confirmed",
      );
      await drain(worker);
      assert.deepEqual(
        standIn.inbox().filter((m) => (m.data as { type: string }).type === "tx").length,
        3,
      );
    },
  );

  await t.step("the usage page shows them", async () => {
    const html = await usagePage(app, dev, project.id);
    assert.deepEqual(textOf(html, "tx-day-text"), "3 of 1,000");
    assert.ok(textOf(html, "tx-failed")!.startsWith("1 failed"));
    assert.deepEqual(
      barsOf(html, "chart-tx").filter((b) => !b.endsWith(": 0 sent, 0 failed")),
      ["12:00 UTC: 3 sent, 1 failed"],
    );
    assert.deepEqual(textOf(html, "budget-0-text"), "0.3 of 1 in the rolling hour");
    assert.deepEqual(textOf(html, "events-totals"), "Last 24 hours: 3 delivered, 1 dropped.");
    assert.deepEqual(
      barsOf(html, "chart-events").filter((b) => !b.endsWith(": 0 delivered, 0 dropped")),
      ["12:00 UTC: 3 delivered, 1 dropped"],
    );
  });

  await t.step(
    "low balance: the overview and the usage page warn for SOL and the token",
    async () => {
      // About 0.3 SOL left: below the 1 SOL hourly budget plus fees; 2 tokens: below the 5 maximum.
      for (const path of [base, `${base}/usage`]) {
        const html = await (await getPage(app.app, path, dev.jar)).text();
        const warning = warningsOf(html);
        assert.ok(warning.includes("plus fees for 10 transactions"), warning);
        assert.ok(warning.includes("less than 1.1 SOL"), warning);
        // The token has no metadata: its shortened mint and decimals name it
        assert.match(
          warning,
          /holds 2 of \S+ \(2 decimals\), less than 5 of \S+ \(2 decimals\) \(its per-transaction maximum\)/,
        );
        assert.deepEqual(warning.split("Low balance:").length - 1, 2, "none for its own mint");
      }
    },
  );

  await t.step("a threshold saved in the settings replaces the estimate", async () => {
    const bad = await postJson(app.app, `${base}/settings`, { lowSolBalance: "0.1234567891" }, {
      jar: dev.jar,
    });
    await assertErrorCode(bad, 400, "invalid_settings");
    const res = await postJson(app.app, `${base}/settings`, { lowSolBalance: "0.01" }, {
      jar: dev.jar,
    });
    assert.deepEqual((await res.json()).settings.lowSolBalance, "0.01");
    const html = await (await getPage(app.app, base, dev.jar)).text();
    const warning = warningsOf(html);
    assert.ok(!warning.includes(" SOL, "), `no SOL warning above the threshold: ${warning}`);
    assert.match(warning, /less than 5 of \S+ \(2 decimals\) \(its per-transaction maximum\)/);
    await postJson(app.app, `${base}/settings`, { lowSolBalance: "1000" }, { jar: dev.jar });
    const again = warningsOf(await (await getPage(app.app, base, dev.jar)).text());
    assert.ok(again.includes("less than 1000 SOL (your warning threshold in Settings)"), again);
  });
});

Deno.test("lowBalanceWarnings() needs the hourly SOL budget plus fees for the last hour's transactions, rounded up", () => {
  const policy = { ...emptyPolicy(), hourlyBudgets: [{ asset: "SOL", amount: "2" }] };
  const holdings = { lamports: 2_000_000_000n, tokens: new Map() };
  const mintable = new Set<string>();
  const warnings = lowBalanceWarnings({
    policy,
    holdings,
    threshold: null,
    txLastHour: 25,
    mintable,
  });
  assert.deepEqual(warnings.length, 1);
  // 2 SOL plus 25 transactions' fees (2.056107) rounded up to two significant digits
  assert.ok(2 + Number(TX_COST_LAMPORTS * 25n) / 1e9 < 2.1);
  assert.deepEqual(warnings[0]?.needed, "2.1");
  const enough = { lamports: 2_100_000_000n, tokens: new Map() };
  assert.deepEqual(
    lowBalanceWarnings({ policy, holdings: enough, threshold: null, txLastHour: 25, mintable }),
    [],
  );
});
