// Metaplex Token Metadata accounts in the program's real byte layout (mpl-token-metadata
// state: Metadata, MasterEditionV2, Edition), with their PDAs. The program is not loaded in the
// sandbox, so fixtures write these accounts directly.
import { type Address, address, getAddressEncoder, getProgramDerivedAddress } from "@solana/kit";
import { base58 } from "@scure/base";

export const TOKEN_METADATA_PROGRAM = address("metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s");

/** Account sizes the program allocates (MAX_METADATA_LEN, MAX_MASTER_EDITION_LEN, MAX_EDITION_LEN). */
export const METADATA_LEN = 679;
export const MASTER_EDITION_LEN = 282;
export const EDITION_LEN = 241;

export const KEY_EDITION_V1 = 1;
export const KEY_METADATA_V1 = 4;
export const KEY_MASTER_EDITION_V2 = 6;

export const TOKEN_STANDARDS = [
  "NonFungible",
  "FungibleAsset",
  "Fungible",
  "NonFungibleEdition",
  "ProgrammableNonFungible",
  "ProgrammableNonFungibleEdition",
] as const;
export type TokenStandard = typeof TOKEN_STANDARDS[number];

export type Creator = { address: Address; verified: boolean; share: number };

export type Metadata = {
  updateAuthority: Address;
  mint: Address;
  name: string;
  symbol: string;
  uri: string;
  sellerFeeBasisPoints: number;
  creators: Creator[] | null;
  primarySaleHappened: boolean;
  isMutable: boolean;
  editionNonce: number | null;
  tokenStandard: TokenStandard | null;
  collection: { verified: boolean; key: Address } | null;
  /** Set on collection NFTs (CollectionDetails::V1 { size }). */
  collectionSize: bigint | null;
};

export type Edition =
  | { kind: "master"; supply: bigint; maxSupply: bigint | null }
  | { kind: "print"; parent: Address; edition: bigint };

const te = new TextEncoder();

export async function findMetadataPda(mint: Address): Promise<Address> {
  const [pda] = await getProgramDerivedAddress({
    programAddress: TOKEN_METADATA_PROGRAM,
    seeds: [
      "metadata",
      getAddressEncoder().encode(TOKEN_METADATA_PROGRAM),
      getAddressEncoder().encode(mint),
    ],
  });
  return pda;
}

/** Master edition and print edition accounts share this PDA. */
export async function findEditionPda(mint: Address): Promise<Address> {
  const [pda] = await getProgramDerivedAddress({
    programAddress: TOKEN_METADATA_PROGRAM,
    seeds: [
      "metadata",
      getAddressEncoder().encode(TOKEN_METADATA_PROGRAM),
      getAddressEncoder().encode(mint),
      "edition",
    ],
  });
  return pda;
}

class Writer {
  bytes: Uint8Array;
  view: DataView;
  offset = 0;
  constructor(size: number) {
    this.bytes = new Uint8Array(size);
    this.view = new DataView(this.bytes.buffer);
  }
  u8(v: number) {
    this.view.setUint8(this.offset, v);
    this.offset += 1;
  }
  u16(v: number) {
    this.view.setUint16(this.offset, v, true);
    this.offset += 2;
  }
  u64(v: bigint) {
    this.view.setBigUint64(this.offset, v, true);
    this.offset += 8;
  }
  key(v: Address) {
    this.bytes.set(base58.decode(v), this.offset);
    this.offset += 32;
  }
  /** Borsh string, padded with NULs to `max` bytes as the program's puff_out_data_fields does. */
  str(v: string, max: number) {
    const raw = te.encode(v);
    if (raw.length > max) throw new Error(`Cannot write metadata: "${v}" exceeds ${max} bytes`);
    this.view.setUint32(this.offset, max, true);
    this.bytes.set(raw, this.offset + 4);
    this.offset += 4 + max;
  }
  bool(v: boolean) {
    this.u8(v ? 1 : 0);
  }
}

class Reader {
  view: DataView;
  offset = 0;
  constructor(public bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  u8() {
    return this.view.getUint8(this.offset++);
  }
  u16() {
    const v = this.view.getUint16(this.offset, true);
    this.offset += 2;
    return v;
  }
  u32() {
    const v = this.view.getUint32(this.offset, true);
    this.offset += 4;
    return v;
  }
  u64() {
    const v = this.view.getBigUint64(this.offset, true);
    this.offset += 8;
    return v;
  }
  key(): Address {
    const v = base58.encode(this.bytes.slice(this.offset, this.offset + 32));
    this.offset += 32;
    return address(v);
  }
  str() {
    const n = this.u32();
    const v = new TextDecoder().decode(this.bytes.slice(this.offset, this.offset + n));
    this.offset += n;
    return v.replace(/\0+$/, "");
  }
  bool() {
    return this.u8() === 1;
  }
  option<T>(read: () => T): T | null {
    return this.u8() === 1 ? read() : null;
  }
}

/** Serializes a Metadata account (key MetadataV1), padded to the program's allocation. */
export function encodeMetadata(m: Metadata): Uint8Array {
  const w = new Writer(METADATA_LEN);
  w.u8(KEY_METADATA_V1);
  w.key(m.updateAuthority);
  w.key(m.mint);
  w.str(m.name, 32);
  w.str(m.symbol, 10);
  w.str(m.uri, 200);
  w.u16(m.sellerFeeBasisPoints);
  if (m.creators) {
    w.u8(1);
    w.view.setUint32(w.offset, m.creators.length, true);
    w.offset += 4;
    for (const c of m.creators) {
      w.key(c.address);
      w.bool(c.verified);
      w.u8(c.share);
    }
  } else w.u8(0);
  w.bool(m.primarySaleHappened);
  w.bool(m.isMutable);
  if (m.editionNonce === null) w.u8(0);
  else (w.u8(1), w.u8(m.editionNonce));
  if (m.tokenStandard === null) w.u8(0);
  else (w.u8(1), w.u8(TOKEN_STANDARDS.indexOf(m.tokenStandard)));
  if (m.collection === null) w.u8(0);
  else (w.u8(1), w.bool(m.collection.verified), w.key(m.collection.key));
  w.u8(0); // uses: None
  if (m.collectionSize === null) w.u8(0);
  else (w.u8(1), w.u8(0), w.u64(m.collectionSize)); // CollectionDetails::V1 { size }
  if (m.tokenStandard?.startsWith("Programmable")) {
    w.u8(1), w.u8(0), w.u8(0); // ProgrammableConfig::V1 { rule_set: None }
  } else w.u8(0);
  return w.bytes;
}

/** Reads a Metadata account, or null if the data is not one. */
export function decodeMetadata(data: Uint8Array): Metadata | null {
  if (data[0] !== KEY_METADATA_V1) return null;
  try {
    const r = new Reader(data);
    r.u8();
    const updateAuthority = r.key();
    const mint = r.key();
    const name = r.str();
    const symbol = r.str();
    const uri = r.str();
    const sellerFeeBasisPoints = r.u16();
    const creators = r.option(() => {
      const n = r.u32();
      return Array.from(
        { length: n },
        () => ({ address: r.key(), verified: r.bool(), share: r.u8() }),
      );
    });
    const primarySaleHappened = r.bool();
    const isMutable = r.bool();
    const editionNonce = r.option(() => r.u8());
    const standard = r.option(() => r.u8());
    const collection = r.option(() => ({ verified: r.bool(), key: r.key() }));
    r.option(() => (r.u8(), r.u64(), r.u64()));
    const details = r.option(() => (r.u8(), r.u64()));
    return {
      updateAuthority,
      mint,
      name,
      symbol,
      uri,
      sellerFeeBasisPoints,
      creators,
      primarySaleHappened,
      isMutable,
      editionNonce,
      tokenStandard: standard === null ? null : TOKEN_STANDARDS[standard] ?? null,
      collection,
      collectionSize: details,
    };
  } catch {
    return null;
  }
}

/** Serializes a MasterEditionV2 or Edition account. */
export function encodeEdition(e: Edition): Uint8Array {
  if (e.kind === "master") {
    const w = new Writer(MASTER_EDITION_LEN);
    w.u8(KEY_MASTER_EDITION_V2);
    w.u64(e.supply);
    if (e.maxSupply === null) w.u8(0);
    else (w.u8(1), w.u64(e.maxSupply));
    return w.bytes;
  }
  const w = new Writer(EDITION_LEN);
  w.u8(KEY_EDITION_V1);
  w.key(e.parent);
  w.u64(e.edition);
  return w.bytes;
}

export function decodeEdition(data: Uint8Array): Edition | null {
  const r = new Reader(data);
  if (data[0] === KEY_MASTER_EDITION_V2) {
    r.u8();
    return { kind: "master", supply: r.u64(), maxSupply: r.option(() => r.u64()) };
  }
  if (data[0] === KEY_EDITION_V1) {
    r.u8();
    return { kind: "print", parent: r.key(), edition: r.u64() };
  }
  return null;
}
