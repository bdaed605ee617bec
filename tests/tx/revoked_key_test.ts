/**
 * A deleted project or a revoked key never pays (issue 22, item 6): the guard's key cache may
 * still hold the key on another instance, but a payout sent after the revocation or deletion was
 * answered is refused there too, and nothing is reserved or sent.
 */
import assert from "node:assert/strict";
import type { Address } from "@solana/kit";
import { getTxRequest } from "../../kv/tx_requests.ts";
import { checkTxRequest } from "../../lib/tx/request/checks.ts";
import { reserveTxRequest } from "../../lib/tx/send/reserve.ts";
import { startDeadline } from "../../lib/tx/rpc/timing.ts";
import { ApiError } from "../../core/api_error.ts";
import { deleteDeveloperProject } from "../../lib/projects/ownership.ts";
import { assertErrorCode } from "../support/assertions.ts";
import {
  onEachStore,
  startTxHarness,
  type TestStore,
  type TxHarness,
  type TxInstance,
} from "../support/tx_harness.ts";
import { call } from "../support/test_app.ts";

/** Instances `a` and `b` on one `store`; `b` has used the key, so its cache holds it. */
async function withTwoInstances(
  store: TestStore,
  then: (h: TxHarness, b: TxInstance, to: Address) => Promise<void>,
): Promise<void> {
  await using h = await startTxHarness({ store });
  await h.policy({ maxSolPerTransfer: "1" });
  const to = await h.link(5);
  const b = await h.instance();
  assert.equal((await call(b.app, "/v1/project", { apiKey: h.apiKey })).status, 200);
  await then(h, b, to);
}

/** The payout the tests send from instance `b`. */
const PAYOUT = { to: { userId: 5 }, amount: "0.5", idempotencyKey: "after" };

async function assertNothingPaid(h: TxHarness, to: Address): Promise<void> {
  assert.equal(await getTxRequest(h.a.kv, h.project.id, PAYOUT.idempotencyKey), null);
  const balance = await h.rpc.getBalance(to, { commitment: "processed" }).send();
  assert.equal(balance.value, 0n);
  assert.deepEqual(await h.txEvents(), []);
}

onEachStore(
  "A payout sent after its key's revocation was answered is refused on every instance",
  async (store) => {
    await withTwoInstances(store, async (h, b, to) => {
      // Given: the key was revoked on instance a, and the revocation answered.
      await h.revokeKey();

      // When: instance b, whose cache still holds the key, gets a payout with it.
      const res = await b.post("transfer-sol", PAYOUT);

      // Then: refused as the spec's unauthorized, and nothing reserved, sent or announced.
      await assertErrorCode(res, 401, "unauthorized");
      await assertNothingPaid(h, to);
    });
  },
);

onEachStore(
  "A payout sent after its project's deletion was answered is refused on every instance",
  async (store) => {
    await withTwoInstances(store, async (h, b, to) => {
      // Given: the project was deleted on instance a, and the deletion answered.
      await deleteDeveloperProject(h.a.ctx, h.project.createdBy, h.project.id, h.project.name);

      // When: instance b, whose cache still holds the key, gets a payout with it.
      const res = await b.post("transfer-sol", PAYOUT);

      // Then: refused, and nothing reserved, sent or announced.
      await assertErrorCode(res, 401, "unauthorized");
      await assertNothingPaid(h, to);
    });
  },
);

onEachStore(
  "reserveTxRequest() refuses a payout whose key was revoked after its checks passed",
  async (store) => {
    await withTwoInstances(store, async (h, b, to) => {
      // Given: instance b checked a payout (steps 1 to 11 passed with the key still active)...
      const keyId = (await b.ctx.apiKeys.resolve(h.apiKey))!.keyId;
      const caller = { projectId: h.project.id, keyId };
      const input = {
        body: { to: PAYOUT.to, mint: null, amount: PAYOUT.amount },
        idempotencyKey: "after",
      };
      const deadline = startDeadline(b.ctx.tx.timing);
      const checked = await checkTxRequest(b.ctx, caller, "transfer-sol", input, { deadline });
      assert.equal(checked.kind, "checked");

      // ...when instance a revoked the key.
      await h.revokeKey();

      // When: b reserves it.
      const reserving = reserveTxRequest(b.ctx, checked.request);

      // Then: the reservation's own commit refuses it, and nothing is reserved.
      await assert.rejects(reserving, (e) => e instanceof ApiError && e.code === "unauthorized");
      await assertNothingPaid(h, to);
    });
  },
);
