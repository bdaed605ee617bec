/** The spec's Asset entry, shared by the DAS and the on-chain read paths. */
import type { Address } from "@solana/kit";

/** At most this many assets are read per request. */
export const MAX_ASSETS = 1_000;

/** One NFT the wallet owns. */
export interface Asset {
  id: Address;
  name: string | null;
  /** Set only when the collection is verified. */
  collection: Address | null;
  image: string | null;
  /** The DAS interface label, such as `V1_NFT` or `ProgrammableNFT`. */
  interface: string | null;
}
