// The list of browser wallets to choose from, shared by the linking and dashboard sign-in islands.
import type { Wallet } from "@wallet-standard/base";
import type { VNode } from "preact";

/** One button per wallet found in the browser. */
export function WalletButtons(
  props: { wallets: Wallet[]; busy: boolean; onPick: (wallet: Wallet) => void },
): VNode {
  return (
    <ul class="wallets">
      {props.wallets.map((wallet) => (
        <li key={wallet.name}>
          <button
            type="button"
            class="secondary block"
            disabled={props.busy}
            onClick={() => props.onPick(wallet)}
          >
            <img src={wallet.icon} alt="" width={24} height={24} />
            {wallet.name}
          </button>
        </li>
      ))}
    </ul>
  );
}
