/**
 * Sandbox SOL (`lib/projects/sandbox_funds.ts`): on a service on this machine the overview funds
 * the managed wallet through the cluster's RPC, and "funded" in the set-up list means SOL above
 * zero; off this machine the action is refused.
 */
import assert from "node:assert/strict";
import { type Address, createSolanaRpc } from "@solana/kit";
import { assertErrorCode } from "../support/assertions.ts";
import { getPage, postForm, postJson, startWalletProject } from "../support/dashboard.ts";
import { createTestApp, testConfig } from "../support/test_app.ts";
import { ApiError } from "../../core/api_error.ts";
import { createProject } from "../../kv/projects.ts";
import { createProjectWallet } from "../../lib/projects/wallet.ts";
import { fundFromSandbox, isSandboxService } from "../../lib/projects/sandbox_funds.ts";

/** The overview's set-up step for the wallet, as text. */
function walletStep(html: string): string {
  const step = html.match(/<li>(?:(?!<\/li>).)*Create and fund the managed wallet.*?<\/li>/s);
  assert.ok(step, "the set-up list has the wallet step");
  return step[0];
}

Deno.test("POST /dashboard/projects/:id/wallet/sandbox-sol funds a new project's wallet on this machine", async () => {
  await using w = await startWalletProject();
  const { chain, t, dev, wallet: walletAddress } = w;
  const project = { id: w.projectId };

  // Given a wallet created a moment ago: 0 SOL, so the step is not done
  const before = await (await getPage(t.app, `/dashboard/projects/${project.id}`, dev.jar)).text();
  assert.ok(before.includes('data-testid="fund-sandbox"'), "the overview offers sandbox SOL");
  assert.ok(!walletStep(before).includes("Done"), walletStep(before));

  // When the developer clicks "Fund with sandbox SOL"
  const res = await postForm(t.app, `/dashboard/projects/${project.id}/wallet/sandbox-sol`, {}, {
    jar: dev.jar,
  });

  // Then the wallet holds 2 SOL, and the overview shows them and calls the step done
  assert.equal(res.status, 303);
  const balance = await createSolanaRpc(chain.rpcUrl)
    .getBalance(walletAddress as Address, { commitment: "confirmed" }).send();
  assert.equal(balance.value, 2_000_000_000n);
  const after = await (await getPage(t.app, res.headers.get("location")!, dev.jar)).text();
  assert.ok(after.includes("2 sandbox SOL added to the managed wallet"), "the flash says so");
  assert.match(after, /data-testid="wallet-balance">2 SOL</);
  assert.ok(walletStep(after).includes("Done"), walletStep(after));
});

Deno.test("POST /dashboard/projects/:id/wallet/sandbox-sol is refused off this machine and past the limit", async (t) => {
  await t.step("a deployment: 403 sandbox_only, nothing asked of the cluster", async () => {
    // The RPC URL points nowhere: an airdrop attempt would fail with 502, not 403.
    await using deployed = await createTestApp({
      config: { baseUrl: "https://blocklink.example" },
    });
    const project = await createProject(deployed.kv, {
      name: "Live Game",
      cluster: "devnet",
      createdBy: "dev",
      now: deployed.clock.now(),
    });
    const walletAddress = await createProjectWallet(deployed.ctx, project.id);
    await assert.rejects(
      fundFromSandbox(deployed.ctx, { project: { ...project, walletAddress }, developer: "dev" }),
      (e) => e instanceof ApiError && e.status === 403 && e.code === "sandbox_only",
    );
    assert.equal(isSandboxService(deployed.ctx), false);
  });

  await t.step("this machine: the airdrops count toward the developer's hourly limit", async () => {
    await using w = await startWalletProject({
      abuseLimits: { ...testConfig().abuseLimits, sandbox_airdrop: 1 },
    });
    const path = `/dashboard/projects/${w.projectId}/wallet/sandbox-sol`;
    assert.equal((await postJson(w.t.app, path, undefined, { jar: w.dev.jar })).status, 200);
    await assertErrorCode(
      await postJson(w.t.app, path, undefined, { jar: w.dev.jar }),
      429,
      "rate_limited",
    );
  });
});
