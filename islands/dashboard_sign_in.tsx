// Dashboard sign-in with a browser wallet: connect, ask for the message, sign it, verify, land on
// the requested page. On a local playground it also offers a sandbox key kept in this browser,
// since a fresh browser has no wallet extension.
import type { Wallet } from "@wallet-standard/base";
import type { VNode } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import {
  connectAccount,
  isUserRejection,
  signMessage,
  toBase64,
  WalletFlowError,
  watchWallets,
} from "./_wallets.ts";
import { WalletButtons } from "./_wallet_buttons.tsx";
import { ownValue } from "./_own_value.ts";
import {
  decodeSandboxSecret,
  SANDBOX_STORAGE,
  sandboxAddress,
  signWithSandboxKey,
} from "./_sandbox_key.ts";

/** Props of the island (JSON-safe). */
export interface DashboardSignInProps {
  serviceName: string;
  /** The dashboard page to land on. */
  next: string;
  /** True on a local playground: offer the sandbox key. */
  sandbox: boolean;
}

type Notice = { kind: "error" | "info"; text: string };

const API_MESSAGES: Record<string, string> = {
  challenge_expired: "The sign-in request expired or was already used. Please try again.",
  invalid_signature: "The signature does not match the wallet you connected. Please try again.",
  invalid_address: "The wallet shared an address that is not a Solana address.",
  bad_origin: "The request was blocked because it did not come from this page. Reload and retry.",
  network: "Could not reach the server. Check your connection and try again.",
};

class ApiFailure extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

async function post<T>(path: string, body: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
    });
  } catch {
    throw new ApiFailure("network");
  }
  const json = await res.json().catch(() => null);
  if (!res.ok) throw new ApiFailure(json?.error?.code ?? "network");
  return json as T;
}

/** Challenge, sign with `sign`, verify; returns where to go. */
async function signIn(
  address: string,
  next: string,
  sign: (message: string) => Promise<Uint8Array>,
  onStep: (text: string) => void,
): Promise<string> {
  onStep("Preparing the message to sign…");
  const { message } = await post<{ message: string }>("/auth/wallet/challenge", { address, next });
  onStep("Sign the message in your wallet. Signing is free and does not send a transaction.");
  const signature = await sign(message);
  onStep("Checking the signature…");
  const answer = await post<{ next: string }>("/auth/wallet/verify", {
    signature: toBase64(signature),
  });
  return answer.next;
}

/** The sign-in panel. */
export function DashboardSignIn(props: DashboardSignInProps): VNode {
  const [wallets, setWallets] = useState<Wallet[] | null>(null);
  const [step, setStep] = useState<string | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  useEffect(() => watchWallets(setWallets), []);

  function fail(error: unknown, walletName: string) {
    if (error instanceof ApiFailure) {
      const text = ownValue(API_MESSAGES, error.code) ??
        `Sign-in failed (${error.code}). Please try again.`;
      setNotice({ kind: "error", text });
    } else if (error instanceof WalletFlowError) {
      setNotice({
        kind: "error",
        text: error.reason === "altered_message"
          ? `${walletName} changed the message before signing it. Try another wallet.`
          : `${walletName} did not complete the request. Unlock it and try again.`,
      });
    } else if (isUserRejection(error)) {
      setNotice({ kind: "info", text: `You declined in ${walletName}. Nothing was changed.` });
    } else {
      const detail = error instanceof Error && error.message ? `: ${error.message}` : "";
      setNotice({ kind: "error", text: `${walletName} reported a problem${detail}` });
    }
  }

  async function withWallet(wallet: Wallet) {
    setNotice(null);
    try {
      setStep(`Approve the connection in ${wallet.name}.`);
      const account = await connectAccount(wallet);
      const next = await signIn(
        account.address,
        props.next,
        (message) => signMessage(wallet, account, message),
        setStep,
      );
      location.assign(next);
    } catch (error) {
      fail(error, wallet.name);
      setStep(null);
    }
  }

  async function withSandboxKey(secret: Uint8Array) {
    setNotice(null);
    try {
      const address = sandboxAddress(secret);
      const next = await signIn(
        address,
        props.next,
        (message) => Promise.resolve(signWithSandboxKey(secret, message)),
        setStep,
      );
      location.assign(next);
    } catch (error) {
      fail(error, "The sandbox key");
      setStep(null);
    }
  }

  return (
    <div>
      <h2>Choose your wallet</h2>
      <WalletList wallets={wallets} busy={step !== null} onPick={withWallet} />
      {props.sandbox && <SandboxKey busy={step !== null} onUse={withSandboxKey} />}
      <div aria-live="polite">
        {step && <div class="notice info" role="status">{step}</div>}
        {notice && (
          <div class={`notice ${notice.kind}`} role={notice.kind === "error" ? "alert" : "status"}>
            {notice.text}
          </div>
        )}
      </div>
    </div>
  );
}

function WalletList(
  props: { wallets: Wallet[] | null; busy: boolean; onPick: (w: Wallet) => void },
): VNode {
  if (props.wallets === null) return <p>Looking for wallet apps in this browser…</p>;
  if (props.wallets.length === 0) {
    return (
      <div class="notice info" data-testid="no-wallets">
        No Solana wallet was found in this browser. Install a wallet extension such as Phantom,
        Solflare or Backpack, then reload this page.
      </div>
    );
  }
  return <WalletButtons wallets={props.wallets} busy={props.busy} onPick={props.onPick} />;
}

function SandboxKey(
  props: { busy: boolean; onUse: (secret: Uint8Array) => void },
): VNode | null {
  const [text, setText] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [ready, setReady] = useState(false);
  useEffect(() => {
    setText(localStorage.getItem(SANDBOX_STORAGE) ?? "");
    setReady(true);
  }, []);

  function use(event: Event) {
    event.preventDefault();
    const secret = decodeSandboxSecret(text);
    if (!secret) {
      setProblem("Paste a base58 secret key (32 or 64 bytes), or generate one.");
      return;
    }
    setProblem(null);
    localStorage.setItem(SANDBOX_STORAGE, text.trim());
    props.onUse(secret);
  }

  function generate() {
    const key = base58.encode(ed25519.utils.randomSecretKey());
    setText(key);
    setProblem(null);
  }

  // Rendered only once hydrated: without JavaScript the form could not sign anything.
  if (!ready) return null;

  return (
    <form class="card" onSubmit={use} data-testid="sandbox-key">
      <h2>Local playground: sandbox key</h2>
      <p class="muted">
        This service runs on your machine, so you can sign in with a throwaway key kept in this
        browser. <code>deno task dev</code>{" "}
        prints the demo developer's key; paste it to see the demo project. Never paste a real
        wallet's key.
      </p>
      <label for="sandbox-secret">Secret key (base58)</label>
      <input
        id="sandbox-secret"
        autocomplete="off"
        spellcheck={false}
        value={text}
        onInput={(e) => setText((e.target as HTMLInputElement).value)}
      />
      {problem && <p class="notice error" role="alert">{problem}</p>}
      <div class="actions">
        <button type="submit" disabled={props.busy}>Sign in with this key</button>
        <button type="button" class="secondary" disabled={props.busy} onClick={generate}>
          Generate a new key
        </button>
      </div>
    </form>
  );
}
