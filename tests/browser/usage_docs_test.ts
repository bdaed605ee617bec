// In Chromium: the usage page's charts at desktop and phone sizes (screenshots kept under
// test-results/screenshots/, gitignored), and the API reference under its strict CSP.
import type { Page } from "playwright-core";
import assert from "node:assert/strict";
import { launchBrowser } from "../support/browser.ts";
import { serveDashboard } from "../support/dashboard.ts";
import { createTestWallet } from "../support/sign_in.ts";
import { DOCS_CSP } from "../../routes/docs.ts";
import { V1_OPERATIONS } from "../../routes/v1/operations.ts";

const SHOTS = new URL("../../test-results/screenshots/", import.meta.url);

async function screenshot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, SHOTS).pathname, fullPage: true });
}

/** Console errors, uncaught errors and CSP violations of a page, as they happen. */
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") {
      errors.push(`${message.type()}: ${message.text()}`);
    }
  });
  page.on("pageerror", (error) => errors.push(`pageerror: ${error}`));
  page.on("response", (response) => {
    if (response.status() >= 400) errors.push(`${response.status()}: ${response.url()}`);
  });
  return errors;
}

Deno.test("The usage page's charts render without scripts, readable at desktop and phone sizes", async (t) => {
  await using served = await serveDashboard();
  const { baseUrl } = served;
  for (
    const size of [{ name: "desktop", width: 1280, height: 900 }, {
      name: "phone",
      width: 390,
      height: 844,
    }]
  ) {
    await t.step(size.name, async () => {
      // Given: a signed-in developer whose game sent 42 requests this minute
      await using browser = await launchBrowser({ viewport: size, javaScriptEnabled: false });
      const origin = new URL(baseUrl).origin;
      const wallet = createTestWallet();
      const request = browser.context.request;
      const { message } = await (await request.post(`${baseUrl}/auth/wallet/challenge`, {
        headers: { origin },
        data: { address: wallet.address },
      })).json();
      await request.post(`${baseUrl}/auth/wallet/verify`, {
        headers: { origin },
        data: { signature: wallet.sign(message) },
      });
      const project = await (await request.post(`${baseUrl}/dashboard/projects`, {
        headers: { origin, accept: "application/json" },
        data: { name: `Charted ${size.name}`, cluster: "devnet" },
      })).json();
      const { key } =
        await (await request.post(`${baseUrl}/dashboard/projects/${project.id}/keys`, {
          headers: { origin, accept: "application/json" },
        })).json();
      await Promise.all(
        Array.from(
          { length: 42 },
          () =>
            fetch(`${baseUrl}/v1/project`, { headers: { "x-api-key": key } }).then((r) =>
              r.body?.cancel()
            ),
        ),
      );

      // When
      const page = browser.context.pages()[0] ?? await browser.context.newPage();
      await page.goto(`${baseUrl}/dashboard/projects/${project.id}`);
      await page.getByRole("navigation", { name: "Project pages" }).getByRole("link", {
        name: "Usage",
      }).click();

      // Then
      await page.getByTestId("chart-requests").waitFor();
      assert.deepEqual(await page.getByTestId("requests-minute-text").textContent(), "42 of 600");
      assert.deepEqual(
        await page.getByTestId("requests-today-text").textContent(),
        "42 of 100,000",
      );
      for (const id of ["chart-requests", "chart-tx", "chart-events"]) {
        const box = await page.getByTestId(id).locator("svg").first().boundingBox();
        assert.ok(
          box && box.width > 300 && box.width <= size.width,
          `${id} fits: ${JSON.stringify(box)}`,
        );
        assert.ok(box.height > 120, `${id} is tall enough to read: ${box.height}`);
      }
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
      assert.ok(overflow <= 0, `no sideways scrolling (${overflow}px too wide)`);
      // The last minute's bar reaches 42/600 of the plot: drawn, and below the limit line.
      const bars = page.getByTestId("chart-requests").locator("g > rect");
      assert.deepEqual(await bars.count(), 60);
      assert.ok(Number(await bars.last().getAttribute("height")) > 5);
      await screenshot(page, `usage-${size.name}`);
    });
  }
});

Deno.test("/docs renders the OpenAPI document with Swagger UI from this origin, with no console errors", async (t) => {
  await using served = await serveDashboard();
  const { baseUrl } = served;
  await using browser = await launchBrowser();

  await t.step("the landing page and the dashboard link to it", async () => {
    const page = await browser.context.newPage();
    await page.goto(baseUrl);
    await page.getByRole("main").getByTestId("docs-link").click();
    await page.waitForURL(`${baseUrl}/docs`);
    await page.goto(`${baseUrl}/dashboard/sign-in`);
    await page.getByTestId("topbar-docs-link").click();
    await page.waitForURL(`${baseUrl}/docs`);
    await page.close();
  });

  await t.step(
    "it lists every route, under its strict CSP, with nothing from elsewhere",
    async () => {
      const page = await browser.context.newPage();
      const errors = watchErrors(page);
      const foreign: string[] = [];
      page.on("request", (req) => {
        if (!req.url().startsWith(baseUrl) && !req.url().startsWith("data:")) {
          foreign.push(req.url());
        }
      });
      const res = await page.goto(`${baseUrl}/docs`);
      assert.deepEqual(res?.headers()["content-security-policy"], DOCS_CSP);
      await page.locator(".opblock").first().waitFor();
      assert.deepEqual(await page.locator(".opblock").count(), V1_OPERATIONS.length);
      await page.locator(".opblock-summary-path", { hasText: /^\/v1\/tx\/transfer-sol$/ }).click();
      await page.getByText("idempotency_conflict").first().waitFor();
      await page.getByRole("button", { name: "Try it out" }).click();
      await page.getByRole("button", { name: "Execute" }).waitFor();
      await page.getByRole("button", { name: /Authorize/ }).first().click();
      await page.getByText("x-api-key").first().waitFor();
      await screenshot(page, "docs-desktop");
      assert.deepEqual(errors, []);
      assert.deepEqual(foreign, []);
    },
  );

  await t.step("it also works under exactly the app-wide page CSP", async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.route(`${baseUrl}/docs`, async (route) => {
      const response = await route.fetch();
      const headers = {
        ...response.headers(),
        "content-security-policy": "script-src 'self'; object-src 'none'; frame-ancestors 'none'",
      };
      await route.fulfill({ response, headers });
    });
    await page.goto(`${baseUrl}/docs`);
    await page.locator(".opblock").first().waitFor();
    assert.deepEqual(await page.locator(".opblock").count(), V1_OPERATIONS.length);
    assert.deepEqual(errors, []);
  });
});
