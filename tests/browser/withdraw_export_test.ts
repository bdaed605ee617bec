/**
 * In Chromium, on a local playground against the sandbox cluster: the owner, signed in with the
 * sandbox key, withdraws SOL and exports the wallet's key, each confirmed by signing the statement
 * in the page with that key (where a wallet app would sign).
 */
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import assert from "node:assert/strict";
import {
  type Address,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  generateKeyPairSigner,
} from "@solana/kit";
import { assertNoOverflow, launchBrowser } from "../support/browser.ts";
import { serveDashboard } from "../support/dashboard.ts";
import { testTiming } from "../support/tx_harness.ts";
import { getIslandsBundle } from "../../components/islands_bundle.ts";
import { createProject } from "../../kv/projects.ts";
import { createProjectWallet } from "../../lib/projects/wallet.ts";
import { startChain } from "../../sandbox/chain/mod.ts";

Deno.test("The owner withdraws SOL and exports the key, signing each statement in the page", async () => {
  await using chain = await startChain({ slotMs: 10 });
  await using served = await serveDashboard({
    rpcUrls: { devnet: chain.rpcUrl, mainnet: chain.rpcUrl },
  });
  served.t.ctx.tx.timing = testTiming();
  const { baseUrl } = served;
  await getIslandsBundle();
  // Given a project owned by the sandbox key, with a funded managed wallet
  const secret = ed25519.utils.randomSecretKey();
  const address = base58.encode(ed25519.getPublicKey(secret));
  const project = await createProject(served.t.kv, {
    name: "Vault Game",
    cluster: "devnet",
    createdBy: address,
    now: served.t.clock.now(),
  });
  const wallet = await createProjectWallet(served.t.ctx, project.id) as Address;
  await chain.airdrop(wallet, 2_000_000_000n);
  const to = (await generateKeyPairSigner()).address;

  // On a phone's width: the statement and the key must wrap, not scroll sideways.
  await using browser = await launchBrowser({ viewport: { width: 390, height: 844 } });
  const page = browser.context.pages()[0] ?? await browser.context.newPage();
  const pageErrors: string[] = [];
  page.on("pageerror", (error) => pageErrors.push(String(error)));
  const base = `${baseUrl}/dashboard/projects/${project.id}`;
  await page.goto(base);
  await page.getByLabel("Secret key (base58)").fill(base58.encode(secret));
  await page.getByRole("button", { name: "Sign in with this key" }).click();
  await page.waitForURL(base);

  // When the owner withdraws 0.5 SOL from the overview's link
  await page.getByTestId("withdraw-link").click();
  await page.getByTestId("holdings").waitFor();
  await assertNoOverflow(page, "the withdraw page");
  await page.getByLabel("To (wallet address)").first().fill(to);
  await page.getByLabel("Amount").fill("0.5");
  await page.getByRole("button", { name: "Review and sign" }).first().click();
  await page.waitForURL(/\/withdraw\/confirm\?nonce=/);
  const message = await page.getByTestId("statement-message").textContent();
  assert.ok(message?.includes(`0.5 SOL`) && message.includes(to), message ?? "");
  await assertNoOverflow(page, "the withdrawal's statement");
  await page.getByRole("button", { name: "Sign with the sandbox key" }).click();

  // Then it is sent and listed as a withdrawal by the owner
  await page.waitForURL(`${base}/transactions`);
  await page.getByText(`Withdrawal to ${to}: 0.5 SOL confirmed`).waitFor();
  assert.equal(await page.getByTestId("tx-kind").first().textContent(), "withdraw");
  assert.equal(await page.getByTestId("tx-requested-by").first().getAttribute("title"), address);
  const balance = await createSolanaRpc(chain.rpcUrl).getBalance(to, { commitment: "confirmed" })
    .send();
  assert.equal(balance.value, 500_000_000n);

  // When the owner exports the key
  await page.goto(`${base}/export`);
  await assertNoOverflow(page, "the export page");
  await page.getByTestId("export-prepare").click();
  await page.waitForURL(/\/export\/confirm\?nonce=/);
  await page.getByRole("button", { name: "Sign with the sandbox key" }).click();

  // Then the page shows it once, in both formats, and the project shows it was exported
  // The key is hidden until the owner asks for it
  assert.equal(await page.getByTestId("exported-base58").isVisible(), false);
  await page.getByText("Reveal the secret key").click();
  assert.equal(await page.getByTestId("exported-base58").isVisible(), true);
  const shown = await page.getByTestId("exported-base58").textContent();
  await assertNoOverflow(page, "the exported key");
  const signer = await createKeyPairSignerFromBytes(base58.decode(shown ?? ""));
  assert.equal(signer.address, wallet);
  const cli = JSON.parse(await page.getByTestId("exported-cli").textContent() ?? "");
  assert.deepEqual(cli, Array.from(base58.decode(shown ?? "")));
  await page.goto(base);
  await page.getByTestId("key-exported").waitFor();
  await assertNoOverflow(page, "the overview after the export");
  assert.ok(!(await page.content()).includes(shown!), "the key is not shown again");
  assert.deepEqual(pageErrors, []);
});
