/** Linked players of a project, searchable by Roblox user id or wallet address. */
import type { VNode } from "preact";
import type { Project } from "../../kv/projects.ts";
import { type FrameData, ProjectFrame } from "./frame.tsx";
import { explorerAddressUrl, formatTime } from "./format.ts";
import { Cell } from "./cell.tsx";
import { PlayerRewards } from "./player_rewards.tsx";
import type { PlayerRewardList } from "../../lib/projects/rewards.ts";

/** One linked player. */
export interface PlayerRow {
  userId: number;
  address: string;
  linkedAt: number;
}

/** What the players page shows. */
interface PlayersPageData extends FrameData {
  project: Project;
  rpcUrl: string;
  query: string;
  /** Why the query could not be used, if so. */
  queryProblem: string | null;
  players: PlayerRow[];
  /** True when only the first page of links is listed. */
  truncated: boolean;
  /** The rewards of the player searched for by user ID; null for another search. */
  rewards: PlayerRewardList | null;
}

/** The players page body. */
export function PlayersPage(data: PlayersPageData): VNode {
  const { project } = data;
  return (
    <ProjectFrame data={data} project={project} tab="players">
      <section class="card" aria-labelledby="players-heading">
        <h2 id="players-heading">Linked players</h2>
        <form method="get" role="search" data-testid="player-search">
          <label for="q">Roblox user ID or wallet address</label>
          <div class="row2">
            <input id="q" name="q" value={data.query} autocomplete="off" spellcheck={false} />
            <button type="submit">Search</button>
          </div>
        </form>
        {data.queryProblem && <p class="notice error" role="alert">{data.queryProblem}</p>}
        {data.players.length === 0
          ? (
            <p class="empty" data-testid="no-players">
              {data.query ? "No linked player matches." : "No player has linked a wallet yet."}
            </p>
          )
          : (
            <table class="list stack" data-testid="player-list">
              <thead>
                <tr>
                  <th>Roblox user</th>
                  <th>Wallet</th>
                  <th>Linked</th>
                </tr>
              </thead>
              <tbody>
                {data.players.map((p) => (
                  <tr key={p.userId}>
                    <Cell label="Roblox user">
                      <a href={`https://www.roblox.com/users/${p.userId}/profile`}>{p.userId}</a>
                    </Cell>
                    <Cell label="Wallet">
                      <a
                        class="mono"
                        href={explorerAddressUrl(project.cluster, data.rpcUrl, p.address)}
                      >
                        {p.address}
                      </a>
                    </Cell>
                    <Cell label="Linked">{formatTime(p.linkedAt)}</Cell>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        {data.truncated && (
          <p class="hint">Showing the first {data.players.length} links; search to find others.</p>
        )}
      </section>
      {data.rewards && (
        <PlayerRewards data={data.rewards} cluster={project.cluster} rpcUrl={data.rpcUrl} />
      )}
    </ProjectFrame>
  );
}
