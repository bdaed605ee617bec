/**
 * The project's open rewards (`lib/projects/rewards.ts`): the page, for every member, and the
 * cancel of a held one, for a role that may cancel rewards (admin and owner).
 */
import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { sameOrigin } from "../../http/same_origin.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { ApiError } from "../../core/api_error.ts";
import { isUsableRewardKey } from "../../lib/rewards/request_body.ts";
import { cancelProjectReward, readOpenRewards } from "../../lib/projects/rewards.ts";
import { rewardView } from "../../lib/rewards/view.ts";
import { RewardsPage } from "../../components/dashboard/rewards_page.tsx";
import { projectPage } from "./_page.tsx";
import { projectAction } from "./_action.ts";

/** `GET /dashboard/projects/:id/rewards` and `POST /dashboard/projects/:id/rewards/cancel`. */
export function rewardRoutes(ctx: AppContext): Hono {
  const origin = sameOrigin({ baseUrl: ctx.config.baseUrl });
  return new Hono()
    .get("/dashboard/projects/:id/rewards", (c) =>
      projectPage(ctx, c, async (data, project) => {
        const cursor = c.req.query("cursor")?.slice(0, 500) || null;
        return {
          title: `Held rewards · ${project.name}`,
          body: (
            <RewardsPage
              {...data}
              project={project}
              page={await readOpenRewards(ctx, project, cursor)}
              paged={cursor !== null}
            />
          ),
        };
      }))
    .post(
      "/dashboard/projects/:id/rewards/cancel",
      origin,
      projectAction(ctx, { tab: "rewards", can: "cancel_rewards", form: "rewards" }, async (
        { developer, fields, project },
      ) => {
        // As sent: a reward's key may begin or end with spaces.
        const key = fields.key;
        if (typeof key !== "string" || !isUsableRewardKey(key)) {
          throw new ApiError("not_found", "No reward has this key");
        }
        const reward = await cancelProjectReward(ctx, { developer, projectId: project.id, key });
        return {
          json: { reward: rewardView(reward) },
          flash: {
            kind: "success",
            message: `Reward ${reward.key} of player ${reward.userId} cancelled`,
          },
          redirect: projectPath(project.id, "rewards"),
        };
      }),
    );
}
