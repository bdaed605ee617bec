// Connecting a game with Roblox in Chromium, as a developer clicks it: the settings page, Roblox's
// consent page (the stand-in) picking the experience, installing the game's key, rotating it with
// a restart, and disconnecting.
import type { Page } from "playwright-core";
import assert from "node:assert/strict";
import { createProject, launchBrowser, signInThroughRoutes } from "../support/browser.ts";
import { serveDashboard } from "../support/dashboard.ts";
import { getIslandsBundle } from "../../components/islands_bundle.ts";
import { startMessagingStandIn, startOauthStandIn } from "../../sandbox/roblox/mod.ts";
import { connectRedirectUri } from "../../lib/roblox/connect_app.ts";

const SHOTS = new URL("../../test-results/screenshots/", import.meta.url);
const APP = { clientId: "service-connect", clientSecret: "service-connect-secret" };

async function shot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, SHOTS).pathname, fullPage: true });
}

Deno.test("Roblox connection in Chromium: connect, install the key, rotate it, disconnect", async (t) => {
  await using oauth = {
    ...await startOauthStandIn(),
    async [Symbol.asyncDispose]() {
      await this.close();
    },
  };
  await using cloud = {
    ...await startMessagingStandIn({ checkAccessToken: oauth.checkAccessToken }),
    async [Symbol.asyncDispose]() {
      await this.close();
    },
  };
  await using served = await serveDashboard({
    idpUrl: oauth.idpUrl,
    publishUrl: cloud.url,
    robloxConnectApp: APP,
  });
  const { baseUrl } = served;
  oauth.registerClient({
    ...APP,
    redirectUris: [connectRedirectUri(baseUrl)],
    name: "Blocklink connect",
  });
  await getIslandsBundle();
  await using browser = await launchBrowser();
  await signInThroughRoutes(browser.context, baseUrl);
  const page = browser.context.pages()[0] ?? await browser.context.newPage();
  const pageErrors: string[] = [];
  page.on("pageerror", (error) => pageErrors.push(String(error)));
  const projectId = await createProject(page, baseUrl, "Connect Quest");
  const section = page.getByTestId("roblox");

  await t.step("Connect with Roblox goes through the consent page and back", async () => {
    await page.goto(`${baseUrl}/dashboard/projects/${projectId}/settings`);
    await section.getByTestId("roblox-not-connected").waitFor();
    await section.getByRole("link", { name: "Connect with Roblox" }).click();
    await page.getByRole("heading", { name: "Roblox OAuth stand-in" }).waitFor();
    await shot(page, "roblox-consent");
    await page.getByLabel(/Block Party/).check();
    await page.getByRole("button", { name: "Allow" }).click();
    await page.getByText("Game connected: universe 5550001").waitFor();
    await section.getByTestId("roblox-connected").waitFor();
    assert.match((await section.getByTestId("roblox-universe").textContent())!, /5550001/);
    await shot(page, "roblox-connected");
  });

  await t.step("Install key in game writes a working key into the game's secrets", async () => {
    await section.getByRole("button", { name: "Install key in game" }).click();
    await page.getByText(/installed in the game as the secret blocklink/).waitFor();
    const key = cloud.openSecret("5550001", "blocklink")!;
    assert.equal((await page.content()).includes(key), false, "never shown");
    const res = await fetch(`${baseUrl}/v1/project`, { headers: { "x-api-key": key } });
    await res.body?.cancel();
    assert.equal(res.status, 200);
  });

  await t.step("Rotate key restarts the servers and shows the steps as they run", async () => {
    const before = cloud.openSecret("5550001", "blocklink");
    await section.getByLabel("Minutes for players to move to new servers").fill("3");
    await section.getByRole("button", { name: "Rotate key" }).click();
    await section.getByTestId("rotation").getByText(/Servers restarted/).waitFor();
    assert.notEqual(cloud.openSecret("5550001", "blocklink"), before);
    assert.deepEqual(cloud.restarts().map((r) => r.bleedOffDurationMinutes), [3]);
    await shot(page, "roblox-rotation");
  });

  await t.step("Disconnect revokes the grant", async () => {
    await section.getByRole("button", { name: "Disconnect" }).click();
    await section.getByTestId("roblox-not-connected").waitFor();
    assert.deepEqual(oauth.revoked().map((r) => r.kind), ["refresh_token"]);
  });

  assert.deepEqual(pageErrors, []);
});
