/** NFTs a wallet holds, read straight from the chain when no DAS endpoint is configured. */
import { type Address, getAddressEncoder } from "@solana/kit";
import type { Asset } from "./assets.ts";
import { base64Bytes, decodeMint } from "./mints.ts";
import {
  dasInterface,
  decodeMetadata,
  findMetadataAddress,
  TOKEN_METADATA_PROGRAM,
} from "./metaplex.ts";
import type { ReadBudget } from "./read_budget.ts";
import { type ChainSource, fetchOwnedTokenAccounts } from "./token_balances.ts";

// getMultipleAccounts takes at most 100 keys: a metadata account and a mint per candidate.
const MINTS_PER_BATCH = 50;

/**
 * Classic NFTs of `owner`: Token Metadata NFTs, programmable NFTs and editions whose mint has
 * supply 1 and 0 decimals, found from token accounts holding exactly 1. Sorted by mint bytes, as
 * the DAS `id` sort; `image` is null because it lives in off-chain metadata.
 */
export async function fetchAssetsFromChain(
  source: ChainSource,
  owner: Address,
  options: { collection?: Address; limit: number; budget: ReadBudget; abortSignal?: AbortSignal },
): Promise<Asset[]> {
  const accounts = await fetchOwnedTokenAccounts(source, owner, options);
  const candidates = [
    ...new Set(accounts.filter((a) => a.amount === 1n && a.decimals === 0).map((a) => a.mint)),
  ].sort(compareAddressBytes);
  const assets: Asset[] = [];
  for (let i = 0; i < candidates.length && assets.length < options.limit; i += MINTS_PER_BATCH) {
    const batch = candidates.slice(i, i + MINTS_PER_BATCH);
    const metadataAddresses = await Promise.all(batch.map(findMetadataAddress));
    options.budget.spendCall();
    const { value } = await source.rpc
      .getMultipleAccounts([...metadataAddresses, ...batch], {
        commitment: "confirmed",
        encoding: "base64",
      })
      .send(options);
    // At most 100 accounts of known kinds: bounded, so counted once it is here.
    options.budget.spendBytes(value.reduce((n, a) => n + (a?.data[0].length ?? 0), 0));
    batch.forEach((mint, j) => {
      // A node that answers fewer accounts than asked: the missing ones count as absent.
      const asset = readAsset(mint, value[j] ?? null, value[batch.length + j] ?? null);
      if (asset && (!options.collection || asset.collection === options.collection)) {
        assets.push(asset);
      }
    });
  }
  return assets.slice(0, options.limit);
}

type EncodedAccount = { owner: Address; data: readonly [string, "base64"] } | null;

function readAsset(mint: Address, metadataAccount: EncodedAccount, mintAccount: EncodedAccount) {
  if (!metadataAccount || metadataAccount.owner !== TOKEN_METADATA_PROGRAM || !mintAccount) {
    return null;
  }
  const info = decodeMint(mint, mintAccount.owner, base64Bytes(mintAccount.data[0]));
  if (!info || info.supply !== 1n || info.decimals !== 0) return null;
  const metadata = decodeMetadata(base64Bytes(metadataAccount.data[0]));
  if (!metadata || metadata.mint !== mint) return null;
  const standard = metadata.tokenStandard;
  if (standard === "Fungible" || standard === "FungibleAsset") return null;
  return {
    id: mint,
    name: metadata.name || null,
    // An unverified collection is only a claim by whoever minted the NFT.
    collection: metadata.collection?.verified ? metadata.collection.key : null,
    image: null,
    interface: dasInterface(standard),
  } satisfies Asset;
}

const addressEncoder = getAddressEncoder();

/** Orders addresses by their 32 bytes, as an indexer sorting by id does. */
export function compareAddressBytes(a: Address, b: Address): number {
  const x = addressEncoder.encode(a);
  const y = addressEncoder.encode(b);
  for (const [i, byte] of x.entries()) {
    const other = y[i] ?? 0;
    if (byte !== other) return byte - other;
  }
  return 0;
}
