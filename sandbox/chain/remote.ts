// A handle on a sandbox cluster running elsewhere (`deno task chain`), through its control API.
import type { Address } from "@solana/kit";
import { base64 } from "@scure/base";
import type { NftFixtureChain } from "./fixtures_nft.ts";

export type RemoteChain = NftFixtureChain & { dasUrl: string; controlUrl: string };

/** Connects fixtures to a running sandbox cluster by its RPC URL. */
export function connectChain(
  rpcUrl: string,
  options: { slotMs?: number; autoAdvance?: boolean } = {},
): RemoteChain {
  const base = rpcUrl.replace(/\/+$/, "");
  const controlUrl = `${base}/control`;
  async function post(path: string, body: unknown): Promise<void> {
    const response = await fetch(`${controlUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) {
      throw new Error(`Cannot call sandbox control ${path}: ${response.status} ${text}`);
    }
  }
  return {
    rpcUrl: base,
    dasUrl: `${base}/das`,
    controlUrl,
    slotMs: options.slotMs ?? 400,
    autoAdvance: options.autoAdvance ?? true,
    advanceSlots: (n) => post("/advance", { slots: n }),
    setAccount: (address: Address, account) =>
      post("/accounts", {
        address,
        lamports: account.lamports.toString(),
        owner: account.owner,
        data: base64.encode(account.data),
        executable: account.executable ?? false,
      }),
    setAssetImage: (mint: Address, image: string) => post("/assets/image", { mint, image }),
  };
}
