// A node that hides a landed payment (issue 28): it answers `null` from getSignatureStatuses and
// getTransaction while claiming its whole history. Nothing may then call the attempt dead: not the
// background check after a restart, not the retry of its key.
import assert from "node:assert/strict";
import type { Address } from "@solana/kit";
import { getTxRequest, type TxRequestRecord } from "../../kv/tx_requests.ts";
import {
  balanceOf,
  finalizePast,
  okJson,
  onEachStore,
  startTxHarness,
  type TestStore,
  type TxHarness,
  type TxInstance,
} from "../support/tx_harness.ts";
import { getPage, signInDeveloper } from "../support/dashboard.ts";
import { createTestWallet } from "../support/sign_in.ts";
import { projectPath } from "../../http/dashboard_paths.ts";

const BODY = { to: { userId: 31 }, amount: "1", idempotencyKey: "hidden" };
const ONE_SOL = 1_000_000_000n;
const DEVELOPER = createTestWallet();
/** Agave's answer for address history on a node run without transaction history. */
const NO_HISTORY = { code: -32011, message: "Transaction history is not available from this node" };

/** What the scenario leaves for the test to act on. */
interface HiddenLanding {
  h: TxHarness;
  /** The instance started on the store after the first one was killed. */
  restarted: TxInstance;
  to: Address;
  first: TxRequestRecord;
}

/**
 * Given, as the issue found it: the first attempt lands but its send's answer is lost; the node
 * hides its status; the cluster moves well past the blockhash's last valid height; the instance
 * is killed and another one starts on the same store.
 */
async function withHiddenLanding(
  store: TestStore,
  then: (s: HiddenLanding) => Promise<void>,
): Promise<void> {
  await using h = await startTxHarness({
    autoAdvance: false,
    store,
    proxy: true,
    timing: { confirmWaitMs: 100 },
    developer: DEVELOPER.address,
  });
  await h.policy({ maxSolPerTransfer: "5" });
  const to = await h.link(BODY.to.userId);
  h.chain.faults.hideStatuses(true);
  h.proxy.loseAnswerNext("sendTransaction", 1);
  const answered = await okJson(await h.a.post("transfer-sol", BODY));
  assert.equal(answered.status, "submitted");
  const first = (await getTxRequest(h.a.kv, h.project.id, BODY.idempotencyKey))!;
  // It landed, then the finalized chain moved far past its last valid height.
  h.chain.advanceSlots(2);
  assert.equal(await balanceOf(h, to), ONE_SOL);
  finalizePast(h, first.signed!, 40);
  await h.kill(h.a);
  const restarted = await h.instance();
  await then({ h, restarted, to, first });
}

onEachStore(
  "A landed payment the node hides is never settled failed after a restart: the wallet's own history confirms it",
  async (store) => {
    await withHiddenLanding(store, async ({ h, restarted, to, first }) => {
      // When: the restarted instance's background check looks at it
      await h.backgroundCheck();

      // Then: confirmed with its one signature, found in the managed wallet's own history
      const after = await okJson(await restarted.status(BODY.idempotencyKey));
      assert.deepEqual([after.status, after.signature, after.error], [
        "confirmed",
        first.signature,
        null,
      ]);
      assert.equal(await balanceOf(h, to), ONE_SOL);
      assert.equal((await h.txEvents()).length, 1);
      assert.ok((h.proxy.counts().getSignaturesForAddress ?? 0) >= 1);
    });
  },
);

onEachStore(
  "A key whose landed payment the node hides pays once when the client resends it after a restart",
  async (store) => {
    await withHiddenLanding(store, async ({ h, restarted, to, first }) => {
      // Given: the node keeps no address history either, so nothing proves anything
      h.proxy.lieNext("getSignaturesForAddress", 1_000, NO_HISTORY);
      await h.backgroundCheck();
      const waiting = (await getTxRequest(restarted.kv, h.project.id, BODY.idempotencyKey))!;
      assert.deepEqual([waiting.status, waiting.error], ["submitted", null]);
      assert.equal(typeof waiting.expiryUnprovenAt, "number");
      // And the dashboard shows it as needing attention
      const dev = await signInDeveloper(restarted.app, DEVELOPER);
      const page = await getPage(
        restarted.app,
        `${projectPath(h.project.id)}/transactions`,
        dev.jar,
      );
      assert.ok((await page.text()).includes('data-testid="tx-attention"'));

      // When: the client, which never saw a final answer, resends the same key and body
      const resent = await okJson(await restarted.post("transfer-sol", BODY));

      // Then: the recipient is paid once: the stored attempt answers, nothing new is signed or sent
      h.chain.advanceSlots(2);
      assert.equal(await balanceOf(h, to), ONE_SOL);
      assert.deepEqual([resent.status, resent.signature], ["submitted", first.signature]);
      const stored = (await getTxRequest(restarted.kv, h.project.id, BODY.idempotencyKey))!;
      assert.equal(stored.attempt, 1);
      assert.deepEqual(await h.txEvents(), []);

      // When: the truth is visible again
      h.chain.faults.clear();
      h.proxy.lieNext("getSignaturesForAddress", 0, NO_HISTORY);
      await h.backgroundCheck();

      // Then: the key is confirmed with its one payment and one event
      const after = await okJson(await restarted.post("transfer-sol", BODY));
      assert.deepEqual([after.status, after.signature], ["confirmed", first.signature]);
      assert.equal(await balanceOf(h, to), ONE_SOL);
      assert.equal((await h.txEvents()).length, 1);
    });
  },
);

onEachStore(
  "A lagging node's wallet history is no proof of expiry: it is read at the finalized slot's context",
  async (store) => {
    await withHiddenLanding(store, async ({ h, restarted, to, first }) => {
      // Given: history reads lag to just before the landing, and the status lookup claims the tip
      const history = await h.rpc.getSignaturesForAddress(h.wallet!).send();
      const landedAt = Number(history.find((item) => item.signature === first.signature)!.slot);
      h.chain.faults.hideStatuses(false);
      h.chain.faults.lagHistory(h.chain.clock().slot - landedAt + 1);
      h.proxy.rewrite("getSignatureStatuses", (answer) => {
        (answer.result as { context: { slot: number } }).context.slot = h.chain.clock().slot;
      });

      // When
      await h.backgroundCheck();

      // Then: not failed; the lagging node refused the history read at the context asked for
      const stored = (await getTxRequest(restarted.kv, h.project.id, BODY.idempotencyKey))!;
      assert.deepEqual([stored.status, stored.error], ["submitted", null]);
      assert.equal(await balanceOf(h, to), ONE_SOL);

      // When: the node catches up
      h.chain.faults.clear();
      h.proxy.rewrite("getSignatureStatuses", null);
      await h.backgroundCheck();

      // Then
      const after = await okJson(await restarted.status(BODY.idempotencyKey));
      assert.deepEqual([after.status, after.signature], ["confirmed", first.signature]);
    });
  },
);

onEachStore(
  "A passing failure of the wallet-history read fails the round, not the proof: no attention mark",
  async (store) => {
    await withHiddenLanding(store, async ({ h, restarted, first }) => {
      // Given: the node answers the history read with a 503 once
      h.proxy.failNext("getSignaturesForAddress", 1);

      // When
      await h.backgroundCheck();

      // Then: nothing is decided or marked
      const waiting = (await getTxRequest(restarted.kv, h.project.id, BODY.idempotencyKey))!;
      assert.deepEqual([waiting.status, waiting.expiryUnprovenAt], ["submitted", undefined]);

      // When: the next round reads the history
      await h.backgroundCheck();

      // Then: the wallet's history confirms it
      const after = await okJson(await restarted.status(BODY.idempotencyKey));
      assert.deepEqual([after.status, after.signature], ["confirmed", first.signature]);
    });
  },
);

Deno.test("An attempt whose expiry cannot be proven is looked at less and less often, and settles once the truth shows", async () => {
  await withHiddenLanding("file", async ({ h, restarted, first }) => {
    // Given: a node that hides the landing and keeps no address history
    h.proxy.lieNext("getSignaturesForAddress", 100_000, NO_HISTORY);
    const interval = restarted.ctx.tx.timing.confirmIntervalMs;

    // When: ten minutes pass, the worker looking for due rounds every 1.5 s
    const steps = (10 * 60_000) / interval;
    for (let i = 0; i < steps; i++) {
      restarted.clock.advance(interval);
      await h.txEvents();
    }

    // Then: far fewer rounds than one per 1.5 s (400), the last ones minutes apart
    const rounds = h.proxy.counts().getSignaturesForAddress ?? 0;
    assert.ok(rounds >= 10 && rounds <= 80, `${rounds} rounds in ten minutes`);
    const waiting = (await getTxRequest(restarted.kv, h.project.id, BODY.idempotencyKey))!;
    assert.equal(waiting.status, "submitted");

    // When: the node shows the truth, and the longest wait (5 minutes) passes
    h.chain.faults.clear();
    for (let i = 0; i < (5 * 60_000) / interval + 1; i++) {
      restarted.clock.advance(interval);
      await h.txEvents();
    }

    // Then
    const after = await okJson(await restarted.status(BODY.idempotencyKey));
    assert.deepEqual([after.status, after.signature], ["confirmed", first.signature]);
  });
});
