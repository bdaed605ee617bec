// The Webhooks page in Chromium: add an endpoint and copy its secret, send a test, see a failed
// delivery in the log and replay it, rotate the secret, remove the endpoint; on a phone too, and
// without JavaScript.
import type { Page } from "playwright-core";
import assert from "node:assert/strict";
import { createProject, launchBrowser, signInThroughRoutes } from "../support/browser.ts";
import { serveDashboard } from "../support/dashboard.ts";
import { HOOK_HOST, RECEIVER_TLS, useWebhookStandIns } from "../support/webhooks_harness.ts";
import { JobWorker } from "../../jobs/worker.ts";
import { recordEvents } from "../../lib/events/record.ts";
import { getIslandsBundle } from "../../components/islands_bundle.ts";
import { startWebhookReceiver } from "../../sandbox/webhooks/receiver.ts";
import { verifyWebhook } from "../../sdk/ts/src/verify_webhook.ts";

const SHOTS = new URL("../../test-results/screenshots/", import.meta.url);

async function shot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, SHOTS).pathname, fullPage: true });
}

Deno.test("Webhooks in Chromium: add, test, replay a failed delivery, rotate, remove", async (t) => {
  await using receiver = await startWebhookReceiver({ tls: RECEIVER_TLS });
  await using served = await serveDashboard({ webhooksAllowLoopback: true });
  useWebhookStandIns(served.t);
  const worker = new JobWorker(served.t.ctx, { owner: "browser" });
  worker.start();
  await using _worker = { [Symbol.asyncDispose]: () => worker.stop() };
  const { baseUrl } = served;
  await getIslandsBundle();
  await using browser = await launchBrowser();
  await signInThroughRoutes(browser.context, baseUrl);
  const page = browser.context.pages()[0] ?? await browser.context.newPage();
  const pageErrors: string[] = [];
  page.on("pageerror", (error) => pageErrors.push(String(error)));
  page.on("dialog", (dialog) => dialog.accept());
  const projectId = await createProject(page, baseUrl, "Hook Quest");
  const url = `https://${HOOK_HOST}:${receiver.port}/blocklink`;
  const now = () => Math.floor(served.t.clock.now() / 1000);
  let secret = "";

  await t.step("the Webhooks tab adds an endpoint and shows its secret once", async () => {
    await page.getByRole("navigation", { name: "Project pages" }).getByRole("link", {
      name: "Webhooks",
    }).click();
    await page.getByTestId("no-endpoints").waitFor();
    await page.getByLabel("URL").fill(url);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByText(`Webhooks now go to ${url}`).waitFor();
    secret = (await page.getByTestId("new-secret-value").textContent())!;
    assert.match(secret, /^whsec_/);
    assert.equal(await page.getByTestId("endpoint-list").getByText(url).count(), 1);
    await shot(page, "desktop-webhooks-added");
    await page.reload();
    assert.equal(await page.getByTestId("new-secret").count(), 0, "shown once");
  });

  await t.step("Send test delivers a signed ping, shown on the page and in the log", async () => {
    await page.getByTestId("test-endpoint").click();
    await page.getByText("Delivered: the endpoint answered HTTP 200").waitFor();
    const [ping] = receiver.received();
    assert.equal(JSON.parse(ping!.body).type, "ping");
    await verifyWebhook(secret, new Headers(ping!.headers), ping!.body, now());
    const log = page.getByTestId("webhook-delivery-list");
    await log.getByText("test", { exact: true }).waitFor();
  });

  await t.step("a delivery the receiver refused is replayed from the log at once", async () => {
    receiver.answerNext({ status: 400, body: "bad signature?" });
    const [event] = await recordEvents(served.t.ctx, projectId, [{
      type: "wallet_linked",
      userId: 77,
      address: "Vote111111111111111111111111111111111111111",
    }]);
    await receiver.waitFor(2);
    // Retried on the schedule (next in 10 s); the developer who fixed the receiver need not wait.
    await page.goto(`${baseUrl}/dashboard/projects/${projectId}/webhooks?status=retrying`);
    const row = page.locator(`tr:has-text("id ${event!.id}")`);
    assert.equal(await row.getByTestId("webhook-delivery-status").textContent(), "retrying");
    await row.getByText("bad signature?").waitFor();
    await shot(page, "desktop-webhooks-failed");
    await row.getByTestId("replay-delivery").click();
    await page.getByText(`Event ${event!.id} queued again`).waitFor();
    const [, , replayed] = await receiver.waitFor(3);
    assert.equal(JSON.parse(replayed!.body).id, event!.id);
    await verifyWebhook(secret, new Headers(replayed!.headers), replayed!.body, now());
    await page.goto(`${baseUrl}/dashboard/projects/${projectId}/webhooks?status=delivered`);
    await page.locator(`tr:has-text("id ${event!.id}")`).getByText("replay", { exact: true })
      .waitFor();
  });

  await t.step("Rotate secret shows a new secret; the old one still signs for a day", async () => {
    await page.getByTestId("rotate-secret").click();
    await page.getByText("New signing secret: the old one also signs for 24 hours").waitFor();
    const rotated = (await page.getByTestId("new-secret-value").textContent())!;
    assert.notEqual(rotated, secret);
    await page.getByTestId("previous-secret").waitFor();
    await page.getByTestId("test-endpoint").click();
    await page.getByText("Delivered: the endpoint answered HTTP 200").waitFor();
    const last = receiver.received().at(-1)!;
    for (const known of [secret, rotated]) {
      await verifyWebhook(known, new Headers(last.headers), last.body, now());
    }
  });

  await t.step("on a phone nothing scrolls sideways", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    const widths = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      inner: globalThis.innerWidth,
    }));
    assert.ok(widths.scroll <= widths.inner, JSON.stringify(widths));
    await shot(page, "phone-webhooks");
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  await t.step("Remove stops the webhooks", async () => {
    await page.getByTestId("remove-endpoint").click();
    await page.getByText(`Webhooks no longer go to ${url}`).waitFor();
    await page.getByTestId("no-endpoints").waitFor();
  });
  assert.deepEqual(pageErrors, []);
});

Deno.test("Webhooks without JavaScript: the forms add and remove an endpoint", async () => {
  await using receiver = await startWebhookReceiver({ tls: RECEIVER_TLS });
  await using served = await serveDashboard({ webhooksAllowLoopback: true });
  useWebhookStandIns(served.t);
  const { baseUrl } = served;
  await using browser = await launchBrowser({ javaScriptEnabled: false });
  await signInThroughRoutes(browser.context, baseUrl);
  const page = browser.context.pages()[0] ?? await browser.context.newPage();
  const projectId = await createProject(page, baseUrl, "Plain Quest");
  await page.goto(`${baseUrl}/dashboard/projects/${projectId}/webhooks`);
  const url = `https://${HOOK_HOST}:${receiver.port}/plain`;
  await page.getByLabel("URL").fill(url);
  await page.getByRole("button", { name: "Add endpoint" }).click();
  assert.match((await page.getByTestId("new-secret-value").textContent())!, /^whsec_/);
  // A refused URL comes back with the message and what was typed
  await page.getByLabel("URL").fill("https://10.0.0.1/in");
  await page.getByRole("button", { name: "Add endpoint" }).click();
  await page.getByText("url: 10.0.0.1 is a private address").waitFor();
  assert.equal(await page.getByLabel("URL").inputValue(), "https://10.0.0.1/in");
  await page.getByTestId("remove-endpoint").click();
  await page.getByText(`Webhooks no longer go to ${url}`).waitFor();
});
