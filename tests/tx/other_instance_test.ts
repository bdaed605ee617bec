/**
 * What changed on another instance binds the next payout of an instance that paid for the project
 * before (it once checked and reserved from the records it knew; since issue 39 every payout reads
 * them): a revoked key, a changed policy, a relinked player, a used key, the limits.
 */
import assert from "node:assert/strict";
import type { Address } from "@solana/kit";
import { getTxRequest } from "../../kv/tx_requests.ts";
import { assertErrorCode } from "../support/assertions.ts";
import {
  balanceOf,
  onEachStore,
  startTxHarness,
  type TestStore,
  type TxHarness,
  type TxInstance,
} from "../support/tx_harness.ts";

/**
 * Instances `a` and `b` on one `store`, the player linked to `to`; `b` has paid once. The route
 * answers at once (`submitted`).
 */
async function withPaidInstance(
  store: TestStore,
  then: (h: TxHarness, b: TxInstance, to: Address) => Promise<void>,
): Promise<void> {
  await using h = await startTxHarness({ store, timing: { confirmWaitMs: 0 } });
  await h.policy({ maxSolPerTransfer: "1" });
  const to = await h.link(5);
  const b = await h.instance();
  const first = await b.post("transfer-sol", { ...PAYOUT, idempotencyKey: "first" });
  assert.equal(first.status, 200);
  await then(h, b, to);
}

/** The payout the tests send from instance `b` after its first. */
const PAYOUT = { to: { userId: 5 }, amount: "0.1", idempotencyKey: "next" };

onEachStore(
  "A key revoked on another instance is refused by an instance that paid before",
  async (store) => {
    await withPaidInstance(store, async (h, b, to) => {
      await h.revokeKey();

      const res = await b.post("transfer-sol", PAYOUT);

      await assertErrorCode(res, 401, "unauthorized");
      assert.equal(await getTxRequest(h.a.kv, h.project.id, PAYOUT.idempotencyKey), null);
      assert.equal(
        await balanceOf(h, to),
        100_000_000n,
        "only the first payout reached the player",
      );
    });
  },
);

onEachStore(
  "A policy changed on another instance decides the payout of an instance that paid before",
  async (store) => {
    await withPaidInstance(store, async (h, b) => {
      await h.policy({ maxSolPerTransfer: "" });

      const res = await b.post("transfer-sol", PAYOUT);

      await assertErrorCode(res, 403, "sol_transfers_disabled");
      assert.equal(await getTxRequest(h.a.kv, h.project.id, PAYOUT.idempotencyKey), null);
    });
  },
);

onEachStore(
  "A player relinked on another instance is paid at the new wallet by an instance that paid before",
  async (store) => {
    await withPaidInstance(store, async (h, b, before) => {
      const after = await h.link(5);

      const res = await b.post("transfer-sol", PAYOUT);

      assert.equal(res.status, 200);
      assert.equal((await res.json()).recipient, after);
      const stored = await getTxRequest(h.a.kv, h.project.id, PAYOUT.idempotencyKey);
      assert.equal(stored?.recipient, after);
      assert.notEqual(after, before);
    });
  },
);

onEachStore(
  "A key used before is answered as stored by an instance that paid before, nothing sent again",
  async (store) => {
    await withPaidInstance(store, async (h, b, to) => {
      const res = await b.post("transfer-sol", { ...PAYOUT, idempotencyKey: "first" });

      assert.equal(res.status, 200);
      const body = await res.json();
      const first = await getTxRequest(h.a.kv, h.project.id, "first");
      assert.equal(body.signature, first?.signature);
      assert.equal(first?.attempt, 1);
      await h.backgroundCheck();
      assert.equal(await balanceOf(h, to), 100_000_000n);
    });
  },
);

onEachStore(
  "Payouts of one project sent at once to an instance that paid before pass its limits exactly",
  async (store) => {
    await withPaidInstance(store, async (h, b) => {
      // The first payout and one after the policy's change (read afresh by it) take two of the
      // player's six places this hour.
      await h.policy({ maxSolPerTransfer: "1", perPlayerPerHour: 6 });
      assert.equal(
        (await b.post("transfer-sol", { ...PAYOUT, idempotencyKey: "relearn" })).status,
        200,
      );

      const answers = await Promise.all(
        Array.from(
          { length: 12 },
          (_, i) => b.post("transfer-sol", { ...PAYOUT, idempotencyKey: `at-once-${i}` }),
        ),
      );

      const codes = await Promise.all(answers.map(async (res) => {
        const body = await res.json();
        return res.status === 200 ? body.status : body.error.code;
      }));
      assert.equal(codes.filter((code) => code === "submitted").length, 4);
      assert.equal(codes.filter((code) => code === "player_rate_limited").length, 8);
    });
  },
);
