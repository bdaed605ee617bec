import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import assert from "node:assert/strict";
import { launchBrowser } from "../support/browser.ts";
import { serveDashboard } from "../support/dashboard.ts";
import { getIslandsBundle } from "../../components/islands_bundle.ts";
import { createProject } from "../../kv/projects.ts";

Deno.test("On a local playground a browser without a wallet signs in with a pasted sandbox key", async () => {
  await using served = await serveDashboard();
  const { baseUrl } = served;
  await getIslandsBundle();
  // Given a demo project owned by the key deno task dev would print
  const secret = ed25519.utils.randomSecretKey();
  const address = base58.encode(ed25519.getPublicKey(secret));
  const project = await createProject(served.t.kv, {
    name: "Demo Game",
    cluster: "devnet",
    createdBy: address,
    now: served.t.clock.now(),
  });

  await using browser = await launchBrowser({ viewport: { width: 390, height: 844 } });
  const page = browser.context.pages()[0] ?? await browser.context.newPage();
  const pageErrors: string[] = [];
  page.on("pageerror", (error) => pageErrors.push(String(error)));

  // When the developer opens the project page, finds no wallet, and pastes the key
  await page.goto(`${baseUrl}/dashboard/projects/${project.id}/settings`);
  await page.getByTestId("no-wallets").waitFor();
  await page.getByLabel("Secret key (base58)").fill(base58.encode(secret));
  await page.getByRole("button", { name: "Sign in with this key" }).click();

  // Then they land on the page they asked for, signed in as that address
  await page.waitForURL(`${baseUrl}/dashboard/projects/${project.id}/settings`);
  assert.deepEqual(await page.getByTestId("developer").getAttribute("title"), address);
  assert.deepEqual(await page.getByTestId("project-name").textContent(), "Demo Game");
  assert.deepEqual(pageErrors, []);
});
