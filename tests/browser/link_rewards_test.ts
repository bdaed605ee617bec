/**
 * The linking page shows a signed-in player their rewards (issue 41, item 3): what waits for their
 * wallet, then, once they link one, what is on its way and what was sent, with explorer links on
 * the project's cluster. Rewards are written into the store as the service stores them.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { createProjectWithOauth, serveTestApp, signInOnLinkPage } from "../support/browser.ts";
import { createGemMint, paidReward, putReward, rewardRecord } from "../support/rewards.ts";
import { startChain } from "../../sandbox/chain/mod.ts";
import { explorerTxUrl } from "../../components/dashboard/format.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
const SIGNATURE = (n: number) =>
  `${n}`.repeat(4) + "5VERYfakeSignatureOfARewardPaymentXXXXXXXXXXXXXXXXXXXXXXXXXXXXX";

/** The contrast ratio of an element's text against the card it sits on (WCAG's formula). */
async function contrastOf(page: Page, selector: string): Promise<number> {
  return await page.locator(selector).first().evaluate((element) => {
    const rgb = (color: string) => (color.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
    const luminance = (color: string) => {
      const [r = 0, g = 0, b = 0] = rgb(color).map((c) => {
        const s = c / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const card = element.closest(".card")!;
    const [a, b] = [
      luminance(getComputedStyle(element).color),
      luminance(getComputedStyle(card).backgroundColor),
    ].sort((x, y) => y - x);
    return (a! + 0.05) / (b! + 0.05);
  });
}

Deno.test("Linking page in Chromium: a player sees the rewards waiting for their wallet, then links and sees them sent, with explorer links", async () => {
  const chain = await startChain({ slotMs: 10 });
  try {
    await using served = await serveTestApp({
      rpcUrls: { devnet: chain.rpcUrl, mainnet: chain.rpcUrl },
    });
    const project = await createProjectWithOauth(served, "Sky Racers");
    const { kv, clock } = served.t;

    // Given a token named GEM by its metadata
    const { gem } = await createGemMint(chain);
    // And Pixel Pilot (1002) has two rewards waiting for a wallet, one sent before, one cancelled
    const now = clock.now();
    const gems = rewardRecord({
      key: "round-7:1002",
      kind: "transfer-token",
      mint: gem,
      amount: "10",
      units: "1000",
      createdAt: now - 2_000,
      expiresAt: now + 10 * DAY_MS,
    }, now);
    const sol = rewardRecord({ key: "round-8:1002", amount: "0.25", units: "250000000" }, now);
    const earlier = paidReward(
      rewardRecord({
        key: "round-1:1002",
        kind: "mint-token",
        mint: gem,
        amount: "5",
        units: "500",
      }, now - 5 * DAY_MS),
      "EarlierWallet1111111111111111111111111111111",
      SIGNATURE(1),
      now - 4 * DAY_MS,
    );
    const cancelled = rewardRecord({
      key: "round-0:1002",
      amount: "7",
      units: "7000000000",
      status: "cancelled",
      waitingFor: null,
      settledAt: now,
    }, now - DAY_MS);
    // And another player's reward, not theirs to see
    const other = rewardRecord({
      key: "round-7:1003",
      userId: 1003,
      amount: "3",
      units: "3000000000",
    }, now);
    for (const reward of [gems, sol, earlier, cancelled, other]) {
      await putReward(kv, project.id, reward);
    }

    // When the player signs in
    await using browser = await signInOnLinkPage(served, project);
    const { wallet, page, pageErrors } = browser;

    // Then the page says what waits for their wallet, named as the pages name amounts
    const waiting = page.getByRole("region", { name: "2 rewards are waiting for your wallet" });
    await waiting.waitFor();
    const items = await waiting.getByRole("listitem").allTextContents();
    const byDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    assert.deepEqual(items.map((item) => item.replace(/\s+/g, " ").trim()), [
      `0.25 SOL · link a wallet by ${byDate(sol.expiresAt)}`,
      `10 GEM · link a wallet by ${byDate(gems.expiresAt)}`,
    ]);
    assert.match(
      await waiting.textContent() ?? "",
      /Link a wallet below and Sky Racers will send them to it/,
    );
    // And what was sent before, with its payment on the explorer of the project's cluster
    const sent = page.getByRole("region", { name: "Rewards sent to your wallet" });
    const explorer = sent.getByRole("link", {
      name: "See the 5 GEM payment on Solana Explorer (opens in a new tab)",
    });
    assert.equal(
      await explorer.getAttribute("href"),
      explorerTxUrl("devnet", chain.rpcUrl, SIGNATURE(1)),
    );
    assert.match(await explorer.getAttribute("href") ?? "", /cluster=custom/);
    // And neither the cancelled reward nor another player's
    const panel = await page.locator('[aria-live="polite"]').first().textContent() ?? "";
    assert.ok(!panel.includes("7 SOL") && !panel.includes("3 SOL"), panel);
    // And its words read well on the card
    for (
      const selector of [
        '[data-testid="rewards-waiting"] h2',
        '[data-testid="rewards-waiting"] .muted',
      ]
    ) {
      const ratio = await contrastOf(page, selector);
      assert.ok(ratio >= 4.5, `${selector}: contrast ${ratio.toFixed(2)}`);
    }

    // When the player links a wallet
    const reads = page.waitForRequest((req) =>
      req.url().endsWith(`/api/link/${project.slug}/rewards`)
    );
    await page.getByRole("button", { name: "Link a wallet" }).click();
    await page.getByRole("button", { name: "Test Wallet" }).click();
    await page.getByText("Wallet linked to @PixelPilot").waitFor();

    // Then the rewards are on their way to it, and the page follows them
    await page.getByRole("region", { name: "2 rewards are on the way to your wallet" }).waitFor();
    await reads;
    // When the service pays them
    await putReward(kv, project.id, paidReward(gems, wallet.address, SIGNATURE(2), clock.now()));
    await putReward(kv, project.id, paidReward(sol, wallet.address, SIGNATURE(3), clock.now()));

    // Then the page shows them sent, each with its payment on the explorer
    await sent.getByRole("link", {
      name: "See the 10 GEM payment on Solana Explorer (opens in a new tab)",
    })
      .waitFor();
    const links = await sent.getByRole("link").evaluateAll((anchors) =>
      anchors.map((a) => [a.getAttribute("aria-label"), a.getAttribute("href")])
    );
    assert.deepEqual(links, [
      [
        "See the 0.25 SOL payment on Solana Explorer (opens in a new tab)",
        explorerTxUrl("devnet", chain.rpcUrl, SIGNATURE(3)),
      ],
      [
        "See the 10 GEM payment on Solana Explorer (opens in a new tab)",
        explorerTxUrl("devnet", chain.rpcUrl, SIGNATURE(2)),
      ],
      [
        "See the 5 GEM payment on Solana Explorer (opens in a new tab)",
        explorerTxUrl("devnet", chain.rpcUrl, SIGNATURE(1)),
      ],
    ]);
    assert.equal(
      await page.getByTestId("rewards-on-the-way").count(),
      0,
      "nothing left on the way",
    );

    // And the server renders the same after a reload
    await page.reload();
    assert.equal(await sent.getByRole("listitem").count(), 3);
    assert.deepEqual(pageErrors, []);
  } finally {
    await chain.close();
  }
});

Deno.test("The linking page's rewards read needs the player's sign-in", async () => {
  await using served = await serveTestApp();
  const project = await createProjectWithOauth(served, "Sky Racers");
  const res = await served.t.app.request(`/api/link/${project.slug}/rewards`);
  assert.equal(res.status, 401);
  assert.equal((await res.json()).error.code, "not_signed_in");
});
