/** The landing page at `/`: what the service does for a Roblox game, and where to go next. */
import type { VNode } from "preact";
import { DashboardStyles, TopBar } from "./dashboard/frame.tsx";
import { Cell } from "./dashboard/cell.tsx";
import { curlPayoutText, LuauSnippet } from "./dashboard/luau_snippet.tsx";

/** What the landing page shows. */
interface HomePageData {
  serviceName: string;
  baseUrl: string;
  /** The signed-in developer, if any (the call to action changes). */
  developer: string | null;
}

const ROUTES: Array<[string, string]> = [
  ["GET /v1/project", "The key's project: cluster, managed wallet, linking URL"],
  ["GET /v1/players/:userId/wallet", "The wallet a player linked"],
  ["GET /v1/wallets/:address/balance", "SOL, tokens (/tokens) and NFTs (/assets) of a wallet"],
  ["POST /v1/tx/transfer-sol", "Send SOL, a token (/transfer-token) or mint one (/mint-token)"],
  ["GET /v1/tx/:idempotencyKey", "Where a transaction request stands"],
];

/** The landing page body. */
export function HomePage(data: HomePageData): VNode {
  return (
    <>
      <DashboardStyles />
      <TopBar serviceName={data.serviceName} developer={data.developer} />
      <main class="wide" id="content" tabIndex={-1}>
        <section class="hero">
          <h1>Solana for your Roblox game</h1>
          <p class="lead">
            {data.serviceName}{" "}
            links your players' Roblox accounts to their Solana wallets, lets your game servers read
            balances and NFTs, and sends SOL and tokens from a wallet your project owns, without
            running any crypto infrastructure.
          </p>
          <div class="actions">
            <a class="button" href="/dashboard" data-testid="dashboard-link">
              {data.developer ? "Open the dashboard" : "Sign in to the dashboard"}
            </a>
            <a class="button secondary" href="/docs" data-testid="docs-link">API reference</a>
            <a class="button secondary" href="/docs/luau" data-testid="sdk-link">Luau SDK</a>
          </div>
          <p class="muted">You sign in with a Solana wallet; signing is free.</p>
        </section>
        <div class="grid">
          <section class="card">
            <h2>Wallet linking</h2>
            <p>
              Each project gets a hosted page where players sign in with Roblox and prove a wallet
              is theirs by signing a message. Your game reads the link with one call.
            </p>
          </section>
          <section class="card">
            <h2>Rewards from a managed wallet</h2>
            <p>
              Create a wallet for your project, fund it, and send SOL or tokens to players from your
              game servers, within the limits of a policy you set.
            </p>
          </section>
          <section class="card">
            <h2>Live events in game</h2>
            <p>
              Links, finished transactions and activity on addresses you watch reach every server of
              your experience through Roblox MessagingService.
            </p>
          </section>
        </div>
        <section class="card" aria-labelledby="luau-heading">
          <h2 id="luau-heading">From your game's servers, in Luau</h2>
          <p>
            Install the Luau SDK, keep the API key in your experience's secrets, and pay a player in
            a few lines:
          </p>
          <LuauSnippet baseUrl={data.baseUrl} />
          <p class="hint">
            The same call with curl:{" "}
            <span class="mono">{curlPayoutText(data.baseUrl, "$BLOCKLINK_KEY")}</span>
          </p>
        </section>
        <section class="card" aria-labelledby="api-heading">
          <h2 id="api-heading">API reference</h2>
          <p>
            Game servers call <span class="mono">{data.baseUrl}/v1</span>{" "}
            with the project's API key in the <span class="mono">x-api-key</span>{" "}
            header (keep it in your experience's secrets, never in a script). Answers and errors are
            JSON; errors read <span class="mono">{"{ error: { code, message } }"}</span>.
          </p>
          <div class="table-wrap">
            <table class="list stack">
              <thead>
                <tr>
                  <th>Route</th>
                  <th>What it does</th>
                </tr>
              </thead>
              <tbody>
                {ROUTES.map(([route, what]) => (
                  <tr key={route}>
                    <Cell label="Route" mono>{route}</Cell>
                    <Cell label="What it does">{what}</Cell>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p>
            The full reference, with every route, field and error code, is the{" "}
            <a href="/docs">API reference</a>, generated from the code (the OpenAPI 3.1 document is
            {" "}
            <a href="/openapi.json">/openapi.json</a>, ready for client generators). Service status:
            {" "}
            <a href="/health">/health</a>.
          </p>
        </section>
      </main>
    </>
  );
}
