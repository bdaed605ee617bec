/**
 * The Luau snippet beside the curl example: what a Roblox developer pastes into a server script
 * to pay a player through the Luau SDK (`sdk/luau`), with the install line and where the key goes
 * (the experience's secrets, never the script). The calls are the SDK's README's.
 */
import type { VNode } from "preact";
import { DashboardCopyButton } from "../../islands/dashboard_copy.tsx";
import { Island } from "../islands.tsx";

/** The SDK's Wally dependency line, as `sdk/luau/README.md` gives it. */
export const LUAU_INSTALL_LINE = `Blocklink = "blocklink/blocklink@0.1.0"`;

/** The snippet's text for a service at `baseUrl`. */
export function luauSnippetText(baseUrl: string): string {
  const host = new URL(baseUrl).host;
  return [
    `-- 1. wally.toml, under [server-dependencies]: ${LUAU_INSTALL_LINE}`,
    `-- 2. Creator Hub > your experience > Secrets: name "blocklink", the API key, domain ${host}`,
    `--    (Studio: Game Settings > Security > Allow HTTP Requests)`,
    `local ServerScriptService = game:GetService("ServerScriptService")`,
    `local Blocklink = require(ServerScriptService.ServerPackages.Blocklink)`,
    ``,
    `local client = Blocklink.new({ baseUrl = "${baseUrl}" })`,
    ``,
    `local function reward(player: Player)`,
    `\tlocal paid = client:transferSol({`,
    `\t\tto = { userId = player.UserId },`,
    `\t\tamount = "0.01",`,
    `\t\tidempotencyKey = "welcome-" .. player.UserId,`,
    `\t})`,
    `\tif not paid.ok then`,
    `\t\twarn(paid.code, paid.message)`,
    `\tend`,
    `end`,
  ].join("\n");
}

/** The same payout with curl, for a terminal (`key` as given: the key or a variable's name). */
export function curlPayoutText(baseUrl: string, key: string): string {
  const body = JSON.stringify({
    to: { userId: 123 },
    amount: "0.01",
    idempotencyKey: "welcome-123",
  });
  return `curl -X POST -H "x-api-key: ${key}" -H "content-type: application/json" ` +
    `-d '${body}' ${baseUrl}/v1/tx/transfer-sol`;
}

/** The snippet in a copyable block, with a link to the SDK's guide (but on the guide itself). */
export function LuauSnippet(
  { baseUrl, guideLink = true }: { baseUrl: string; guideLink?: boolean },
): VNode {
  const text = luauSnippetText(baseUrl);
  return (
    <div data-testid="luau-snippet">
      <pre class="secret code" aria-label="Luau example">{text}</pre>
      <Island
        component={DashboardCopyButton}
        props={{ text, label: "Copy the Luau example" }}
      />{" "}
      {guideLink && <a href="/docs/luau">The Luau SDK: install, setup and every call</a>}
    </div>
  );
}
