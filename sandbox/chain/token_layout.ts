// SPL Token and Token-2022 account layouts, and the node's jsonParsed form of them.
import { base58 } from "@scure/base";
import type { AccountSnapshot } from "./state.ts";

export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
export const NATIVE_MINT = "So11111111111111111111111111111111111111112";

const ACCOUNT_LEN = 165;
const MINT_LEN = 82;
const ACCOUNT_TYPE_MINT = 1;
const ACCOUNT_TYPE_ACCOUNT = 2;

export type TokenAccount = {
  mint: string;
  owner: string;
  amount: bigint;
  delegate: string | null;
  state: "uninitialized" | "initialized" | "frozen";
  isNative: bigint | null;
  delegatedAmount: bigint;
  closeAuthority: string | null;
  extensions: number[];
};

export type Mint = {
  mintAuthority: string | null;
  supply: bigint;
  decimals: number;
  isInitialized: boolean;
  freezeAuthority: string | null;
  extensions: number[];
};

export function isTokenProgram(owner: string): boolean {
  return owner === TOKEN_PROGRAM || owner === TOKEN_2022_PROGRAM;
}

function view(data: Uint8Array): DataView {
  return new DataView(data.buffer, data.byteOffset, data.byteLength);
}

function optionKey(data: Uint8Array, offset: number): string | null {
  return view(data).getUint32(offset, true) === 1
    ? base58.encode(data.slice(offset + 4, offset + 36))
    : null;
}

function extensionTypes(data: Uint8Array): number[] {
  const types: number[] = [];
  const v = view(data);
  for (let offset = ACCOUNT_LEN + 1; offset + 4 <= data.length;) {
    const type = v.getUint16(offset, true);
    const length = v.getUint16(offset + 2, true);
    if (type === 0) break;
    types.push(type);
    offset += 4 + length;
  }
  return types;
}

/** Decodes a token account of either program, or null if the data is not one. */
export function decodeTokenAccount(account: AccountSnapshot): TokenAccount | null {
  const { data } = account;
  if (!isTokenProgram(account.owner) || data.length < ACCOUNT_LEN) return null;
  if (data.length > ACCOUNT_LEN) {
    if (account.owner !== TOKEN_2022_PROGRAM || data[ACCOUNT_LEN] !== ACCOUNT_TYPE_ACCOUNT) {
      return null;
    }
  }
  const v = view(data);
  const stateByte = v.getUint8(108);
  if (stateByte === 0 || stateByte > 2) return null;
  return {
    mint: base58.encode(data.slice(0, 32)),
    owner: base58.encode(data.slice(32, 64)),
    amount: v.getBigUint64(64, true),
    delegate: optionKey(data, 72),
    state: stateByte === 1 ? "initialized" : "frozen",
    isNative: v.getUint32(109, true) === 1 ? v.getBigUint64(113, true) : null,
    delegatedAmount: v.getBigUint64(121, true),
    closeAuthority: optionKey(data, 129),
    extensions: data.length > ACCOUNT_LEN ? extensionTypes(data) : [],
  };
}

/** Decodes a mint of either program, or null if the data is not one. */
export function decodeMint(account: AccountSnapshot): Mint | null {
  const { data } = account;
  if (!isTokenProgram(account.owner) || data.length < MINT_LEN) return null;
  if (data.length !== MINT_LEN) {
    if (
      account.owner !== TOKEN_2022_PROGRAM || data.length <= ACCOUNT_LEN ||
      data[ACCOUNT_LEN] !== ACCOUNT_TYPE_MINT
    ) return null;
  }
  if (data[45] !== 1) return null;
  return {
    mintAuthority: optionKey(data, 0),
    supply: view(data).getBigUint64(36, true),
    decimals: view(data).getUint8(44),
    isInitialized: true,
    freezeAuthority: optionKey(data, 46),
    extensions: data.length > MINT_LEN ? extensionTypes(data) : [],
  };
}

/** Decimal string of an amount, trimmed as the node's `real_number_string_trimmed`. */
export function uiAmountString(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const s = amount.toString().padStart(decimals + 1, "0");
  const whole = s.slice(0, s.length - decimals);
  const frac = s.slice(s.length - decimals).replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : whole;
}

export function tokenAmountJson(amount: bigint, decimals: number) {
  const text = uiAmountString(amount, decimals);
  return {
    amount: amount.toString(),
    decimals,
    uiAmount: Number(text),
    uiAmountString: text,
  };
}

const EXTENSION_NAMES = [
  "uninitialized",
  "transferFeeConfig",
  "transferFeeAmount",
  "mintCloseAuthority",
  "confidentialTransferMint",
  "confidentialTransferAccount",
  "defaultAccountState",
  "immutableOwner",
  "memoTransfer",
  "nonTransferable",
  "interestBearingConfig",
  "cpiGuard",
  "permanentDelegate",
  "nonTransferableAccount",
  "transferHook",
  "transferHookAccount",
  "confidentialTransferFeeConfig",
  "confidentialTransferFeeAmount",
  "metadataPointer",
  "tokenMetadata",
  "groupPointer",
  "tokenGroup",
  "groupMemberPointer",
  "tokenGroupMember",
];

function extensionsJson(types: number[]) {
  return types.map((t) => ({ extension: EXTENSION_NAMES[t] ?? "unparseableExtension" }));
}

/**
 * The node's jsonParsed data for a token account or mint, or null when the account is not one
 * (the node then falls back to base64). Token-2022 extensions are listed by name only.
 */
export function parseTokenJson(
  account: AccountSnapshot,
  decimalsOf: (mint: string) => number | null,
): unknown | null {
  const program = account.owner === TOKEN_PROGRAM ? "spl-token" : "spl-token-2022";
  const space = account.data.length;
  const tokenAccount = decodeTokenAccount(account);
  if (tokenAccount) {
    const decimals = decimalsOf(tokenAccount.mint);
    if (decimals === null) return null;
    const info: Record<string, unknown> = {
      isNative: tokenAccount.isNative !== null,
      mint: tokenAccount.mint,
      owner: tokenAccount.owner,
      state: tokenAccount.state,
      tokenAmount: tokenAmountJson(tokenAccount.amount, decimals),
    };
    if (tokenAccount.delegate) {
      info.delegate = tokenAccount.delegate;
      info.delegatedAmount = tokenAmountJson(tokenAccount.delegatedAmount, decimals);
    }
    if (tokenAccount.closeAuthority) info.closeAuthority = tokenAccount.closeAuthority;
    if (tokenAccount.isNative !== null) {
      info.rentExemptReserve = tokenAmountJson(tokenAccount.isNative, decimals);
    }
    if (account.owner === TOKEN_2022_PROGRAM && tokenAccount.extensions.length > 0) {
      info.extensions = extensionsJson(tokenAccount.extensions);
    }
    return { program, parsed: { info, type: "account" }, space };
  }
  const mint = decodeMint(account);
  if (mint) {
    const info: Record<string, unknown> = {
      decimals: mint.decimals,
      freezeAuthority: mint.freezeAuthority,
      isInitialized: mint.isInitialized,
      mintAuthority: mint.mintAuthority,
      supply: mint.supply.toString(),
    };
    if (account.owner === TOKEN_2022_PROGRAM && mint.extensions.length > 0) {
      info.extensions = extensionsJson(mint.extensions);
    }
    return { program, parsed: { info, type: "mint" }, space };
  }
  return null;
}
