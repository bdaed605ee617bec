// What the linking page shows while a player links: each step's text, and the wallets found in
// the browser (or, with none, how to get one on a computer or a phone).
import type { Wallet } from "@wallet-standard/base";
import type { VNode } from "preact";
import { WalletButtons } from "./_wallet_buttons.tsx";

/** A step of linking or unlinking, for the status line. */
export type Step = "connect" | "challenge" | "sign" | "verify" | "unlink";

/** The status line of a step. */
export function stepText(step: Step, wallet: string): string {
  switch (step) {
    case "connect":
      return `Step 1 of 3: approve the connection in ${wallet}.`;
    case "challenge":
      return "Step 2 of 3: preparing the message to sign…";
    case "sign":
      return `Step 3 of 3: ${wallet} is asking you to sign a message. It is free and does not send a transaction.`;
    case "verify":
      return "Checking the signature…";
    case "unlink":
      return "Unlinking…";
  }
}

/** The wallets to pick from, or how to get one. */
export function WalletList(
  props: { wallets: Wallet[] | null; busy: boolean; pageUrl: string; onPick: (w: Wallet) => void },
): VNode {
  if (props.wallets === null) return <p>Looking for wallet apps in this browser…</p>;
  if (props.wallets.length === 0) {
    const url = encodeURIComponent(props.pageUrl);
    const ref = encodeURIComponent(new URL(props.pageUrl).origin);
    return (
      <div class="notice info" data-testid="no-wallets">
        <p>No Solana wallet was found in this browser.</p>
        <p>
          On a computer, install a wallet extension such as Phantom, Solflare or Backpack, then
          reload this page.
        </p>
        <p>On a phone, open this page in your wallet app's browser:</p>
        <div class="actions">
          <a class="button secondary" href={`https://phantom.app/ul/browse/${url}?ref=${ref}`}>
            Open in Phantom
          </a>
          <a class="button secondary" href={`https://solflare.com/ul/v1/browse/${url}?ref=${ref}`}>
            Open in Solflare
          </a>
        </div>
        <p class="muted">You will sign in with Roblox again there.</p>
      </div>
    );
  }
  return <WalletButtons wallets={props.wallets} busy={props.busy} onPick={props.onPick} />;
}
