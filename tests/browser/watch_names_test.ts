// A name chosen in the dashboard never becomes part of a path (issue 22): a watch named `..` made
// its Remove form post to `/dashboard/projects/<id>/watches/../delete`, which the browser resolves
// to the project's own delete action.
import assert from "node:assert/strict";
import { createProject, launchBrowser, signInThroughRoutes } from "../support/browser.ts";
import { serveDashboard } from "../support/dashboard.ts";
import { getProject } from "../../kv/projects.ts";
import { addWatchPoll } from "../../lib/watches/job_payloads.ts";
import { createWatch, listWatchesByProject } from "../../kv/watches.ts";

const WATCHED = "Vote111111111111111111111111111111111111111";
const OTHER = "Stake11111111111111111111111111111111111111";

Deno.test("A watch named .. is removed alone in Chromium; the project and its wallet stay", async (t) => {
  await using served = await serveDashboard();
  const { baseUrl } = served;
  const kv = served.t.kv;
  await using browser = await launchBrowser();
  await signInThroughRoutes(browser.context, baseUrl);
  const page = browser.context.pages()[0] ?? await browser.context.newPage();
  page.on("dialog", (dialog) => dialog.accept());

  // Given: a project with a managed wallet, and a watch named ".." (as an earlier version, which
  // accepted the name, stored it).
  const projectId = await createProject(page, baseUrl, "Dot Quest");
  await page.getByTestId("create-wallet").click();
  await page.getByTestId("wallet-address").waitFor();
  await createWatch(kv, {
    projectId,
    name: "..",
    address: WATCHED,
    now: Date.now(),
    max: 20,
    addPollJob: (op, watch) => addWatchPoll(op, watch, watch.createdAt),
  });
  const watchesUrl = `${baseUrl}/dashboard/projects/${projectId}/watches`;

  await t.step("Remove on the watch named .. removes that watch, not the project", async () => {
    await page.goto(watchesUrl);
    // When: the developer removes the watch and confirms.
    const posted = page.waitForResponse((res) => res.request().method() === "POST");
    await page.getByTestId("remove-watch").click();
    const answer = await posted;
    await page.waitForLoadState();

    // Then: the project and its wallet are still there; the post went to the watch's own action.
    const project = await getProject(kv, projectId);
    assert.deepEqual(project?.deletedAt, null, `the project was deleted by ${answer.url()}`);
    assert.ok(project?.walletAddress);
    assert.match(new URL(answer.url()).pathname, /\/watches\/[0-9A-Z]{26}\/delete$/);
    assert.deepEqual(await listWatchesByProject(kv, projectId), []);
    await page.getByText("Stopped watching ..").waitFor();
  });

  await t.step("adding a watch named . or .. , or with a bidi override, is refused", async () => {
    for (
      const [name, message] of [
        ["..", "name: must not be . or .."],
        [".", "name: must not be . or .."],
        ["vault\u202Eexe.txt", "name: must not contain control or format characters"],
      ]
    ) {
      await page.goto(watchesUrl);
      const form = page.getByTestId("add-watch");
      await form.getByLabel("Name").fill(name!);
      await form.getByLabel("Address").fill(OTHER);
      await form.getByRole("button", { name: "Add watch" }).click();
      await page.getByText(message!).waitFor();
      assert.deepEqual(await listWatchesByProject(kv, projectId), [], name);
    }
  });
});
