/**
 * Amounts as a newcomer reads them (issue 42, item 8): a wallet created a moment ago is "not
 * funded yet", not an alarm, and the estimated need is rounded.
 */
import assert from "node:assert/strict";
import { createProjectAs, getPage, postJson, signInDeveloper } from "../support/dashboard.ts";
import { createTestApp } from "../support/test_app.ts";
import { startChain } from "../../sandbox/chain/mod.ts";

/** The low-balance box of a page. */
function lowBalanceBox(html: string): string {
  const box = html.match(/<div data-testid="low-balance">.*?<\/div><\/div>/s);
  assert.ok(box, "the page has the low-balance box");
  return box[0];
}

Deno.test("The overview of a wallet created a moment ago says it is not funded yet, without alarm", async () => {
  await using chain = await startChain({ slotMs: 10 });
  await using t = await createTestApp({
    config: { rpcUrls: { devnet: chain.rpcUrl, mainnet: chain.rpcUrl } },
  });
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  await postJson(t.app, `/dashboard/projects/${project.id}/wallet`, undefined, { jar: dev.jar });

  const box = lowBalanceBox(
    await (await getPage(t.app, `/dashboard/projects/${project.id}`, dev.jar)).text(),
  );
  assert.ok(box.includes('class="notice info" role="status"'), box);
  assert.ok(!box.includes("notice error"), box);
  assert.ok(!box.includes('role="alert"'), box);
  // Fees for 10 transactions are 0.0224428 SOL, read as 0.023
  assert.match(
    box,
    /Not funded yet:.*holds no SOL\. Send it at least\s+0\.023 SOL \(fees for 10 transactions\)/s,
  );
});
