// NFT fixtures: the mint and token account through real Token-program transactions, the
// Metaplex metadata and edition accounts written directly in the program's byte layout.
import { type Address, createSolanaRpc, type KeyPairSigner } from "@solana/kit";
import {
  AuthorityType,
  getFreezeAccountInstruction,
  getSetAuthorityInstruction,
} from "@solana-program/token";
import { base64 } from "@scure/base";
import {
  createMint,
  type FixtureChain,
  mintTo,
  sendInstructions,
  type SettleOptions,
} from "./fixtures.ts";
import {
  type Creator,
  decodeEdition,
  encodeEdition,
  encodeMetadata,
  findEditionPda,
  findMetadataPda,
  TOKEN_METADATA_PROGRAM,
  type TokenStandard,
} from "./metaplex.ts";

/** A chain fixtures can also write accounts on (a SandboxChain, or connectChain()). */
export type NftFixtureChain = FixtureChain & {
  setAccount(
    address: Address,
    account: { lamports: bigint; owner: Address; data: Uint8Array; executable?: boolean },
  ): void | Promise<void>;
  setAssetImage(mint: Address, imageUrl: string): void | Promise<void>;
};

export type NftKind = "nft" | "programmable" | "edition" | "collection";

export type CreateNftOptions = {
  /** Pays, signs the token transactions and is the update authority unless one is given. */
  payer: KeyPairSigner;
  owner: Address;
  name: string;
  symbol?: string;
  /** The metadata's off-chain JSON URI (DAS content.json_uri). */
  uri?: string;
  /** Sandbox-only: what DAS reports as content.links.image (real DAS reads it from json_uri). */
  image?: string;
  /** Default "nft" (NonFungible with a master edition). */
  kind?: NftKind;
  /** Collection the NFT claims, verified or not. */
  collection?: { mint: Address; verified: boolean };
  /** For kind "edition": the master NFT it is printed from, and the edition number. */
  master?: { mint: Address; edition: bigint };
  updateAuthority?: Address;
  sellerFeeBasisPoints?: number;
  creators?: Creator[];
  isMutable?: boolean;
  /** Master edition max supply (default 0: a one of one; null: unlimited prints). */
  maxSupply?: bigint | null;
} & SettleOptions;

export type CreatedNft = {
  mint: Address;
  tokenAccount: Address;
  metadata: Address;
  edition: Address;
};

const STANDARD: Record<NftKind, TokenStandard> = {
  nft: "NonFungible",
  collection: "NonFungible",
  programmable: "ProgrammableNonFungible",
  edition: "NonFungibleEdition",
};

async function writeProgramAccount(chain: NftFixtureChain, key: Address, data: Uint8Array) {
  const rpc = createSolanaRpc(chain.rpcUrl);
  const lamports = await rpc.getMinimumBalanceForRentExemption(BigInt(data.length)).send();
  await chain.setAccount(key, { lamports, owner: TOKEN_METADATA_PROGRAM, data });
}

/** Creates an NFT held by `owner`, as mpl-token-metadata would leave it on chain. */
export async function createNft(
  chain: NftFixtureChain,
  options: CreateNftOptions,
): Promise<CreatedNft> {
  const kind = options.kind ?? "nft";
  const { payer } = options;
  const settle = { commitment: options.commitment };
  if (kind === "edition" && !options.master) {
    throw new Error("Cannot create edition NFT: master is required");
  }
  const mint = await createMint(chain, {
    payer,
    decimals: 0,
    freezeAuthority: payer.address,
    ...settle,
  });
  const { tokenAccount } = await mintTo(chain, {
    payer,
    mint,
    authority: payer,
    owner: options.owner,
    amount: 1n,
    decimals: 0,
    ...settle,
  });
  const metadata = await findMetadataPda(mint);
  const edition = await findEditionPda(mint);
  // As the program does: the edition PDA becomes mint and freeze authority, and a
  // programmable NFT's token account stays frozen outside its own instructions.
  await sendInstructions(chain, [
    ...(kind === "programmable"
      ? [getFreezeAccountInstruction({ account: tokenAccount, mint, owner: payer })]
      : []),
    getSetAuthorityInstruction({
      owned: mint,
      owner: payer,
      authorityType: AuthorityType.MintTokens,
      newAuthority: edition,
    }),
    getSetAuthorityInstruction({
      owned: mint,
      owner: payer,
      authorityType: AuthorityType.FreezeAccount,
      newAuthority: edition,
    }),
  ], { feePayer: payer, ...settle });
  await writeProgramAccount(
    chain,
    metadata,
    encodeMetadata({
      updateAuthority: options.updateAuthority ?? payer.address,
      mint,
      name: options.name,
      symbol: options.symbol ?? "",
      uri: options.uri ?? "",
      sellerFeeBasisPoints: options.sellerFeeBasisPoints ?? 0,
      creators: options.creators ?? null,
      primarySaleHappened: false,
      isMutable: options.isMutable ?? true,
      editionNonce: 255,
      tokenStandard: STANDARD[kind],
      collection: options.collection
        ? { verified: options.collection.verified, key: options.collection.mint }
        : null,
      collectionSize: kind === "collection" ? 0n : null,
    }),
  );
  if (kind === "edition") {
    const parent = await findEditionPda(options.master!.mint);
    await writeProgramAccount(
      chain,
      edition,
      encodeEdition({ kind: "print", parent, edition: options.master!.edition }),
    );
    await bumpMasterSupply(chain, parent);
  } else {
    await writeProgramAccount(
      chain,
      edition,
      encodeEdition({
        kind: "master",
        supply: 0n,
        maxSupply: options.maxSupply === undefined ? 0n : options.maxSupply,
      }),
    );
  }
  if (options.image) await chain.setAssetImage(mint, options.image);
  return { mint, tokenAccount, metadata, edition };
}

async function bumpMasterSupply(chain: NftFixtureChain, masterEdition: Address): Promise<void> {
  const rpc = createSolanaRpc(chain.rpcUrl);
  const { value } = await rpc.getAccountInfo(masterEdition, {
    encoding: "base64",
    commitment: "processed",
  }).send();
  if (!value) throw new Error("Cannot print edition: master edition account not found");
  const master = decodeEdition(base64.decode(value.data[0]));
  if (master?.kind !== "master") {
    throw new Error("Cannot print edition: parent is not a master edition");
  }
  await chain.setAccount(masterEdition, {
    lamports: value.lamports,
    owner: TOKEN_METADATA_PROGRAM,
    data: encodeEdition({
      kind: "master",
      supply: master.supply + 1n,
      maxSupply: master.maxSupply,
    }),
  });
}

/** Writes Metaplex metadata for a fungible `mint` (name and symbol), as the program would. */
export async function writeTokenMetadata(
  chain: NftFixtureChain,
  mint: Address,
  options: {
    updateAuthority: Address;
    name: string;
    symbol: string;
    tokenStandard?: TokenStandard | null;
  },
): Promise<Address> {
  const metadata = await findMetadataPda(mint);
  await writeProgramAccount(
    chain,
    metadata,
    encodeMetadata({
      updateAuthority: options.updateAuthority,
      mint,
      name: options.name,
      symbol: options.symbol,
      uri: "",
      sellerFeeBasisPoints: 0,
      creators: null,
      primarySaleHappened: false,
      isMutable: true,
      editionNonce: null,
      tokenStandard: options.tokenStandard === undefined ? "Fungible" : options.tokenStandard,
      collection: null,
      collectionSize: null,
    }),
  );
  return metadata;
}
