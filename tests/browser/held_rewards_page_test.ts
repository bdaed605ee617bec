// The dashboard's Held rewards page in Chromium (issue 41's gaps, item 2): reached from the
// project's navigation, it lists the open rewards; cancelling one asks first, and a refused
// question cancels nothing.
import assert from "node:assert/strict";
import { createProject, launchBrowser, signInThroughRoutes } from "../support/browser.ts";
import { serveDashboard } from "../support/dashboard.ts";
import { putReward, rewardRecord } from "../support/rewards.ts";
import { getReward } from "../../kv/rewards.ts";

Deno.test("A held reward is cancelled from the Held rewards page in Chromium once the question is accepted", async () => {
  await using served = await serveDashboard();
  const { baseUrl } = served;
  const kv = served.t.kv;
  await using browser = await launchBrowser();
  await signInThroughRoutes(browser.context, baseUrl);
  const page = browser.context.pages()[0] ?? await browser.context.newPage();

  // Given: a project of the developer's with two held rewards
  const projectId = await createProject(page, baseUrl, "Reward Quest");
  const now = Date.now();
  await putReward(
    kv,
    projectId,
    rewardRecord({ key: "round-1:7", userId: 7, createdAt: now - 1 }, now),
  );
  await putReward(
    kv,
    projectId,
    rewardRecord({ key: "round-2:8", userId: 8, createdAt: now }, now),
  );

  // When: the owner opens Held rewards from the navigation
  await page.getByRole("navigation", { name: "Project pages" })
    .getByRole("link", { name: "Held rewards", exact: true }).click();
  await page.getByTestId("open-rewards").waitFor();
  assert.equal(await page.getByTestId("cancel-reward").count(), 2);

  // And: declines the question on the oldest one's Cancel, then accepts it on the newest one's
  page.once("dialog", (dialog) => dialog.dismiss());
  await page.getByTestId("cancel-reward").last().click();
  page.once("dialog", (dialog) => dialog.accept());
  await page.getByTestId("cancel-reward").first().click();

  // Then: the newest alone is cancelled, and the page says so
  await page.getByText("Reward round-2:8 of player 8 cancelled").waitFor();
  assert.equal((await getReward(kv, projectId, "round-2:8")).value?.status, "cancelled");
  assert.equal((await getReward(kv, projectId, "round-1:7")).value?.status, "held");
  assert.equal(await page.getByTestId("cancel-reward").count(), 1);
});
