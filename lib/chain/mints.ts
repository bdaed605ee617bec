/** Token mints under the Token and Token-2022 programs: which accounts are mints, and their state. */
import {
  type Address,
  address,
  getAddressDecoder,
  getBase64Encoder,
  type Rpc,
  type SolanaRpcApi,
} from "@solana/kit";

/** The SPL Token program. */
export const TOKEN_PROGRAM = address("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");

/** The Token-2022 program (Token Extensions). */
export const TOKEN_2022_PROGRAM = address("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");

/** Both token programs, in the order balances are read. */
export const TOKEN_PROGRAMS = [TOKEN_PROGRAM, TOKEN_2022_PROGRAM] as const;

/** A token mint as read from the chain. */
export interface MintInfo {
  address: Address;
  /** The token program that owns the mint; token accounts and instructions must use it. */
  programAddress: Address;
  decimals: number;
  supply: bigint;
  /** Who may mint more; null when the supply is fixed. */
  mintAuthority: Address | null;
}

// Byte layout shared by both programs (spl-token `Mint`, 82 bytes): the mint authority is a
// COption<Pubkey> (a u32 tag, then 32 bytes) at the start.
const MINT_LEN = 82;
const MINT_AUTHORITY_OFFSET = 4;
const SUPPLY_OFFSET = 36;
const DECIMALS_OFFSET = 44;
const INITIALIZED_OFFSET = 45;
// Token-2022 extends accounts past the 165-byte token account size, then writes the account type.
const ACCOUNT_LEN = 165;
const MULTISIG_LEN = 355;
const ACCOUNT_TYPE_MINT = 1;

/** Decodes a mint from an account's owner and data; null when the account is not an initialized mint. */
export function decodeMint(
  mint: Address,
  owner: Address,
  data: Uint8Array,
): MintInfo | null {
  if (!isMintData(owner, data) || data[INITIALIZED_OFFSET] !== 1) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return {
    address: mint,
    programAddress: owner,
    decimals: view.getUint8(DECIMALS_OFFSET),
    supply: view.getBigUint64(SUPPLY_OFFSET, true),
    mintAuthority: view.getUint32(0, true) === 1
      ? getAddressDecoder().decode(data.subarray(MINT_AUTHORITY_OFFSET, SUPPLY_OFFSET))
      : null,
  };
}

function isMintData(owner: Address, data: Uint8Array): boolean {
  if (owner === TOKEN_PROGRAM) return data.length === MINT_LEN;
  if (owner !== TOKEN_2022_PROGRAM) return false;
  if (data.length === MINT_LEN) return true;
  return data.length > ACCOUNT_LEN && data.length !== MULTISIG_LEN &&
    data[ACCOUNT_LEN] === ACCOUNT_TYPE_MINT;
}

/** Reads a mint at confirmed commitment; null when the account is missing or not a token mint. */
export async function fetchMint(
  rpc: Rpc<SolanaRpcApi>,
  mint: Address,
  options: { abortSignal?: AbortSignal } = {},
): Promise<MintInfo | null> {
  const { value } = await rpc
    .getAccountInfo(mint, { commitment: "confirmed", encoding: "base64" })
    .send(options);
  if (!value) return null;
  return decodeMint(mint, value.owner, base64Bytes(value.data[0]));
}

const base64 = getBase64Encoder();

/** Bytes of base64 account data as the RPC returns it. */
export function base64Bytes(text: string): Uint8Array {
  return base64.encode(text) as Uint8Array;
}
