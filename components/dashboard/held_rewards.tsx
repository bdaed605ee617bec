/**
 * The rewards held for players against the managed wallet (`lib/projects/rewards.ts`), on the
 * overview: a warning for each asset the wallet cannot cover, and what is held of each asset.
 */
import type { VNode } from "preact";
import type { HeldAsset } from "../../lib/projects/rewards.ts";
import { Notice } from "../layout.tsx";
import { Cell } from "./cell.tsx";
import { shortAddress } from "./format.ts";
import { tokenAmountText } from "./token_amount.tsx";

/** An amount of the asset as the pages write it: `2 SOL`, `10 GEM`, `10 of 5Vg7…sMmc (2 decimals)`. */
function amountOf(asset: HeldAsset, amount: string): string {
  if (!asset.token) return `${amount} SOL`;
  const { decimals, symbol } = asset.token;
  if (decimals === null) return `${amount} base units of ${shortAddress(asset.asset)}`;
  return tokenAmountText({ amount, mint: asset.asset, symbol, decimals });
}

/** A warning for each asset the wallet holds less of than is held for players. */
export function HeldRewardsNotices({ assets }: { assets: HeldAsset[] }): VNode | null {
  const short = assets.filter((asset) => asset.short !== null);
  if (short.length === 0) return null;
  return (
    <div data-testid="held-not-covered">
      {short.map((asset) => (
        <Notice key={asset.asset} kind="error">
          <strong>Held rewards not covered:</strong> players are owed {amountOf(asset, asset.held)}
          {" "}
          in rewards held until they link a wallet, but the managed wallet holds{" "}
          {amountOf(asset, asset.balance!)}. Send it at least {amountOf(asset, asset.short!)}
          {asset.token ? "" : " (plus fees)"}, or their rewards cannot be paid when they link.
        </Notice>
      ))}
    </div>
  );
}

/** What is held of each asset, against the wallet; nothing when no reward is held. */
export function HeldRewardsSection({ assets }: { assets: HeldAsset[] }): VNode | null {
  if (assets.length === 0) return null;
  return (
    <section class="card" aria-labelledby="held-heading">
      <h2 id="held-heading">Rewards held for players</h2>
      <p class="hint">
        Rewards your game granted to players who have not linked a wallet yet (and those being
        paid). Each is paid from the managed wallet when its player links, so keep it able to cover
        them.
      </p>
      <table class="list stack" data-testid="held-rewards">
        <thead>
          <tr>
            <th>Held for players</th>
            <th>The wallet holds</th>
            <th>Covered</th>
          </tr>
        </thead>
        <tbody>
          {assets.map((asset) => (
            <tr key={asset.asset}>
              <Cell label="Held for players">
                <span title={asset.token ? asset.asset : undefined}>
                  {amountOf(asset, asset.held)}
                </span>
              </Cell>
              <Cell label="The wallet holds">
                {asset.balance === null
                  ? <span class="muted">Could not be read right now</span>
                  : amountOf(asset, asset.balance)}
              </Cell>
              <Cell label="Covered">
                {asset.short !== null
                  ? <span class="badge err">Short by {amountOf(asset, asset.short)}</span>
                  : asset.mintable
                  ? <span class="badge ok">Yes: the wallet mints it</span>
                  : asset.balance === null
                  ? <span class="badge">Unknown</span>
                  : <span class="badge ok">Yes</span>}
              </Cell>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
