import { Hono, type MiddlewareHandler } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { ApiError } from "../../core/api_error.ts";
import { readJsonBody } from "../../http/validate.ts";
import { getReward, listRewardsOfPlayer } from "../../kv/rewards.ts";
import { parseUserId } from "../../lib/user_id.ts";
import { grantReward } from "../../lib/rewards/grant.ts";
import { cancelReward } from "../../lib/rewards/moves.ts";
import { payReward } from "../../lib/rewards/pay.ts";
import { rewardView } from "../../lib/rewards/view.ts";
import {
  isUsableRewardKey,
  rewardBodySchema,
  toRewardInput,
} from "../../lib/rewards/request_body.ts";
import { startDeadline } from "../../lib/tx/rpc/timing.ts";
import type { V1Env } from "./guard.ts";

/**
 * Rewards (an extension): granted to a player by user id, held until they link a wallet, paid
 * through the payout's path (`lib/rewards/`). Granting and cancelling need the `pay` scope.
 */
export function rewardRoutes(
  ctx: AppContext,
  guards: { read: MiddlewareHandler<V1Env>; pay: MiddlewareHandler<V1Env> },
): Hono<V1Env> {
  return new Hono<V1Env>()
    .post("/rewards", guards.pay, async (c) => {
      // Started before the body is read, as a payout's: the answer comes within its time.
      const deadline = startDeadline(ctx.tx.timing);
      const input = toRewardInput(await readJsonBody(c, rewardBodySchema));
      const caller = { projectId: c.get("project").id, keyId: c.get("keyId") };
      return c.json(rewardView(await grantReward(ctx, caller, input, { deadline })));
    })
    .get("/rewards/:key", guards.read, async (c) => {
      const projectId = c.get("project").id;
      const key = c.req.param("key");
      let reward = isUsableRewardKey(key) ? (await getReward(ctx.kv, projectId, key)).value : null;
      if (!reward) throw new ApiError("not_found", "No reward has this key");
      // A payment settled since is answered as such (its job would move the reward soon).
      if (reward.status === "paying") {
        const outcome = await payReward(ctx, { projectId, key }, {
          deadline: startDeadline(ctx.tx.timing),
        });
        reward = outcome.reward ?? reward;
      }
      return c.json(rewardView(reward));
    })
    .post("/rewards/:key/cancel", guards.pay, async (c) => {
      const key = c.req.param("key");
      if (!isUsableRewardKey(key)) throw new ApiError("not_found", "No reward has this key");
      const reward = await cancelReward(ctx, { projectId: c.get("project").id, key });
      return c.json(rewardView(reward));
    })
    .get("/players/:userId/rewards", guards.read, async (c) => {
      const userId = parseUserId(c.req.param("userId"));
      if (userId === null) {
        throw new ApiError("invalid_user_id", "userId must be a positive integer");
      }
      const rewards = await listRewardsOfPlayer(ctx.kv, c.get("project").id, userId);
      return c.json({ rewards: rewards.map(rewardView) });
    });
}
