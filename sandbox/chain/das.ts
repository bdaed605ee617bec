// Digital Asset Standard (DAS) read API over the cluster's state, in the public DAS shapes.
// Real DAS indexes off-chain JSON too; here content.links.image comes from a sandbox side
// table the fixtures fill, and json_uri is the metadata's uri.
import { type Address, address } from "@solana/kit";
import { listProgramAccounts } from "./accounts.ts";
import {
  decodeEdition,
  decodeMetadata,
  findEditionPda,
  type Metadata,
  TOKEN_METADATA_PROGRAM,
} from "./metaplex.ts";
import { accountAt } from "./accounts.ts";
import { invalidParams, RpcError } from "./rpc_errors.ts";
import { pubkeyParam } from "./rpc_params.ts";
import type { RpcHandler } from "./rpc_dispatch.ts";
import type { LedgerState } from "./state.ts";
import {
  decodeMint,
  decodeTokenAccount,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
  uiAmountString,
} from "./token_layout.ts";

type Holding = { owner: string; frozen: boolean; delegate: string | null; amount: bigint };

type DasOptions = { showUnverifiedCollections?: boolean; showFungible?: boolean };

// As the reference DAS indexer labels them: a print edition is filed as a V1_NFT.
const INTERFACES: Record<string, string> = {
  NonFungible: "V1_NFT",
  NonFungibleEdition: "V1_NFT",
  ProgrammableNonFungible: "ProgrammableNFT",
  ProgrammableNonFungibleEdition: "ProgrammableNFT",
  Fungible: "FungibleToken",
  FungibleAsset: "FungibleAsset",
};

function isFungible(m: Metadata): boolean {
  return m.tokenStandard === "Fungible" || m.tokenStandard === "FungibleAsset";
}

/** Metadata by mint, and who holds each mint (largest holder), from the current state. */
function scan(state: LedgerState) {
  const metadata = new Map<string, Metadata>();
  for (const { account } of listProgramAccounts(state, TOKEN_METADATA_PROGRAM, state.slot)) {
    const m = decodeMetadata(account.data);
    if (m) metadata.set(m.mint, m);
  }
  const holders = new Map<string, Holding[]>();
  for (const program of [TOKEN_PROGRAM, TOKEN_2022_PROGRAM]) {
    for (const { account } of listProgramAccounts(state, program, state.slot)) {
      const token = decodeTokenAccount(account);
      if (!token || token.amount === 0n || !metadata.has(token.mint)) continue;
      let list = holders.get(token.mint);
      if (!list) holders.set(token.mint, list = []);
      list.push({
        owner: token.owner,
        frozen: token.state === "frozen",
        delegate: token.delegate,
        amount: token.amount,
      });
    }
  }
  return { metadata, holders };
}

async function assetJson(
  state: LedgerState,
  m: Metadata,
  holding: Holding | null,
  options: DasOptions,
) {
  const editionAccount = accountAt(state, await findEditionPda(m.mint), state.slot);
  const edition = editionAccount ? decodeEdition(editionAccount.data) : null;
  const mint = accountAt(state, m.mint, state.slot);
  const mintInfo = mint ? decodeMint(mint) : null;
  const grouping = m.collection && (m.collection.verified || options.showUnverifiedCollections)
    ? [{
      group_key: "collection",
      group_value: m.collection.key,
      ...(options.showUnverifiedCollections ? { verified: m.collection.verified } : {}),
    }]
    : [];
  const image = state.assetImages.get(m.mint) ?? "";
  const asset: Record<string, unknown> = {
    interface: m.tokenStandard ? INTERFACES[m.tokenStandard] : "Custom",
    id: m.mint,
    content: {
      $schema: "https://schema.metaplex.com/nft1.0.json",
      json_uri: m.uri,
      files: image ? [{ uri: image, mime: "image/png" }] : [],
      metadata: {
        name: m.name,
        symbol: m.symbol,
        ...(m.tokenStandard ? { token_standard: m.tokenStandard } : {}),
      },
      links: image ? { image } : {},
    },
    authorities: [{ address: m.updateAuthority, scopes: ["full"] }],
    compression: {
      eligible: false,
      compressed: false,
      data_hash: "",
      creator_hash: "",
      asset_hash: "",
      tree: "",
      seq: 0,
      leaf_id: 0,
    },
    grouping,
    royalty: {
      royalty_model: "creators",
      target: null,
      percent: m.sellerFeeBasisPoints / 10000,
      basis_points: m.sellerFeeBasisPoints,
      primary_sale_happened: m.primarySaleHappened,
      locked: false,
    },
    creators: (m.creators ?? []).map((c) => ({
      address: c.address,
      share: c.share,
      verified: c.verified,
    })),
    ownership: {
      frozen: holding?.frozen ?? false,
      delegated: holding?.delegate !== null && holding?.delegate !== undefined,
      delegate: holding?.delegate ?? null,
      ownership_model: isFungible(m) ? "token" : "single",
      owner: holding?.owner ?? "",
    },
    supply: edition?.kind === "master"
      ? {
        print_max_supply: edition.maxSupply === null ? null : Number(edition.maxSupply),
        print_current_supply: Number(edition.supply),
        edition_nonce: m.editionNonce,
      }
      : edition?.kind === "print"
      ? {
        edition_number: Number(edition.edition),
        master_edition_mint: null,
        edition_nonce: m.editionNonce,
      }
      : null,
    mutable: m.isMutable,
    burnt: false,
  };
  if (isFungible(m) && mintInfo && holding) {
    asset.token_info = {
      balance: Number(holding.amount),
      supply: Number(mintInfo.supply),
      decimals: mintInfo.decimals,
      token_program: mint!.owner,
      mint_authority: mintInfo.mintAuthority,
      freeze_authority: mintInfo.freezeAuthority,
      ui_balance: uiAmountString(holding.amount, mintInfo.decimals),
    };
  }
  return asset;
}

function named(params: unknown[]): Record<string, unknown> {
  const p = params[0];
  if (typeof p !== "object" || p === null || Array.isArray(p)) {
    throw invalidParams("Invalid params: expected an object");
  }
  return p as Record<string, unknown>;
}

function paging(p: Record<string, unknown>): { page: number; limit: number } {
  const page = p.page === undefined || p.page === null ? 1 : Number(p.page);
  const limit = p.limit === undefined || p.limit === null ? 1000 : Number(p.limit);
  if (!Number.isInteger(page) || page < 1) {
    throw invalidParams("Invalid params: page must be at least 1");
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw invalidParams("Invalid params: limit must be between 1 and 1000");
  }
  return { page, limit };
}

async function list(
  state: LedgerState,
  p: Record<string, unknown>,
  filter: { owner?: string | undefined; collection?: string | undefined },
) {
  const { page, limit } = paging(p);
  const options = (p.options ?? p.displayOptions ?? {}) as DasOptions;
  const { metadata, holders } = scan(state);
  const sort = p.sortBy as { sortDirection?: string } | undefined;
  const rows: { m: Metadata; holding: Holding | null }[] = [];
  for (const m of metadata.values()) {
    if (isFungible(m) && !options.showFungible && filter.owner) continue;
    const held = holders.get(m.mint) ?? [];
    const holding = filter.owner
      ? held.find((h) => h.owner === filter.owner) ?? null
      : held.sort((a, b) => (b.amount > a.amount ? 1 : -1))[0] ?? null;
    if (filter.owner && !holding) continue;
    if (filter.collection) {
      const c = m.collection;
      if (!c || c.key !== filter.collection) continue;
      if (!c.verified && !options.showUnverifiedCollections) continue;
    }
    rows.push({ m, holding });
  }
  // Sorted by id so pages are stable; sortBy.sortDirection "desc" reverses.
  rows.sort((a, b) => (a.m.mint < b.m.mint ? -1 : 1));
  if (sort?.sortDirection === "desc") rows.reverse();
  const slice = rows.slice((page - 1) * limit, page * limit);
  const items = [];
  for (const row of slice) items.push(await assetJson(state, row.m, row.holding, options));
  // As in the public DAS API, total counts the items of this page.
  return { total: items.length, limit, page, items };
}

export const dasMethods: Record<string, RpcHandler> = {
  getAssetsByOwner: (state, params) => {
    const p = named(params);
    return list(state, p, { owner: pubkeyParam(p.ownerAddress) });
  },
  searchAssets: (state, params) => {
    const p = named(params);
    const grouping = p.grouping as unknown[] | undefined;
    let collection: string | undefined;
    if (grouping !== undefined) {
      if (
        !Array.isArray(grouping) || grouping[0] !== "collection" || typeof grouping[1] !== "string"
      ) {
        throw invalidParams('Invalid params: grouping must be ["collection", <address>]');
      }
      collection = pubkeyParam(grouping[1]);
    }
    const owner = p.ownerAddress === undefined ? undefined : pubkeyParam(p.ownerAddress);
    return list(state, p, { owner, collection });
  },
  getAsset: async (state, params) => {
    const p = named(params);
    const id = pubkeyParam(p.id) as Address;
    const { metadata, holders } = scan(state);
    const m = metadata.get(address(id));
    if (!m) throw new RpcError(-32000, "Asset Not Found");
    const held = holders.get(m.mint) ?? [];
    return await assetJson(state, m, held[0] ?? null, (p.options ?? {}) as DasOptions);
  },
};
