/** A project's overview: cluster, managed wallet and its balance, linking URL, events status. */
import { roleAllows } from "../../lib/auth/roles.ts";
import type { KeyExports } from "../../kv/key_exports.ts";
import type { VNode } from "preact";
import { DashboardCopyButton } from "../../islands/dashboard_copy.tsx";
import type { Project } from "../../kv/projects.ts";
import { Island } from "../islands.tsx";
import { FlashFor, type FrameData, ProjectFrame } from "./frame.tsx";
import { explorerAddressUrl, formatTime } from "./format.ts";
import { projectPath, type ProjectTab } from "../../http/dashboard_paths.ts";
import { LowBalanceNotices } from "./low_balance_notices.tsx";
import { HeldRewardsNotices, HeldRewardsSection } from "./held_rewards.tsx";
import { ClusterNote } from "./cluster_note.tsx";
import { LuauSnippet } from "./luau_snippet.tsx";
import { TokenAmount } from "./token_amount.tsx";
import type { WalletToken } from "../../lib/projects/wallet.ts";
import type { LowBalanceWarning } from "../../lib/projects/low_balance.ts";
import type { HeldAsset } from "../../lib/projects/rewards.ts";

// Tokens the overview lists; the withdraw page lists them all.
const OVERVIEW_TOKENS = 10;

/** What the overview shows. */
interface OverviewPageData extends FrameData {
  project: Project;
  linkUrl: string;
  rpcUrl: string;
  baseUrl: string;
  /** SOL balance of the managed wallet; null when there is no wallet; an Error when unreadable. */
  balance: { sol: string; funded: boolean } | { error: string } | null;
  /** The tokens the managed wallet holds; null without a wallet or when they cannot be read. */
  tokens: WalletToken[] | null;
  /** True on a service running on this machine: the wallet can be funded with sandbox SOL. */
  sandbox: boolean;
  walletsAvailable: boolean;
  eventsOn: boolean;
  signInReady: boolean;
  activeKeys: number;
  policySet: boolean;
  /** Low-balance warnings of the managed wallet (`low_balance_notices.tsx`). */
  lowBalance: LowBalanceWarning[];
  /** What is held for players by asset, against the wallet (`held_rewards.tsx`). */
  heldRewards: HeldAsset[];
  /** When and by whom the wallet's key was last exported; null when never. */
  keyExported: KeyExports | null;
}

/** The overview body. */
export function OverviewPage(data: OverviewPageData): VNode {
  const { project } = data;
  const steps: Array<{ done: boolean; text: string; href: ProjectTab }> = [
    { done: data.activeKeys > 0, text: "Create an API key for your game servers", href: "keys" },
    {
      done: data.signInReady,
      text: "Save your Roblox OAuth app so players can sign in",
      href: "settings",
    },
    {
      done: data.balance !== null && "funded" in data.balance && data.balance.funded,
      text: "Create and fund the managed wallet",
      href: "",
    },
    { done: data.policySet, text: "Set the transaction policy", href: "policy" },
    {
      done: data.eventsOn,
      text: "Turn on live events (universe ID and publishing key)",
      href: "settings",
    },
  ];
  return (
    <ProjectFrame data={data} project={project} tab="">
      <LowBalanceNotices warnings={data.lowBalance} />
      <HeldRewardsNotices assets={data.heldRewards} />
      <div class="grid">
        <section class="card" aria-labelledby="project-heading">
          <h2 id="project-heading">Project</h2>
          <dl class="facts">
            <dt>Cluster</dt>
            <dd>
              {project.cluster} (fixed) <ClusterNote cluster={project.cluster} />
            </dd>
            <dt>Project ID</dt>
            <dd class="mono">{project.id}</dd>
            <dt>Slug</dt>
            <dd class="mono">{project.slug}</dd>
            <dt>Linking URL</dt>
            <dd>
              <a class="mono" href={data.linkUrl} data-testid="link-url">{data.linkUrl}</a>{" "}
              <Island
                component={DashboardCopyButton}
                props={{ text: data.linkUrl, label: "Copy the linking URL" }}
              />
            </dd>
            <dt>Live events</dt>
            <dd data-testid="events-status">
              {data.eventsOn ? <span class="badge ok">On</span> : <span class="badge">Off</span>}
              {" "}
              <a href={projectPath(project.id, "settings")}>Settings</a>
            </dd>
            <dt>Player sign-in</dt>
            <dd>
              {data.signInReady
                ? <span class="badge ok">Ready</span>
                : <span class="badge err">Not set up</span>}
            </dd>
          </dl>
        </section>

        <section class="card" aria-labelledby="wallet-heading">
          <h2 id="wallet-heading">Managed wallet</h2>
          <FlashFor flash={data.flash} form="wallet" />
          {project.walletAddress
            ? (
              <dl class="facts">
                <dt>Address</dt>
                <dd>
                  <a
                    class="mono"
                    data-testid="wallet-address"
                    href={explorerAddressUrl(project.cluster, data.rpcUrl, project.walletAddress)}
                  >
                    {project.walletAddress}
                  </a>{" "}
                  <Island
                    component={DashboardCopyButton}
                    props={{ text: project.walletAddress, label: "Copy the wallet address" }}
                  />
                </dd>
                <dt>Balance</dt>
                <dd data-testid="wallet-balance">
                  {data.balance && "sol" in data.balance
                    ? `${data.balance.sol} SOL`
                    : <span class="muted">Could not be read right now</span>}
                </dd>
                {data.tokens && data.tokens.length > 0 && (
                  <>
                    <dt>Tokens</dt>
                    <dd data-testid="wallet-tokens">
                      {data.tokens.slice(0, OVERVIEW_TOKENS).map((token) => (
                        <div key={token.mint}>
                          <TokenAmount {...token} amount={token.uiAmount} />
                        </div>
                      ))}
                      {data.tokens.length > OVERVIEW_TOKENS && (
                        <div class="muted">
                          and {data.tokens.length - OVERVIEW_TOKENS} more on the{" "}
                          <a href={projectPath(project.id, "withdraw")}>withdraw page</a>
                        </div>
                      )}
                    </dd>
                  </>
                )}
              </dl>
            )
            : (
              <>
                <p>
                  The managed wallet signs and sends the project's transactions: SOL transfers,
                  token transfers and mints. The service keeps its key encrypted; fund it after
                  creating it.
                </p>
                {data.walletsAvailable
                  ? (
                    <form method="post" action={`${projectPath(project.id)}/wallet`}>
                      <button type="submit" data-testid="create-wallet">
                        Create managed wallet
                      </button>
                    </form>
                  )
                  : (
                    <p class="notice info">
                      Managed wallets are turned off on this service, so transactions are
                      unavailable. Everything else works.
                    </p>
                  )}
              </>
            )}
          {project.walletAddress && (
            <p class="hint">
              Send SOL (for fees and transfers) and the tokens you give out to this address. For
              mints, make it the token's mint authority.
            </p>
          )}
          {project.walletAddress && data.sandbox && roleAllows(data.role ?? "viewer", "wallet") &&
            (
              <form method="post" action={`${projectPath(project.id)}/wallet/sandbox-sol`}>
                <p class="hint">
                  This service runs on your machine against the sandbox cluster, so its SOL is free
                  and worth nothing.
                </p>
                <button type="submit" class="secondary" data-testid="fund-sandbox">
                  Fund with sandbox SOL
                </button>
              </form>
            )}
          {data.keyExported && (
            <p class="notice info" data-testid="key-exported">
              The wallet's secret key was exported{" "}
              {data.keyExported.total === 1 ? "once" : `${data.keyExported.total} times`}, last on
              {" "}
              {formatTime(data.keyExported.lastAt)} by{" "}
              <span class="mono">{data.keyExported.lastBy}</span>: whoever holds a copy can move its
              funds. To be sure no one else can, withdraw everything to a new wallet.
            </p>
          )}
          {project.walletAddress && roleAllows(data.role ?? "viewer", "withdraw") && (
            <p class="actions">
              <a
                class="button secondary"
                href={projectPath(project.id, "withdraw")}
                data-testid="withdraw-link"
              >
                Withdraw
              </a>
              {roleAllows(data.role ?? "viewer", "export_key") && (
                <a
                  class="button secondary"
                  href={projectPath(project.id, "export")}
                  data-testid="export-link"
                >
                  Export the key
                </a>
              )}
            </p>
          )}
        </section>
      </div>

      <HeldRewardsSection assets={data.heldRewards} />

      <section class="card" aria-labelledby="setup-heading">
        <h2 id="setup-heading">Set up</h2>
        <ol class="steps">
          {steps.map((step) => (
            <li key={step.text}>
              <a href={projectPath(project.id, step.href)}>{step.text}</a>{" "}
              {step.done && <span class="badge ok">Done</span>}
            </li>
          ))}
        </ol>
      </section>

      <section class="card" aria-labelledby="call-heading">
        <h2 id="call-heading">Call it from your game</h2>
        <p>
          Game servers call the API with one of the project's{" "}
          <a href={projectPath(project.id, "keys")}>API keys</a>{" "}
          <ClusterNote cluster={project.cluster} />. Check a key with curl:
        </p>
        <pre class="secret code">curl -H "x-api-key: $BLOCKLINK_KEY" {data.baseUrl}/v1/project</pre>
        <p>Pay a player from a server script with the Luau SDK:</p>
        <LuauSnippet baseUrl={data.baseUrl} />
      </section>
    </ProjectFrame>
  );
}
