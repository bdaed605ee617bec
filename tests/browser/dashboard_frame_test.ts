// The frame of every project page in Chromium: every tab visible at desktop and phone widths, a
// skip link past the navigation, and "Sign out everywhere" asking first.
import assert from "node:assert/strict";
import { launchBrowser, signInThroughRoutes } from "../support/browser.ts";
import { serveDashboard } from "../support/dashboard.ts";
import { PROJECT_TABS } from "../../http/dashboard_paths.ts";

/** A signed-in browser on a project it just created on `cluster`, at 1280 px. */
async function onNewProject(name: string, cluster: "devnet" | "mainnet") {
  const served = await serveDashboard();
  const browser = await launchBrowser({ viewport: { width: 1280, height: 800 } });
  await signInThroughRoutes(browser.context, served.baseUrl);
  const page = browser.context.pages()[0] ?? await browser.context.newPage();
  await page.goto(`${served.baseUrl}/dashboard`);
  await page.getByLabel("Name", { exact: true }).fill(name);
  if (cluster === "mainnet") await page.getByLabel(/Mainnet/).check();
  await page.getByRole("button", { name: "Create project" }).click();
  await page.getByText(`created on ${cluster}`).waitFor();
  return {
    baseUrl: served.baseUrl,
    page,
    project: new URL(page.url()).pathname,
    [Symbol.asyncDispose]: async () => {
      await browser.close();
      await served.close();
    },
  };
}

Deno.test("Project tabs fit at 1280 and 390 px, the skip link jumps past them, and signing out everywhere asks first", async () => {
  await using world = await onNewProject("Sky Racers", "devnet");
  const { page } = world;
  const nav = page.getByRole("navigation", { name: "Project pages" });

  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 800 });
    // Every tab is shown whole inside the page's width, none cut off or scrolled away
    for (const { label } of PROJECT_TABS) {
      const box = await nav.getByRole("link", { name: label, exact: true }).boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= width, `${label} at ${width} px`);
    }
    const overflow = await page.evaluate(() =>
      document.documentElement.scrollWidth - document.documentElement.clientWidth
    );
    assert.equal(overflow, 0, `nothing scrolls sideways at ${width} px`);
  }

  // The first Tab stop is the skip link; following it moves focus past the navigation
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Skip to content");
  await page.keyboard.press("Enter");
  assert.equal(await page.evaluate(() => document.activeElement?.id), "content");

  // Sign out everywhere asks before it ends anything
  await page.locator("summary", { hasText: "Sign out everywhere" }).click();
  const confirm = page.getByRole("button", { name: "Yes, sign out everywhere" });
  await confirm.waitFor();
  assert.ok(page.url().includes("/dashboard/projects/"), "still signed in, on the page");
  await confirm.click();
  await page.waitForURL(/\/($|\?|dashboard\/sign-in)/);
});

Deno.test("A mainnet project's keys say they pay real money, and an invitation is cancelled by a button that says so, at 1280 and 390 px", async () => {
  await using world = await onNewProject("Real Money Run", "mainnet");
  const { baseUrl, page, project } = world;
  await page.goto(`${baseUrl}${project}/keys`);
  await page.getByTestId("create-key").click();
  await page.getByTestId("new-key-value").waitFor();
  await page.goto(`${baseUrl}${project}/team`);
  await page.getByLabel("Wallet address").fill("9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin");
  await page.getByRole("button", { name: "Invite" }).click();
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 800 });
    await page.goto(`${baseUrl}${project}/keys`);
    const badge = page.getByTestId("key-cluster").first();
    assert.equal(await badge.textContent(), "Pays on mainnet: real money");
    assert.ok(await badge.isVisible(), `the badge shows at ${width} px`);
    await page.goto(`${baseUrl}${project}/team`);
    const cancel = page.getByRole("button", { name: "Cancel invitation" });
    assert.ok(await cancel.isVisible(), `the cancel button shows at ${width} px`);
    assert.equal(await page.getByRole("button", { name: "Withdraw", exact: true }).count(), 0);
  }
});
