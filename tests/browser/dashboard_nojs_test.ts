import assert from "node:assert/strict";
import { launchBrowser, signInThroughRoutes } from "../support/browser.ts";
import { serveDashboard } from "../support/dashboard.ts";
import { getPolicy } from "../../kv/policy.ts";

const WATCHED = "Vote111111111111111111111111111111111111111";

Deno.test("Every dashboard form works in Chromium with JavaScript turned off", async (t) => {
  await using served = await serveDashboard();
  const { baseUrl } = served;
  // Signing in needs a wallet in the page, so this browser signs in through the HTTP routes
  // (its request context shares the browser's cookie store).
  await using browser = await launchBrowser({ javaScriptEnabled: false });
  await signInThroughRoutes(browser.context, baseUrl);
  const page = browser.context.pages()[0] ?? await browser.context.newPage();
  const tab = (name: string) =>
    page.getByRole("navigation", { name: "Project pages" }).getByRole("link", {
      name,
      exact: true,
    });
  let projectPath = "";

  await t.step("create a project", async () => {
    await page.goto(`${baseUrl}/dashboard`);
    await page.getByLabel("Name", { exact: true }).fill("No Script Quest");
    await page.getByLabel(/Mainnet/).check();
    await page.getByRole("button", { name: "Create project" }).click();
    await page.getByText("Project No Script Quest created on mainnet").waitFor();
    projectPath = new URL(page.url()).pathname;
    assert.deepEqual(await page.getByTestId("project-cluster").textContent(), "mainnet");
  });

  await t.step("create a key and see it once, then revoke it", async () => {
    await tab("API keys").click();
    await page.getByTestId("create-key").click();
    const key = await page.getByTestId("new-key-value").textContent();
    const res = await fetch(`${baseUrl}/v1/project`, { headers: { "x-api-key": key! } });
    assert.deepEqual((await res.json()).name, "No Script Quest");
    await page.getByTestId("revoke-key").click();
    await page.getByText("API key revoked").waitFor();
    assert.deepEqual(await page.getByTestId("key-list").count(), 0);
  });

  await t.step("save settings; a refused field shows its message", async () => {
    await tab("Settings").click();
    const events = page.getByTestId("settings-events");
    await events.getByLabel("Universe ID").fill("12 34");
    await events.getByRole("button", { name: "Save events" }).click();
    await page.getByText("Universe ID: must contain digits only").waitFor();
    // Without JavaScript too, the field says it under itself and is marked
    const universe = events.getByLabel("Universe ID");
    assert.equal(await universe.getAttribute("aria-invalid"), "true");
    assert.equal(
      await page.locator(`#${await universe.getAttribute("aria-describedby")}`).textContent(),
      "Must contain digits only (the universe ID, not a place ID).",
    );
    await page.getByTestId("settings-events").getByLabel("Universe ID").fill("1234");
    await page.getByTestId("settings-events").getByRole("button", { name: "Save events" }).click();
    await page.getByText("Settings saved").waitFor();
  });

  await t.step("save a policy", async () => {
    await tab("Policy").click();
    await page.getByLabel("Max SOL per transfer").fill("0.1");
    await page.getByLabel("Per player, per hour").fill("3");
    await page.getByTestId("save-policy").click();
    await page.getByText("Policy saved").waitFor();
    const id = projectPath.split("/").pop()!;
    const policy = await getPolicy(served.t.kv, id);
    assert.deepEqual([policy.maxSolPerTransfer, policy.perPlayerPerHour], ["0.1", 3]);
  });

  await t.step("add and remove a watch", async () => {
    await tab("Watches").click();
    const form = page.getByTestId("add-watch");
    await form.getByLabel("Name").fill("hot wallet");
    await form.getByLabel("Address").fill(WATCHED);
    await form.getByRole("button", { name: "Add watch" }).click();
    await page.getByTestId("watch-list").getByText("hot wallet").waitFor();
    await page.getByTestId("remove-watch").click();
    await page.getByText("Stopped watching hot wallet").waitFor();
  });

  await t.step("send a test ping and read the answer", async () => {
    await tab("Settings").click();
    await page.getByTestId("send-ping").click();
    await page.getByText("Events are off: save a universe ID and a publishing API key first")
      .waitFor();
  });

  await t.step("delete the project through its confirmation page", async () => {
    await page.goto(`${baseUrl}${projectPath}/delete`);
    await page.getByTestId("delete-name").fill("No Script Quest");
    await page.getByTestId("confirm-delete").click();
    await page.getByText("Project No Script Quest deleted").waitFor();
    assert.ok(new URL(page.url()).pathname === "/dashboard");
  });

  await t.step("the sign-in page says why it needs JavaScript", async () => {
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.waitForURL(`${baseUrl}/`);
    await page.goto(`${baseUrl}/dashboard/sign-in`);
    // Chromium with scripts turned off by the test still parses <noscript> as text, so read it.
    assert.ok(
      (await page.locator("noscript").textContent())!.includes("Signing in needs JavaScript"),
    );
    assert.deepEqual(await page.getByTestId("sandbox-key").count(), 0, "no form that cannot work");
  });
});
