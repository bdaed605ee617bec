/** Metaplex Token Metadata: the metadata account's byte layout, its address, and DAS interface labels. */
import {
  type Address,
  address,
  getAddressDecoder,
  getAddressEncoder,
  getProgramDerivedAddress,
} from "@solana/kit";

/** The Token Metadata program. */
export const TOKEN_METADATA_PROGRAM = address("metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s");

/** The account key byte of a metadata account (`Key::MetadataV1`). */
const METADATA_V1_KEY = 4;

/** Token standards in the order of the program's enum, so the index is the byte on chain. */
export const TOKEN_STANDARDS = [
  "NonFungible",
  "FungibleAsset",
  "Fungible",
  "NonFungibleEdition",
  "ProgrammableNonFungible",
  "ProgrammableNonFungibleEdition",
] as const;

/** A token standard name as the program names it. */
export type TokenStandard = typeof TOKEN_STANDARDS[number];

/** One creator entry. */
interface MetadataCreator {
  address: Address;
  verified: boolean;
  share: number;
}

/** A decoded metadata account; strings lose the NUL padding the program writes. */
export interface Metadata {
  updateAuthority: Address;
  mint: Address;
  name: string;
  symbol: string;
  uri: string;
  sellerFeeBasisPoints: number;
  creators: MetadataCreator[] | null;
  primarySaleHappened: boolean;
  isMutable: boolean;
  editionNonce: number | null;
  /** Null for accounts written before token standards existed. */
  tokenStandard: TokenStandard | null;
  collection: { verified: boolean; key: Address } | null;
  uses: { useMethod: number; remaining: bigint; total: bigint } | null;
  collectionDetails: { version: "V1" | "V2"; size: bigint | null } | null;
  programmableConfig: { ruleSet: Address | null } | null;
}

/** The metadata account address of a mint: PDA of `["metadata", program, mint]`. */
export async function findMetadataAddress(mint: Address): Promise<Address> {
  const encoder = getAddressEncoder();
  const [pda] = await getProgramDerivedAddress({
    programAddress: TOKEN_METADATA_PROGRAM,
    seeds: ["metadata", encoder.encode(TOKEN_METADATA_PROGRAM), encoder.encode(mint)],
  });
  return pda;
}

/** Decodes a metadata account's data; null when it is not a metadata account or is cut short. */
export function decodeMetadata(data: Uint8Array): Metadata | null {
  const r = new Reader(data);
  try {
    if (r.u8() !== METADATA_V1_KEY) return null;
    const head = {
      updateAuthority: r.address(),
      mint: r.address(),
      name: r.string(),
      symbol: r.string(),
      uri: r.string(),
      sellerFeeBasisPoints: r.u16(),
      creators: r.option(() =>
        r.vec(() => ({ address: r.address(), verified: r.bool(), share: r.u8() }))
      ),
      primarySaleHappened: r.bool(),
      isMutable: r.bool(),
      editionNonce: r.option(() => r.u8()),
    };
    return { ...head, ...decodeTail(r) };
  } catch {
    return null;
  }
}

type MetadataTail = Pick<
  Metadata,
  "tokenStandard" | "collection" | "uses" | "collectionDetails" | "programmableConfig"
>;

// Fields added in later program versions: old accounts end early or hold zeros here. Like the
// program's own lenient reader, a tail that does not parse counts as all absent.
function decodeTail(r: Reader): MetadataTail {
  const absent: MetadataTail = {
    tokenStandard: null,
    collection: null,
    uses: null,
    collectionDetails: null,
    programmableConfig: null,
  };
  try {
    const tokenStandard = r.optionOrEnd(() => {
      const value = TOKEN_STANDARDS[r.u8()];
      if (value === undefined) throw new RangeError("Unknown token standard");
      return value;
    });
    const collection = r.optionOrEnd(() => ({ verified: r.bool(), key: r.address() }));
    const uses = r.optionOrEnd(() => ({ useMethod: r.u8(), remaining: r.u64(), total: r.u64() }));
    const tail = { ...absent, tokenStandard, collection, uses };
    try {
      tail.collectionDetails = r.optionOrEnd(() => {
        const version = r.u8();
        if (version > 1) throw new RangeError("Unknown collection details");
        const size = r.u64();
        return version === 0 ? { version: "V1", size } : { version: "V2", size: null };
      });
      tail.programmableConfig = r.optionOrEnd(() => {
        if (r.u8() !== 0) throw new RangeError("Unknown programmable config");
        return { ruleSet: r.option(() => r.address()) };
      });
    } catch {
      // Collection details and programmable config came later still; keep what parsed.
    }
    return tail;
  } catch {
    return absent;
  }
}

/**
 * The interface label the DAS API gives a Token Metadata asset of this standard. The reference
 * indexer (metaplex-foundation/digital-asset-rpc-infrastructure) files NonFungible and
 * NonFungibleEdition both as `V1_NFT`, both programmable standards as `ProgrammableNFT`, and an
 * account without a token standard as an unknown class, labelled `Custom`.
 */
export function dasInterface(tokenStandard: TokenStandard | null): string {
  switch (tokenStandard) {
    case "NonFungible":
    case "NonFungibleEdition":
      return "V1_NFT";
    case "ProgrammableNonFungible":
    case "ProgrammableNonFungibleEdition":
      return "ProgrammableNFT";
    case "FungibleAsset":
      return "FungibleAsset";
    case "Fungible":
      return "FungibleToken";
    case null:
      return "Custom";
  }
}

/** Strips the NUL padding the program writes into fixed-width strings. */
function trimPadding(text: string): string {
  return text.replaceAll("\0", "").trim();
}

const addressDecoder = getAddressDecoder();
const utf8 = new TextDecoder("utf-8", { fatal: false });

/** A bounds-checked borsh reader; every read past the end throws. */
class Reader {
  #view: DataView;
  #offset = 0;

  constructor(private data: Uint8Array) {
    this.#view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  }

  #take(length: number): number {
    const start = this.#offset;
    if (start + length > this.data.length) throw new RangeError("Metadata cut short");
    this.#offset += length;
    return start;
  }

  u8(): number {
    return this.#view.getUint8(this.#take(1));
  }

  u16(): number {
    return this.#view.getUint16(this.#take(2), true);
  }

  u32(): number {
    return this.#view.getUint32(this.#take(4), true);
  }

  u64(): bigint {
    return this.#view.getBigUint64(this.#take(8), true);
  }

  bool(): boolean {
    const value = this.u8();
    if (value > 1) throw new RangeError("Invalid bool");
    return value === 1;
  }

  address(): Address {
    const start = this.#take(32);
    return addressDecoder.decode(this.data.subarray(start, start + 32));
  }

  string(): string {
    const length = this.u32();
    const start = this.#take(length);
    return trimPadding(utf8.decode(this.data.subarray(start, start + length)));
  }

  vec<T>(item: () => T): T[] {
    const count = this.u32();
    const out: T[] = [];
    for (let i = 0; i < count; i++) out.push(item());
    return out;
  }

  option<T>(value: () => T): T | null {
    const tag = this.u8();
    if (tag > 1) throw new RangeError("Invalid option tag");
    return tag === 1 ? value() : null;
  }

  /** An option that may also be missing because the account ends before it. */
  optionOrEnd<T>(value: () => T): T | null {
    return this.#offset >= this.data.length ? null : this.option(value);
  }
}
