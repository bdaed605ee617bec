import assert from "node:assert/strict";
import {
  createProjectWithOauth,
  launchBrowser,
  serveTestApp,
  signInOnLinkPage,
} from "../support/browser.ts";
import { getLinkByUser } from "../../kv/links.ts";

Deno.test("Linking page end to end in Chromium: sign in, link with a Wallet Standard wallet, unlink", async () => {
  await using served = await serveTestApp();
  const project = await createProjectWithOauth(served, "Sky Racers");

  // Given the linking page on a phone-sized screen, when the player signs in through the Roblox
  // stand-in.
  await using browser = await signInOnLinkPage(served, project);
  const { wallet, page, pageErrors } = browser;

  // Then the page shows the player, and Chromium kept the __Host- session cookie on http://localhost.
  assert.deepEqual(await page.getByTestId("player-name").textContent(), "Pixel Pilot");
  const cookies = await browser.context.cookies(served.baseUrl);
  const session = cookies.find((c) => c.name === "__Host-svc_session");
  assert.ok(session, `session cookie kept: ${JSON.stringify(cookies.map((c) => c.name))}`);
  assert.deepEqual([session.httpOnly, session.secure, session.sameSite, session.path], [
    true,
    true,
    "Lax",
    "/",
  ]);
  assert.ok(!cookies.some((c) => c.name === "__Host-svc_oauth"), "flow cookie deleted");

  // When the player links a wallet found through the Wallet Standard.
  await page.getByRole("button", { name: "Link a wallet" }).click();
  await page.getByRole("button", { name: "Test Wallet" }).click();
  await page.getByText("Wallet linked to @PixelPilot").waitFor();

  // Then the wallet signed the spec's message and the page and store show the link.
  assert.deepEqual(wallet.connects, 1);
  assert.deepEqual(wallet.signed.length, 1);
  const [message] = wallet.signed;
  assert.ok(message);
  const lines = message.split("\n");
  assert.deepEqual(
    lines[0],
    `${new URL(served.baseUrl).host} wants you to sign in with your Solana account:`,
  );
  assert.deepEqual(lines[1], wallet.address);
  assert.deepEqual(
    lines[3],
    "Link this wallet to Roblox account @PixelPilot (1002) in Sky Racers. Signing is free and does not send a transaction.",
  );
  assert.deepEqual(await page.getByTestId("linked-address").textContent(), wallet.address);
  assert.deepEqual((await getLinkByUser(served.t.kv, project.id, 1002))?.address, wallet.address);
  // The success state sits above the buttons: a check mark and the shortened address
  const state = page.getByTestId("linked-state");
  assert.deepEqual(
    await state.textContent(),
    `✓ Wallet linked: ${wallet.address.slice(0, 4)}…${wallet.address.slice(-4)}`,
  );
  const [stateBox, buttonBox] = await Promise.all([
    state.boundingBox(),
    page.getByRole("button", { name: "Change wallet" }).boundingBox(),
  ]);
  assert.ok(stateBox!.y < buttonBox!.y, "the success state is above the buttons");
  // The page says it never asks for a recovery phrase, and who runs it, with a privacy link
  assert.match(
    await page.getByTestId("never-asks").textContent() ?? "",
    /never asks for your recovery phrase/,
  );
  assert.match(await page.getByTestId("run-by").textContent() ?? "", /run by .* for Sky Racers/);
  assert.equal(await page.getByRole("link", { name: "Privacy" }).getAttribute("href"), "/privacy");

  // The page fits a phone screen without sideways scrolling.
  const overflow = await page.evaluate(() =>
    document.documentElement.scrollWidth - document.documentElement.clientWidth
  );
  assert.deepEqual(overflow, 0);

  // After a reload the server renders the linked wallet itself.
  await page.reload();
  assert.deepEqual(await page.getByTestId("linked-address").textContent(), wallet.address);

  // When the player clicks Unlink, the page asks first; keeping it changes nothing
  await page.getByRole("button", { name: "Unlink" }).click();
  await page.getByRole("button", { name: "Keep it" }).click();
  assert.deepEqual((await getLinkByUser(served.t.kv, project.id, 1002))?.address, wallet.address);
  // When the player unlinks, confirming it.
  await page.getByRole("button", { name: "Unlink" }).click();
  await page.getByRole("button", { name: "Yes, unlink" }).click();
  await page.getByText("Wallet unlinked.").waitFor();
  assert.deepEqual(await page.getByTestId("no-wallet").isVisible(), true);
  assert.deepEqual(await getLinkByUser(served.t.kv, project.id, 1002), null);
  assert.deepEqual(pageErrors, []);
});

Deno.test("Linking page in Chromium without a wallet explains how to get one", async () => {
  await using served = await serveTestApp();
  const project = await createProjectWithOauth(served, "Moon Miners");

  await using browser = await launchBrowser({ viewport: { width: 360, height: 740 } });
  const page = browser.context.pages()[0] ?? await browser.context.newPage();
  await page.goto(`${served.baseUrl}/link/${project.slug}`);
  await page.getByRole("link", { name: "Sign in with Roblox" }).click();
  await page.getByRole("button", { name: "Allow" }).click();
  await page.waitForURL(`${served.baseUrl}/link/${project.slug}`);
  assert.deepEqual(await page.getByTestId("player-name").textContent(), "Block Builder");

  await page.getByRole("button", { name: "Link a wallet" }).click();
  await page.getByTestId("no-wallets").waitFor();
  const phantom = await page.getByRole("link", { name: "Open in Phantom" }).getAttribute("href");
  assert.deepEqual(
    phantom,
    `https://phantom.app/ul/browse/${
      encodeURIComponent(`${served.baseUrl}/link/${project.slug}`)
    }?ref=${encodeURIComponent(served.baseUrl)}`,
  );

  // Signing out clears the session and lands on /.
  await page.goto(`${served.baseUrl}/link/${project.slug}`);
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(`${served.baseUrl}/`);
  const cookies = await browser.context.cookies(served.baseUrl);
  assert.ok(!cookies.some((c) => c.name === "__Host-svc_session"));
});
