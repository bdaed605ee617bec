/** The dashboard's sign-in page: a wallet signs a message, nothing is sent on-chain. */
import type { VNode } from "preact";
import { DashboardSignIn } from "../../islands/dashboard_sign_in.tsx";
import { ownValue } from "../../islands/_own_value.ts";
import { Island } from "../islands.tsx";
import { Notice } from "../layout.tsx";
import { DashboardStyles, TopBar } from "./frame.tsx";

/** Messages for `?error=` codes that lead here. */
const DASHBOARD_ERROR_MESSAGES: Readonly<Record<string, string>> = {
  oauth_state_mismatch:
    "A Roblox sign-in could not be finished: it took too long or started in another browser. " +
    "Players linking a wallet should go back to the game's linking page and try again.",
};

/** The message for a `?error=` code that leads to the dashboard, or null for any other code. */
export function dashboardErrorMessage(code: string | undefined | null): string | null {
  return code ? ownValue(DASHBOARD_ERROR_MESSAGES, code) ?? null : null;
}

/** What the sign-in page shows. */
interface SignInPageData {
  serviceName: string;
  next: string;
  /** True when the service runs on this machine (offer the sandbox key). */
  sandbox: boolean;
  error: string | null;
}

/** The sign-in page body. */
export function SignInPage(data: SignInPageData): VNode {
  const message = dashboardErrorMessage(data.error);
  return (
    <>
      <DashboardStyles />
      <TopBar serviceName={data.serviceName} developer={null} />
      <main id="content" tabIndex={-1}>
        <h1>Sign in to the {data.serviceName} dashboard</h1>
        {message && <Notice kind="error">{message}</Notice>}
        <p>
          Your account is your Solana wallet: pick it, approve the connection, and sign a short
          message. Signing is free and does not send a transaction. The first sign-in creates your
          account.
        </p>
        <section class="card">
          <Island
            component={DashboardSignIn}
            props={{ serviceName: data.serviceName, next: data.next, sandbox: data.sandbox }}
          />
          <noscript>
            <Notice kind="info">
              Signing in needs JavaScript, because your wallet signs the message in this browser.
              Everything else in the dashboard works without it.
            </Notice>
          </noscript>
        </section>
      </main>
    </>
  );
}
