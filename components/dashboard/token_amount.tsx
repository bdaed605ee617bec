/**
 * An amount of a token as the pages show it: `25 GEM` when the mint's metadata has a symbol, else
 * `25 of 5Vg7…sMmc (6 decimals)`; the whole mint address is in the title either way.
 */
import type { VNode } from "preact";
import { shortAddress } from "./format.ts";

/** A token amount in token units, with what names its mint. */
export interface TokenAmountData {
  amount: string;
  mint: string;
  symbol: string | null;
  decimals: number;
}

/** The amount as text: `25 GEM`, or `25 of 5Vg7…sMmc (6 decimals)`. */
export function tokenAmountText(token: TokenAmountData): string {
  return token.symbol
    ? `${token.amount} ${token.symbol}`
    : `${token.amount} of ${shortAddress(token.mint)} (${token.decimals} decimals)`;
}

/** The amount, its mint named by symbol or shortened, the full address on hover. */
export function TokenAmount(token: TokenAmountData): VNode {
  return (
    <span title={token.mint} data-testid="token-amount">
      {token.symbol ? `${token.amount} ${token.symbol}` : (
        <>
          {token.amount} of <span class="mono">{shortAddress(token.mint)}</span>{" "}
          <span class="muted">({token.decimals} decimals)</span>
        </>
      )}
    </span>
  );
}
