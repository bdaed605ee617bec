// Signs a dashboard statement (a withdrawal, a key export) with the wallet the developer signed in
// with, then posts the page's confirmation form with the signature, as a developer without
// JavaScript does by pasting a signature made with their own tools. On a local playground the
// sandbox key kept in this browser can sign too.
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
import { WalletButtons } from "./_wallet_buttons.tsx";
import {
  decodeSandboxSecret,
  SANDBOX_STORAGE,
  sandboxAddress,
  signWithSandboxKey,
} from "./_sandbox_key.ts";

/** Props of the island (JSON-safe). */
export interface DashboardSignStatementProps {
  /** The exact message to sign. */
  message: string;
  /** The signed-in wallet: only its signature is accepted. */
  address: string;
  /** The form to post once signed, and its signature field. */
  formId: string;
  fieldName: string;
  /** True on a local playground: offer the sandbox key of the sign-in page. */
  sandbox: boolean;
}

/** Wallet buttons that sign the statement and post the confirmation. */
export function DashboardSignStatement(props: DashboardSignStatementProps): VNode {
  const [wallets, setWallets] = useState<Wallet[] | null>(null);
  const [sandboxKey, setSandboxKey] = useState<Uint8Array | null>(null);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => watchWallets(setWallets), []);
  useEffect(() => {
    if (!props.sandbox) return;
    const key = decodeSandboxSecret(localStorage.getItem(SANDBOX_STORAGE));
    if (key && sandboxAddress(key) === props.address) setSandboxKey(key);
  }, []);

  function submit(signature: Uint8Array) {
    const form = document.getElementById(props.formId) as HTMLFormElement | null;
    const field = form?.elements.namedItem(props.fieldName) as HTMLInputElement | null;
    if (!form || !field) return;
    field.value = toBase64(signature);
    form.requestSubmit();
  }

  async function withWallet(wallet: Wallet) {
    setNotice(null);
    setBusy(true);
    try {
      const account = await connectAccount(wallet);
      if (account.address !== props.address) {
        setNotice(
          `${wallet.name} connected ${account.address}, not the wallet you signed in with ` +
            `(${props.address}). Switch accounts in ${wallet.name} and try again.`,
        );
        return;
      }
      submit(await signMessage(wallet, account, props.message));
    } catch (error) {
      setNotice(
        error instanceof WalletFlowError
          ? `${wallet.name} did not sign the exact message. Try again or use another wallet.`
          : isUserRejection(error)
          ? `You declined in ${wallet.name}. Nothing was done.`
          : `${wallet.name} reported a problem. Nothing was done.`,
      );
    } finally {
      setBusy(false);
    }
  }

  return (
    <div data-testid="sign-statement">
      {wallets === null
        ? <p>Looking for wallet apps in this browser…</p>
        : wallets.length > 0
        ? <WalletButtons wallets={wallets} busy={busy} onPick={withWallet} />
        : !sandboxKey && <p class="muted">No wallet app found: paste a signature below.</p>}
      {sandboxKey && (
        <button
          type="button"
          class="secondary"
          disabled={busy}
          onClick={() => submit(signWithSandboxKey(sandboxKey, props.message))}
        >
          Sign with the sandbox key
        </button>
      )}
      {notice && <div class="notice error" role="alert">{notice}</div>}
    </div>
  );
}
