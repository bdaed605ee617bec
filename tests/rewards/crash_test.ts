// An instance killed (SIGKILL) between a player's link and their held reward's payment: the
// link's job and the reward's payment job are records in the store, so another instance takes
// them over once the dead one's lease ends, and pays the reward once, to the wallet linked.
import assert from "node:assert/strict";
import { balanceOf, okJson, startTxHarness } from "../support/tx_harness.ts";
import { startServiceProcess } from "../support/service_runner.ts";
import { getTxRequest } from "../../kv/tx_requests.ts";
import { getReward } from "../../kv/rewards.ts";
import { linkPlayer, rewardEvents, rewardsOf, solReward } from "../support/rewards_harness.ts";

const TEST_SECRET = "test-secret-test-secret-test-secret-0123";
// Past the dead instance's job leases (30 s) and its payment's first confirmation round.
const AFTER_LEASES_MS = 60_000;

for (
  const [heldAt, when] of [
    ["getLatestBlockhash", "before its payment was reserved"],
    ["sendTransaction", "after its payment was reserved and signed, before it was sent"],
  ] as const
) {
  Deno.test(`An instance killed between a link and its reward's payment, ${when}: another pays it once`, async () => {
    await using h = await startTxHarness({ store: "file", proxy: true });
    // The process runs on the wall clock: this instance's clock starts there too.
    h.a.clock.set(Date.now());
    await h.policy({ maxSolPerTransfer: "5" });
    const api = rewardsOf(h);
    await okJson(await api.grant(solReward(71, "crash")));
    await using doomed = await startServiceProcess({
      KV_PATH: h.kvPath!,
      SECRET: TEST_SECRET,
      RPC_URL_DEVNET: h.proxy.url,
      RPC_URL_MAINNET: h.proxy.url,
      PUBLISH_URL: h.standIn.url,
      IDP_URL: "http://127.0.0.1:9/oauth",
    });

    // Given: the player links; the other instance's worker takes the link's jobs and is paying
    // the reward when it is killed
    const held = h.proxy.hold(heldAt);
    const wallet = await linkPlayer(h, 71);
    await held.arrived;
    await doomed.kill();
    h.proxy.release({ forward: true });
    // It died where the test meant it to: its payment reserved only past the blockhash.
    const reserved = await getTxRequest(h.a.kv, h.project.id, "reward:crash");
    assert.equal(reserved !== null, heldAt === "sendTransaction");
    const before = (await getReward(h.a.kv, h.project.id, "crash")).value;
    assert.equal(before?.status, reserved ? "paying" : "held");

    // When: this instance runs the jobs once the dead one's leases end
    // (A round may find its payment not confirmed yet: its settlement then pays the reward.)
    const status = async () => (await getReward(h.a.kv, h.project.id, "crash")).value?.status;
    for (let round = 0; round < 5 && (await status()) !== "paid"; round++) {
      h.a.clock.advance(AFTER_LEASES_MS);
      await rewardEvents(h);
    }
    const events = await rewardEvents(h);

    // Then: paid once, to the wallet linked
    const paid = await api.read("crash");
    assert.equal(paid.status, "paid", JSON.stringify(paid));
    assert.equal(paid.recipient, wallet);
    assert.equal(await balanceOf(h, wallet), 500_000_000n);
    const payment = await okJson(await h.a.status("reward:crash"));
    assert.equal(payment.status, "confirmed");
    assert.deepEqual(events.map((e) => e.type), ["reward_held", "reward_paid"]);
  });
}
