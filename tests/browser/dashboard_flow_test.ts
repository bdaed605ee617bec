import type { Page } from "playwright-core";
import { type Address, generateKeyPairSigner } from "@solana/kit";
import assert from "node:assert/strict";
import { assertNoOverflow, installTestWallet, launchBrowser } from "../support/browser.ts";
import { serveDashboard } from "../support/dashboard.ts";
import { testTiming } from "../support/tx_harness.ts";
import { getIslandsBundle } from "../../components/islands_bundle.ts";
import { airdrop, createFundedSigner, createMint } from "../../sandbox/chain/fixtures.ts";
import { startChain } from "../../sandbox/chain/mod.ts";
import { startMessagingStandIn } from "../../sandbox/roblox/mod.ts";

const UNIVERSE = "4242";
const PUBLISH_KEY = "browser-test-publishing-key";
const SHOTS = new URL("../../test-results/screenshots/", import.meta.url);
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

/** Saves a full-page screenshot under test-results/screenshots/ (gitignored). */
async function shot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, SHOTS).pathname, fullPage: true });
}

/** The project page tab link named `name`. */
function tab(page: Page, name: string) {
  return page.getByRole("navigation", { name: "Project pages" }).getByRole("link", {
    name,
    exact: true,
  });
}

Deno.test("Dashboard end to end in Chromium: sign in with a wallet, run a project, delete it", async (t) => {
  // Given the sandbox cluster, the messaging stand-in and the app on a real port
  const chain = await startChain({ slotMs: 10 });
  const standIn = await startMessagingStandIn({
    keys: [{ apiKey: PUBLISH_KEY, universeId: UNIVERSE }],
  });
  await using _stop = {
    async [Symbol.asyncDispose]() {
      await standIn.close();
      await chain.close();
    },
  };
  await using served = await serveDashboard({
    rpcUrls: { devnet: chain.rpcUrl, mainnet: chain.rpcUrl },
    publishUrl: standIn.url,
  });
  served.t.ctx.tx.timing = testTiming();
  const { baseUrl } = served;
  await getIslandsBundle();

  await using browser = await launchBrowser({ viewport: DESKTOP });
  await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], {
    origin: baseUrl,
  });
  const wallet = await installTestWallet(browser.context, { name: "Test Wallet" });
  const page = browser.context.pages()[0] ?? await browser.context.newPage();
  const pageErrors: string[] = [];
  page.on("pageerror", (error) => pageErrors.push(String(error)));
  let projectUrl = "";
  let apiKey = "";
  let managedWallet = "";

  await t.step("sign in with a Wallet Standard wallet", async () => {
    await page.goto(`${baseUrl}/dashboard`);
    await page.waitForURL(`${baseUrl}/dashboard/sign-in`);
    await page.getByRole("button", { name: "Test Wallet" }).waitFor();
    await shot(page, "desktop-sign-in");
    await page.getByRole("button", { name: "Test Wallet" }).click();
    await page.waitForURL(`${baseUrl}/dashboard`);
    assert.deepEqual(wallet.signed.length, 1);
    assert.deepEqual(
      wallet.signed[0]?.split("\n")[3],
      "Sign in to the Blocklink dashboard. Signing is free and does not send a transaction.",
    );
    assert.ok((await page.getByTestId("developer").getAttribute("title")) === wallet.address);
    await shot(page, "desktop-projects-empty");
  });

  await t.step("create a project", async () => {
    await page.getByLabel("Name", { exact: true }).fill("Sky Racers");
    await page.getByRole("button", { name: "Create project" }).click();
    await page.waitForURL(/\/dashboard\/projects\/[0-9A-Z]{26}$/);
    projectUrl = page.url();
    assert.deepEqual(await page.getByTestId("project-name").textContent(), "Sky Racers");
    assert.deepEqual(
      await page.getByTestId("link-url").textContent(),
      `${baseUrl}/link/sky-racers`,
    );
  });

  await t.step("create a key, copy it, and use it against /v1/project", async () => {
    await tab(page, "API keys").click();
    await page.getByTestId("create-key").click();
    apiKey = (await page.getByTestId("new-key-value").textContent())!;
    assert.ok(/^blk_live_/.test(apiKey));
    await shot(page, "desktop-keys-new");
    await page.getByRole("button", { name: "Copy the API key" }).click();
    assert.deepEqual(await page.evaluate(() => navigator.clipboard.readText()), apiKey);
    const res = await fetch(`${baseUrl}/v1/project`, { headers: { "x-api-key": apiKey } });
    assert.deepEqual(res.status, 200);
    assert.deepEqual((await res.json()).name, "Sky Racers");
    await page.reload();
    assert.deepEqual(await page.getByTestId("new-key").count(), 0, "shown only once");
  });

  await t.step("create the managed wallet and see its balance", async () => {
    await page.goto(projectUrl);
    await page.getByTestId("create-wallet").click();
    await page.getByTestId("wallet-address").waitFor();
    managedWallet = (await page.getByTestId("wallet-address").textContent())!;
    await airdrop(chain, managedWallet as Address, 2_000_000_000n);
    // Balances are cached about 10 s (by the app's clock, which this test moves by hand).
    served.t.clock.advance(11_000);
    await page.reload();
    assert.deepEqual(await page.getByTestId("wallet-balance").textContent(), "2 SOL");
    await shot(page, "desktop-overview");
  });

  await t.step("save the OAuth app and event settings, then send a test ping", async () => {
    await tab(page, "Settings").click();
    const oauth = page.getByTestId("settings-oauth");
    await oauth.getByLabel("Client ID").fill("1234567890");
    await oauth.getByLabel("Client secret").fill("oauth-secret");
    await oauth.getByRole("button", { name: "Save sign-in" }).click();
    await page.getByText("Settings saved").waitFor();
    const events = page.getByTestId("settings-events");
    await events.getByLabel("Universe ID").fill(UNIVERSE);
    await events.getByLabel("Publishing API key").fill(PUBLISH_KEY);
    await events.getByRole("button", { name: "Save events" }).click();
    await page.getByTestId("events-on").waitFor();
    await page.getByTestId("send-ping").click();
    await page.getByText("Roblox accepted the test event").waitFor();
    const ping = standIn.inbox().find((m) => (m.data as { type?: string }).type === "ping");
    assert.deepEqual([ping?.universeId, ping?.topic], [UNIVERSE, "svc"]);
    await shot(page, "desktop-settings");
  });

  await t.step(
    "save a policy with SOL transfers and a token mint, and mint with the key",
    async () => {
      const payer = await createFundedSigner(chain);
      const mint = await createMint(chain, {
        payer,
        decimals: 6,
        mintAuthority: managedWallet as Address,
      });
      await tab(page, "Policy").click();
      await page.getByLabel("Max SOL per transfer").fill("1");
      await page.getByLabel("Mint address 1").fill(mint);
      await page.getByLabel("Maximum per transaction 1").fill("100");
      await page.getByTestId("save-policy").click();
      await page.getByText("Policy saved").waitFor();
      await shot(page, "desktop-policy");
      const player = (await generateKeyPairSigner()).address;
      const res = await fetch(`${baseUrl}/v1/tx/mint-token`, {
        method: "POST",
        headers: { "x-api-key": apiKey, "content-type": "application/json" },
        body: JSON.stringify({ to: { address: player }, mint, amount: "5", idempotencyKey: "m-1" }),
      });
      const result = await res.json();
      assert.deepEqual([res.status, result.status, result.error], [200, "confirmed", null]);
      await tab(page, "Transactions").click();
      await page.getByTestId("tx-list").getByText("mint-token").waitFor();
      await shot(page, "desktop-transactions");
    },
  );

  await t.step("add a watch", async () => {
    await tab(page, "Watches").click();
    const form = page.getByTestId("add-watch");
    await form.getByLabel("Name").fill("treasury");
    await form.getByLabel("Address").fill(managedWallet);
    await page.getByRole("button", { name: "Add watch" }).click();
    await page.getByTestId("watch-list").getByText("treasury").waitFor();
    await shot(page, "desktop-watches");
  });

  await t.step("revoke a key after confirming", async () => {
    await tab(page, "API keys").click();
    await page.getByTestId("create-key").click();
    page.once("dialog", (dialog) => dialog.accept());
    await page.getByTestId("revoke-key").first().click();
    await page.getByText("API key revoked").waitFor();
    assert.deepEqual(await page.getByTestId("revoke-key").count(), 1);
  });

  await t.step("the main pages read well on a desktop and on a phone", async () => {
    const pages: Array<[string, string, string]> = [
      ["/", "home", "dashboard-link"],
      ["/dashboard", "projects", "project-list"],
      [new URL(projectUrl).pathname, "overview", "wallet-address"],
      [`${new URL(projectUrl).pathname}/keys`, "keys", "key-list"],
      [`${new URL(projectUrl).pathname}/settings`, "settings", "redirect-uri"],
      [`${new URL(projectUrl).pathname}/policy`, "policy", "policy-form"],
      [`${new URL(projectUrl).pathname}/watches`, "watches", "watch-list"],
      [`${new URL(projectUrl).pathname}/transactions`, "transactions", "tx-list"],
      [`${new URL(projectUrl).pathname}/events`, "events", "delivery-list"],
    ];
    for (const [size, viewport] of [["desktop", DESKTOP], ["phone", PHONE]] as const) {
      await page.setViewportSize(viewport);
      for (const [path, name, testId] of pages) {
        await page.goto(`${baseUrl}${path}`);
        assert.ok(await page.getByTestId(testId).isVisible(), `${name} shows ${testId} (${size})`);
        await assertNoOverflow(page, `${name} (${size})`);
        await shot(page, `${size}-${name}`);
      }
    }
    await page.setViewportSize(DESKTOP);
  });

  await t.step(
    "delete the project after confirming: its key stops and its page shows no game",
    async () => {
      await page.goto(`${projectUrl}/settings`);
      await page.getByRole("link", { name: "Delete project…" }).click();
      await shot(page, "desktop-delete");
      await page.getByTestId("delete-name").fill("Sky Racers");
      await page.getByTestId("confirm-delete").click();
      await page.waitForURL(`${baseUrl}/dashboard`);
      await page.getByText("Project Sky Racers deleted").waitFor();
      const res = await fetch(`${baseUrl}/v1/project`, { headers: { "x-api-key": apiKey } });
      assert.deepEqual(res.status, 401);
      await res.body?.cancel();
      await page.goto(`${baseUrl}/link/sky-racers`);
      await page.getByText("No game uses this link").waitFor();
    },
  );

  await t.step("sign out lands on the landing page", async () => {
    await page.goto(`${baseUrl}/dashboard`);
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.waitForURL(`${baseUrl}/`);
    await page.getByTestId("dashboard-link").waitFor();
    assert.deepEqual(
      await page.getByTestId("dashboard-link").textContent(),
      "Sign in to the dashboard",
    );
  });
  assert.deepEqual(pageErrors, []);
});
