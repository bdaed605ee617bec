/**
 * What a page calls a token: the symbol and name of its Metaplex metadata when the mint has any,
 * and its decimals, read in one `getMultipleAccounts` (the mint and its metadata account). A mint
 * without metadata (common on devnet and the sandbox) has a null symbol: pages then show the
 * shortened mint with its decimals.
 */
import type { Address, Rpc, SolanaRpcApi } from "@solana/kit";
import { base64Bytes, decodeMint } from "./mints.ts";
import { decodeMetadata, findMetadataAddress, TOKEN_METADATA_PROGRAM } from "./metaplex.ts";

/** A mint as a page names it. */
export interface TokenLabel {
  mint: Address;
  decimals: number;
  /** The metadata's symbol, or null without metadata (or with an empty one). */
  symbol: string | null;
  name: string | null;
}

// A symbol or name longer than this is cut: it is someone else's text on our page.
const MAX_SYMBOL_CHARS = 12;
const MAX_NAME_CHARS = 40;

/** Reads the mint and its metadata; null when the address is not a token mint. */
export async function fetchTokenLabel(
  rpc: Rpc<SolanaRpcApi>,
  mint: Address,
  options: { abortSignal?: AbortSignal } = {},
): Promise<TokenLabel | null> {
  const metadataAddress = await findMetadataAddress(mint);
  const { value: [mintAccount, metadataAccount] } = await rpc
    .getMultipleAccounts([mint, metadataAddress], { commitment: "confirmed", encoding: "base64" })
    .send(options);
  if (!mintAccount) return null;
  const info = decodeMint(mint, mintAccount.owner, base64Bytes(mintAccount.data[0]));
  if (!info) return null;
  const metadata = metadataAccount?.owner === TOKEN_METADATA_PROGRAM
    ? decodeMetadata(base64Bytes(metadataAccount.data[0]))
    : null;
  const text = (value: string | undefined, max: number) => {
    const trimmed = value?.trim().slice(0, max);
    return trimmed ? trimmed : null;
  };
  return {
    mint,
    decimals: info.decimals,
    symbol: metadata?.mint === mint ? text(metadata.symbol, MAX_SYMBOL_CHARS) : null,
    name: metadata?.mint === mint ? text(metadata.name, MAX_NAME_CHARS) : null,
  };
}
