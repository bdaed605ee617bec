// The player's rewards on the linking page: what waits for their wallet, what is on its way, and
// what was sent (with its payment on the explorer). After a link, the page follows the payments
// until each is sent, so a player who just linked sees their rewards arrive.
import type { VNode } from "preact";
import { useEffect, useState } from "preact/hooks";

/** A reward as the page shows it (JSON-safe, built on the server by `routes/link/_rewards.ts`). */
export interface LinkRewardView {
  key: string;
  /** The amount as the pages write it: `10 GEM`, `0.5 SOL`, `10 of 5Vg7…sMmc (2 decimals)`. */
  amount: string;
  /** The token's mint (the amount's title), null for SOL. */
  mint: string | null;
  /** `waiting` for a wallet, `sending` (its payment is on its way), or `sent`. */
  state: "waiting" | "sending" | "sent";
  expiresAt: number;
  settledAt: number | null;
  /** The payment on the explorer, once sent. */
  explorerUrl: string | null;
}

// After a link, the rewards are read again this often, at most this many times (about a minute).
const FOLLOW_EVERY_MS = 2_000;
const FOLLOW_READS = 30;

function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function count(n: number, one: string, many: string): string {
  return n === 1 ? `1 ${one}` : `${n} ${many}`;
}

/**
 * The rewards, and `follow()`: reads them again until none is waiting or on its way (or a minute
 * passed). Also follows at once when the page opens linked with rewards still on their way.
 */
export function useRewards(
  slug: string,
  initial: LinkRewardView[],
  linked: boolean,
): { rewards: LinkRewardView[]; follow: () => void } {
  const [rewards, setRewards] = useState(initial);
  const [following, setFollowing] = useState(
    linked && initial.some((reward) => reward.state !== "sent"),
  );
  useEffect(() => {
    if (!following) return;
    let stopped = false;
    let reads = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    async function read() {
      reads++;
      const answer = await fetch(`/api/link/${slug}/rewards`, {
        credentials: "same-origin",
        headers: { accept: "application/json" },
      }).then((res) => res.ok ? res.json() : null).catch(() => null);
      if (stopped) return;
      const next: LinkRewardView[] | null = answer?.rewards ?? null;
      if (next) setRewards(next);
      const open = next === null || next.some((reward) => reward.state !== "sent");
      if (open && reads < FOLLOW_READS) timer = setTimeout(read, FOLLOW_EVERY_MS);
      else setFollowing(false);
    }
    timer = setTimeout(read, 0);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [following]);
  return { rewards, follow: () => setFollowing(true) };
}

/** One list of rewards under its heading, with what to do about them. */
function RewardList(
  { id, heading, note, rewards, detail }: {
    id: string;
    heading: string;
    note: string | null;
    rewards: LinkRewardView[];
    detail: (reward: LinkRewardView) => VNode | null;
  },
): VNode {
  return (
    <section class="card rewards" aria-labelledby={`${id}-heading`} data-testid={id}>
      <h2 id={`${id}-heading`}>{heading}</h2>
      {note && <p>{note}</p>}
      <ul class="reward-list">
        {rewards.map((reward) => (
          <li key={reward.key}>
            <strong title={reward.mint ?? undefined}>{reward.amount}</strong> {detail(reward)}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** What waits for the player's wallet, what is on its way to it, then what was sent. */
export function RewardsPanel(
  { rewards, linked, gameName }: { rewards: LinkRewardView[]; linked: boolean; gameName: string },
): VNode | null {
  if (rewards.length === 0) return null;
  // Once a wallet is linked, a reward that waited for one is on its way to it.
  const waiting = linked ? [] : rewards.filter((reward) => reward.state === "waiting");
  const onTheWay = rewards.filter((reward) =>
    reward.state === "sending" || (linked && reward.state === "waiting")
  );
  const sent = rewards.filter((reward) => reward.state === "sent");
  const them = waiting.length === 1 ? "it" : "them";
  return (
    <div aria-live="polite">
      {waiting.length > 0 && (
        <RewardList
          id="rewards-waiting"
          heading={`${count(waiting.length, "reward is", "rewards are")} waiting for your wallet`}
          note={`Link a wallet below and ${gameName} will send ${them} to it. Link it by the date shown, or the reward goes back to the game.`}
          rewards={waiting}
          detail={(reward) => <span class="muted">· link a wallet by {day(reward.expiresAt)}</span>}
        />
      )}
      {onTheWay.length > 0 && (
        <RewardList
          id="rewards-on-the-way"
          heading={`${
            count(onTheWay.length, "reward is", "rewards are")
          } on the way to your wallet`}
          note="This usually takes less than a minute."
          rewards={onTheWay}
          detail={() => null}
        />
      )}
      {sent.length > 0 && (
        <RewardList
          id="rewards-sent"
          heading="Rewards sent to your wallet"
          note={null}
          rewards={sent}
          detail={(reward) => (
            <>
              {reward.settledAt !== null && (
                <span class="muted">· sent on {day(reward.settledAt)} ·</span>
              )} {reward.explorerUrl && (
                <a
                  href={reward.explorerUrl}
                  target="_blank"
                  rel="noopener noreferrer"
                  aria-label={`See the ${reward.amount} payment on Solana Explorer (opens in a new tab)`}
                >
                  See it on Solana Explorer
                </a>
              )}
            </>
          )}
        />
      )}
    </div>
  );
}
