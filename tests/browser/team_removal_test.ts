// The team page in Chromium, with and without JavaScript: an owner removes a developer, ticking one
// of the two keys they made to keep; the other is revoked in the same change.
import assert from "node:assert/strict";
import { createProject, launchBrowser, signInThroughRoutes } from "../support/browser.ts";
import { serveDashboard } from "../support/dashboard.ts";
import { listApiKeys } from "../../kv/api_keys.ts";
import { getIslandsBundle } from "../../components/islands_bundle.ts";

Deno.test("The team page removes a member with what they made, but what is ticked to keep", async (t) => {
  await using served = await serveDashboard();
  const { baseUrl } = served;
  await getIslandsBundle();
  for (const javaScriptEnabled of [true, false]) {
    await t.step(`JavaScript ${javaScriptEnabled ? "on" : "off"}`, async () => {
      await using ownerBrowser = await launchBrowser({ javaScriptEnabled });
      await using developerBrowser = await launchBrowser({ javaScriptEnabled: false });
      await signInThroughRoutes(ownerBrowser.context, baseUrl);
      const developer = await signInThroughRoutes(developerBrowser.context, baseUrl);
      const owner = await ownerBrowser.context.newPage();
      const dev = await developerBrowser.context.newPage();

      // Given: the owner invites the developer, who joins and makes two keys
      const projectId = await createProject(owner, baseUrl, "Team Quest");
      const project = `${baseUrl}/dashboard/projects/${projectId}`;
      await owner.goto(`${project}/team`);
      await owner.getByLabel("Wallet address").fill(developer.address);
      await owner.getByLabel("Role", { exact: true }).selectOption("developer");
      await owner.getByRole("button", { name: "Invite" }).click();
      await owner.getByText("they accept by signing in").waitFor();
      await dev.goto(`${baseUrl}/dashboard`);
      await dev.getByTestId("accept-invitation").click();
      await dev.waitForURL(project);
      for (let i = 0; i < 2; i++) {
        await dev.goto(`${project}/keys`);
        await dev.getByTestId("create-key").click();
        await dev.getByTestId("new-key-value").waitFor();
      }
      const [kept, revoked] = await listApiKeys(served.t.kv, projectId, served.t.clock.now());
      assert.ok(kept && revoked);

      // When: the owner ticks the first key to keep and removes the developer
      owner.on("dialog", (dialog) => dialog.accept());
      await owner.goto(`${project}/team`);
      const row = owner.locator(`tr[data-member="${developer.address}"]`);
      await row.locator(`input[name="keep"][value="key:${kept.id}"]`).check();
      await row.getByTestId("remove-member").click();
      await owner.getByText("left the team, withdrawing 1 key they made").waitFor();

      // Then: only the unticked key was revoked
      const keys = await listApiKeys(served.t.kv, projectId, served.t.clock.now());
      assert.deepEqual(
        keys.map((key) => [key.id, key.revokedAt === null]),
        [[kept.id, true], [revoked.id, false]],
      );
    });
  }
});
