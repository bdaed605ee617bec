/** `/docs/luau`: the Luau SDK for a Roblox developer, from install to a first payout. */
import type { VNode } from "preact";
import { DashboardStyles, TopBar } from "./dashboard/frame.tsx";
import { LUAU_INSTALL_LINE, LuauSnippet } from "./dashboard/luau_snippet.tsx";

/** What the SDK page shows. */
interface LuauSdkPageData {
  serviceName: string;
  baseUrl: string;
  developer: string | null;
}

/** The SDK page body. */
export function LuauSdkPage(data: LuauSdkPageData): VNode {
  return (
    <>
      <DashboardStyles />
      <TopBar serviceName={data.serviceName} developer={data.developer} />
      <main id="content" tabIndex={-1}>
        <h1>Call {data.serviceName} from Luau</h1>
        <p class="lead">
          The Luau SDK runs in your experience's server scripts: it reads players' wallets, pays
          them from your project's managed wallet and hands you live events, with the API's retry
          rules and HTTP budget taken care of. Every call returns{" "}
          <span class="mono">{"{ ok = true, data }"}</span> or{" "}
          <span class="mono">{"{ ok = false, code, message }"}</span>; nothing throws.
        </p>
        <section class="card" aria-labelledby="install-heading">
          <h2 id="install-heading">1. Install</h2>
          <p>
            With <a href="https://wally.run">Wally</a>, add it to{" "}
            <span class="mono">wally.toml</span> under{" "}
            <span class="mono">[server-dependencies]</span> and run{" "}
            <span class="mono">wally install</span>:
          </p>
          <pre class="secret code" data-testid="install-line">{LUAU_INSTALL_LINE}</pre>
          <p class="hint">
            Without Wally: build <span class="mono">Blocklink.rbxm</span>{" "}
            from the service's repository (<span class="mono">deno task sdk:build</span>) and insert
            it into ServerScriptService. Keep it on the server: it refuses to run on a player's
            device.
          </p>
        </section>
        <section class="card" aria-labelledby="setup-heading">
          <h2 id="setup-heading">2. Set up the experience</h2>
          <ol class="steps">
            <li>
              In Studio, <em>Game Settings &gt; Security &gt; Allow HTTP Requests</em>.
            </li>
            <li>
              Create an API key in the dashboard and save it in the Creator Hub, under your
              experience's <em>Secrets</em>, as <span class="mono">blocklink</span> for the domain
              {" "}
              <span class="mono">{new URL(data.baseUrl).host}</span>. The SDK reads it with{" "}
              <span class="mono">HttpService:GetSecret</span>. Never paste the key into a script:
              every player could read it and spend your payouts.
            </li>
            <li>
              Fund the project's managed wallet and set its policy in the dashboard; players link
              their wallets on the project's linking page.
            </li>
          </ol>
        </section>
        <section class="card" aria-labelledby="pay-heading">
          <h2 id="pay-heading">3. Pay a player</h2>
          <LuauSnippet baseUrl={data.baseUrl} guideLink={false} />
          <p class="hint">
            The idempotency key makes a retried payout pay once. Every route, field and error code
            is in the{" "}
            <a href="/docs">API reference</a>; the SDK's README in the repository lists every call
            and the events.
          </p>
        </section>
      </main>
    </>
  );
}
