/**
 * The project's open rewards (`lib/projects/rewards.ts`): held and paying, newest first, a page at a
 * time, each with its player, amount, why it waits and its expiry. A member whose role may cancel
 * rewards (`cancel_rewards`) cancels a held one here, as the game's API would.
 */
import type { VNode } from "preact";
import { DashboardConfirmSubmit } from "../../islands/dashboard_confirm.tsx";
import type { Project } from "../../kv/projects.ts";
import { roleAllows } from "../../lib/auth/roles.ts";
import type { OpenRewardPage } from "../../lib/projects/rewards.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { Island } from "../islands.tsx";
import { Cell } from "./cell.tsx";
import { type FrameData, ProjectFrame } from "./frame.tsx";
import { formatTime } from "./format.ts";
import { RewardCells } from "./player_rewards.tsx";

/** What the rewards page shows. */
interface RewardsPageData extends FrameData {
  project: Project;
  page: OpenRewardPage;
  /** True past the first page. */
  paged: boolean;
}

/** The rewards page body. */
export function RewardsPage(data: RewardsPageData): VNode {
  const { project, page } = data;
  const base = projectPath(project.id, "rewards");
  const cancels = roleAllows(data.role ?? "viewer", "cancel_rewards");
  return (
    <ProjectFrame data={data} project={project} tab="rewards">
      <section class="card" aria-labelledby="rewards-heading">
        <h2 id="rewards-heading">Held rewards</h2>
        <p class="hint">
          Rewards your game granted that are not paid yet, newest first: held until their player
          links a wallet, until the project's limits have room or for a retry, and those being paid.
          A held reward can be cancelled until its payment starts.
        </p>
        {page.rewards.length === 0
          ? (
            <p class="empty" data-testid="no-open-rewards">
              {data.paged ? "No older open reward." : "No reward is waiting to be paid."}
            </p>
          )
          : (
            <table class="list stack" data-testid="open-rewards">
              <thead>
                <tr>
                  <th>Player</th>
                  <th>Key</th>
                  <th>Amount</th>
                  <th>Status</th>
                  <th>Granted</th>
                  <th>Expires</th>
                  {cancels && <th></th>}
                </tr>
              </thead>
              <tbody>
                {page.rewards.map((reward) => (
                  <tr key={reward.key}>
                    <Cell label="Player">
                      <a href={`${projectPath(project.id, "players")}?q=${reward.userId}`}>
                        {reward.userId}
                      </a>
                    </Cell>
                    <RewardCells reward={reward} labels={page.labels} />
                    <Cell label="Granted">{formatTime(reward.createdAt)}</Cell>
                    <Cell label="Expires">{formatTime(reward.expiresAt)}</Cell>
                    {cancels && (
                      <Cell label="">
                        {reward.status === "held" && (
                          <form method="post" action={`${base}/cancel`} class="inline">
                            <input type="hidden" name="key" value={reward.key} />
                            <Island
                              component={DashboardConfirmSubmit}
                              props={{
                                label: "Cancel",
                                question:
                                  `Cancel the reward ${reward.key} of player ${reward.userId}? ` +
                                  "It will never be paid, and your game is told (reward_cancelled).",
                                className: "secondary",
                                testId: "cancel-reward",
                              }}
                            />
                          </form>
                        )}
                      </Cell>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        {(page.next || data.paged) && (
          <p>
            {data.paged && <a href={base}>Newest</a>}
            {data.paged && page.next && " · "}
            {page.next && (
              <a
                href={`${base}?cursor=${encodeURIComponent(page.next)}`}
                data-testid="rewards-next"
              >
                Older rewards
              </a>
            )}
          </p>
        )}
      </section>
    </ProjectFrame>
  );
}
