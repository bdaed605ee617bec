/** The hosted linking page and its no-game page, rendered on the server. */
import type { VNode } from "preact";
import type { LinkByUser } from "../kv/links.ts";
import type { Project } from "../kv/projects.ts";
import { LinkFlow } from "../islands/link_flow.tsx";
import type { LinkRewardView } from "../islands/_link_rewards.tsx";
import { ownValue } from "../islands/_own_value.ts";
import type { Player } from "../kv/sessions.ts";
import { Island } from "./islands.tsx";
import { Notice } from "./layout.tsx";

/** What a `?error=` code says to the player; unknown codes get `GENERIC_SIGN_IN_ERROR`. */
export const SIGN_IN_ERROR_MESSAGES: Readonly<Record<string, string>> = {
  idp_denied: "Sign-in was cancelled on Roblox, so nothing was shared. Sign in again when ready.",
  oauth_state_mismatch:
    "Sign-in took too long or was started in another tab. Please sign in again.",
  oauth_token_failed:
    "Roblox did not accept this game's sign-in settings. Try again later; if it keeps happening, tell the game's developer.",
  oauth_userinfo_failed: "Roblox did not share your profile. Please sign in again.",
  oauth_not_configured:
    "This game has not set up Roblox sign-in yet, so wallets cannot be linked here for now.",
};

/** Shown for an error code the page does not know. */
export const GENERIC_SIGN_IN_ERROR = "Sign-in did not work. Please try again.";

/** The message for a `?error=` code; own keys only, so `toString` and friends are unknown codes. */
function signInErrorMessage(code: string): string {
  return ownValue(SIGN_IN_ERROR_MESSAGES, code) ?? GENERIC_SIGN_IN_ERROR;
}

/** Everything the linking page shows. */
interface LinkPageData {
  serviceName: string;
  project: Project;
  pageUrl: string;
  signInConfigured: boolean;
  player: Player | null;
  link: LinkByUser | null;
  /** The signed-in player's rewards (none when signed out). */
  rewards: LinkRewardView[];
  error: string | null;
}

/** The linking page body. */
export function LinkPage(data: LinkPageData): VNode {
  const { project, player } = data;
  const showError = data.error !== null &&
    !(data.error === "oauth_not_configured" && !data.signInConfigured);
  const signInUrl = `/auth/idp/start?next=${encodeURIComponent(`/link/${project.slug}`)}`;
  return (
    <main>
      <p class="muted">{data.serviceName} · wallet linking</p>
      <h1>Link a Solana wallet to {project.name}</h1>
      <p class="muted" data-testid="never-asks">
        {data.serviceName}{" "}
        never asks for your recovery phrase (seed phrase) or private key. If anyone does, they are
        trying to steal your wallet.
      </p>
      {showError && (
        <Notice kind="error">
          {signInErrorMessage(data.error!)}
        </Notice>
      )}
      {player
        ? (
          <>
            <section class="card player" aria-label="Signed in player">
              {player.avatar
                ? <img class="avatar" src={player.avatar} alt="" width={48} height={48} />
                : <span class="avatar" aria-hidden="true" />}
              <div>
                <strong data-testid="player-name">{player.displayName}</strong>
                <div class="muted">@{player.name} · Roblox user {player.id}</div>
                <form method="post" action="/auth/logout">
                  <button type="submit" class="linkish">Sign out</button>
                </form>
              </div>
            </section>
            <Island
              component={LinkFlow}
              props={{
                slug: project.slug,
                gameName: project.name,
                pageUrl: data.pageUrl,
                player,
                link: data.link,
                rewards: data.rewards,
              }}
            />
            <noscript>
              <Notice kind="info">
                Linking a wallet needs JavaScript, because your wallet app signs the message in this
                browser. Unlinking works without it.
              </Notice>
            </noscript>
          </>
        )
        : (
          <section class="card">
            <h2>1. Sign in with Roblox</h2>
            <p>
              {project.name}{" "}
              needs to know which Roblox account the wallet belongs to. Roblox shares your user ID,
              username, display name and avatar, never your password.
            </p>
            {data.signInConfigured
              ? <a class="button block" href={signInUrl}>Sign in with Roblox</a>
              : (
                <>
                  <button type="button" class="block" disabled aria-describedby="not-configured">
                    Sign in with Roblox
                  </button>
                  <p id="not-configured" class="notice info" role="status">
                    {project.name}{" "}
                    has not set up Roblox sign-in yet, so wallets cannot be linked here for now.
                    Please check back later.
                  </p>
                </>
              )}
            <h2>2. Sign a message with your wallet</h2>
            <p>
              Then pick your wallet app (Phantom, Solflare, Backpack or another Solana wallet) and
              sign a short message to prove the wallet is yours. Signing is free and does not send a
              transaction.
            </p>
          </section>
        )}
      <footer class="muted" data-testid="run-by">
        This page is run by {data.serviceName} for {project.name}. <a href="/privacy">Privacy</a>
      </footer>
    </main>
  );
}

/** Body of the 404 page for a slug no active game uses. */
export function NoGamePage(): VNode {
  return (
    <main>
      <h1>No game uses this link</h1>
      <p>
        This wallet-linking link does not belong to any game. Check the link in the game, or ask the
        game's developer for the right one.
      </p>
    </main>
  );
}
