// The signed-in part of the linking page: shows the player's rewards and the linked wallet, links
// one through a browser wallet (connect, challenge, sign, verify) and unlinks, explaining each step
// and failure.
import type { Wallet } from "@wallet-standard/base";
import type { VNode } from "preact";
import { useEffect, useState } from "preact/hooks";
import {
  connectAccount,
  isUserRejection,
  signMessage,
  toBase64,
  WalletFlowError,
  watchWallets,
} from "./_wallets.ts";
import { type Step, stepText, WalletList } from "./_link_steps.tsx";
import { type LinkRewardView, RewardsPanel, useRewards } from "./_link_rewards.tsx";
import { ownValue } from "./_own_value.ts";
import { shortAddress } from "./_short_address.ts";

/** Props of the island (JSON-safe). */
export interface LinkFlowProps {
  slug: string;
  gameName: string;
  pageUrl: string;
  player: { id: number; name: string; displayName: string; avatar: string | null };
  link: { address: string; linkedAt: number } | null;
  rewards: LinkRewardView[];
}

type Notice = { kind: "error" | "success" | "info"; text: string };

class ApiFailure extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

const API_MESSAGES: Record<string, string> = {
  not_signed_in: "Your sign-in has expired. Sign in with Roblox again to continue.",
  challenge_expired: "The signing request expired or was already used. Please try again.",
  invalid_signature:
    "The signature does not match the wallet you connected. Sign with that same account and try again.",
  invalid_address: "The wallet shared an address that is not a Solana address.",
  project_not_found: "This game's linking page no longer exists.",
  bad_origin:
    "The request was blocked because it did not come from this page. Reload it and try again.",
  network: "Could not reach the server. Check your connection and try again.",
};

/** The interactive wallet panel of the linking page. */
export function LinkFlow(props: LinkFlowProps): VNode {
  const [link, setLink] = useState(props.link);
  const [wallets, setWallets] = useState<Wallet[] | null>(null);
  const [choosing, setChoosing] = useState(false);
  const [busy, setBusy] = useState<{ step: Step; wallet: string } | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [signedOut, setSignedOut] = useState(false);
  const [confirmingUnlink, setConfirmingUnlink] = useState(false);
  const [ready, setReady] = useState(false);
  const { rewards, follow } = useRewards(props.slug, props.rewards, props.link !== null);

  useEffect(() => {
    setReady(true);
    return watchWallets(setWallets);
  }, []);

  async function post<T>(action: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`/api/link/${props.slug}/${action}`, {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: body === undefined ? null : JSON.stringify(body),
      });
    } catch {
      throw new ApiFailure("network", "network");
    }
    const json = await res.json().catch(() => null);
    if (!res.ok) {
      throw new ApiFailure(json?.error?.code ?? "network", json?.error?.message ?? "");
    }
    return json as T;
  }

  function fail(error: unknown, walletName: string) {
    if (error instanceof ApiFailure) {
      if (error.code === "not_signed_in") setSignedOut(true);
      setNotice({
        kind: "error",
        text: ownValue(API_MESSAGES, error.code) ??
          `Something went wrong (${error.code}). Please try again.`,
      });
    } else if (error instanceof WalletFlowError) {
      const text = {
        no_account: `${walletName} did not share an account. Unlock it, then try again.`,
        no_signature: `${walletName} did not return a signature. Please try again.`,
        altered_message:
          `${walletName} changed the message before signing it, so the signature cannot be checked. Try another wallet.`,
      }[error.reason];
      setNotice({ kind: "error", text });
    } else if (isUserRejection(error)) {
      setNotice({ kind: "info", text: `You declined in ${walletName}. Nothing was changed.` });
    } else {
      const detail = error instanceof Error && error.message ? `: ${error.message}` : "";
      setNotice({ kind: "error", text: `${walletName} reported a problem${detail}` });
    }
  }

  async function linkWith(wallet: Wallet) {
    setNotice(null);
    try {
      setBusy({ step: "connect", wallet: wallet.name });
      const account = await connectAccount(wallet);
      setBusy({ step: "challenge", wallet: wallet.name });
      const challenge = await post<{ nonce: string; message: string }>("challenge", {
        address: account.address,
      });
      setBusy({ step: "sign", wallet: wallet.name });
      const signature = await signMessage(wallet, account, challenge.message);
      setBusy({ step: "verify", wallet: wallet.name });
      const result = await post<{ link: { address: string; linkedAt: number } }>("verify", {
        nonce: challenge.nonce,
        signature: toBase64(signature),
      });
      setLink(result.link);
      setChoosing(false);
      if (rewards.some((reward) => reward.state !== "sent")) follow();
      setNotice({
        kind: "success",
        text: `Wallet linked to @${props.player.name}. You can go back to ${props.gameName}.`,
      });
    } catch (error) {
      fail(error, wallet.name);
    } finally {
      setBusy(null);
    }
  }

  // Unlinking asks first (the form without JavaScript posts at once).
  function askUnlink(event: Event) {
    event.preventDefault();
    setNotice(null);
    setConfirmingUnlink(true);
  }

  async function unlink() {
    setConfirmingUnlink(false);
    setNotice(null);
    setBusy({ step: "unlink", wallet: "" });
    try {
      await post("unlink");
      setLink(null);
      setNotice({ kind: "success", text: "Wallet unlinked. The game no longer sees it." });
    } catch (error) {
      fail(error, "The wallet");
    } finally {
      setBusy(null);
    }
  }

  const signInAgain = `/auth/idp/start?next=${encodeURIComponent(`/link/${props.slug}`)}`;
  return (
    <div>
      <RewardsPanel rewards={rewards} linked={link !== null} gameName={props.gameName} />
      <section class="card" aria-labelledby="wallet-heading">
        <h2 id="wallet-heading">Your wallet</h2>
        {link
          ? (
            <>
              <p class="linked" data-testid="linked-state">
                <span aria-hidden="true">✓</span> Wallet linked:{" "}
                <span class="address" title={link.address}>{shortAddress(link.address)}</span>
              </p>
              <p class="muted">
                Full address:{" "}
                <span class="address" data-testid="linked-address">
                  {link.address}
                </span>
              </p>
              <p class="muted">
                Linked on {new Date(link.linkedAt).toISOString().slice(0, 10)}. {props.gameName}
                {" "}
                sends in-game rewards to this wallet.
              </p>
            </>
          )
          : <p data-testid="no-wallet">No wallet is linked to @{props.player.name} yet.</p>}
        <div class="actions">
          <button
            type="button"
            disabled={!ready || busy !== null || signedOut}
            onClick={() => {
              setNotice(null);
              setChoosing(true);
            }}
          >
            {link ? "Change wallet" : "Link a wallet"}
          </button>
          {link && (
            <form
              class="inline"
              method="post"
              action={`/api/link/${props.slug}/unlink`}
              onSubmit={askUnlink}
            >
              <button
                type="submit"
                class="secondary"
                disabled={busy !== null || signedOut || confirmingUnlink}
              >
                Unlink
              </button>
            </form>
          )}
        </div>
        {link && confirmingUnlink && (
          <div class="notice info" role="alertdialog" aria-labelledby="unlink-question">
            <p id="unlink-question">
              Unlink this wallet from @{props.player.name}? {props.gameName}{" "}
              will stop sending rewards to it until you link a wallet again.
            </p>
            <div class="actions">
              <button type="button" onClick={unlink}>Yes, unlink</button>
              <button
                type="button"
                class="secondary"
                onClick={() =>
                  setConfirmingUnlink(false)}
              >
                Keep it
              </button>
            </div>
          </div>
        )}
      </section>

      {choosing && !signedOut && (
        <section class="card" aria-labelledby="choose-heading">
          <h2 id="choose-heading">Choose your wallet</h2>
          <ol class="steps">
            <li>Pick the wallet app that holds the wallet you want to link.</li>
            <li>Approve the connection in that wallet.</li>
            <li>Sign the message it shows. Signing is free and does not send a transaction.</li>
          </ol>
          <WalletList
            wallets={wallets}
            busy={busy !== null}
            pageUrl={props.pageUrl}
            onPick={linkWith}
          />
          <div class="actions">
            <button
              type="button"
              class="secondary"
              disabled={busy !== null}
              onClick={() => setChoosing(false)}
            >
              Cancel
            </button>
          </div>
        </section>
      )}

      <div aria-live="polite">
        {busy && <div class="notice info" role="status">{stepText(busy.step, busy.wallet)}</div>}
        {notice && (
          <div class={`notice ${notice.kind}`} role={notice.kind === "error" ? "alert" : "status"}>
            {notice.text}
            {signedOut && (
              <>
                {" "}
                <a href={signInAgain}>Sign in again</a>
              </>
            )}
          </div>
        )}
      </div>
    </div>
  );
}
