// Account encodings of the node's UiAccount.
import { base58, base64 } from "@scure/base";
import { accountAt } from "./accounts.ts";
import { invalidParams, RpcError } from "./rpc_errors.ts";
import type { AccountSnapshot, LedgerState } from "./state.ts";
import { decodeMint, isTokenProgram, parseTokenJson } from "./token_layout.ts";

/** rentEpoch of every rent-exempt account since rent collection ended (u64::MAX). */
export const RENT_EXEMPT_EPOCH = 18446744073709551615n;

export type EncodingOptions = {
  encoding?: string | undefined;
  dataSlice?: { offset: number; length: number } | undefined;
};

export function checkAccountEncoding(encoding: string | undefined): void {
  const ok = [undefined, "binary", "base58", "base64", "jsonParsed"];
  if (!ok.includes(encoding)) {
    throw invalidParams(
      encoding === "base64+zstd"
        ? "Invalid params: base64+zstd is not supported by the sandbox cluster; use base64"
        : `Invalid params: unknown variant \`${encoding}\`, expected one of \`binary\`, \`base58\`, \`base64\`, \`jsonParsed\`, \`base64+zstd\``,
    );
  }
}

/** The node's JSON for an account (UiAccount), read at `slot` for jsonParsed mint lookups. */
export function encodeAccount(
  state: LedgerState,
  account: AccountSnapshot,
  options: EncodingOptions,
  slot: number,
): Record<string, unknown> {
  const encoding = options.encoding ?? "binary";
  let data: unknown;
  if (encoding === "jsonParsed") {
    data = isTokenProgram(account.owner) ? parseTokenJson(account, decimalsAt(state, slot)) : null;
    data ??= [base64.encode(account.data), "base64"];
  } else {
    let bytes = account.data;
    if (options.dataSlice) {
      const { offset, length } = options.dataSlice;
      bytes = bytes.slice(offset, offset + length);
    }
    if (encoding === "base64") data = [base64.encode(bytes), "base64"];
    else {
      if (bytes.length > 128) {
        throw new RpcError(
          -32600,
          "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.",
        );
      }
      data = encoding === "binary" ? base58.encode(bytes) : [base58.encode(bytes), "base58"];
    }
  }
  return {
    data,
    executable: account.executable,
    lamports: account.lamports,
    owner: account.owner,
    rentEpoch: RENT_EXEMPT_EPOCH,
    space: account.data.length,
  };
}

export function decimalsAt(state: LedgerState, slot: number): (mint: string) => number | null {
  return (mint) => {
    const account = accountAt(state, mint, slot);
    return account ? decodeMint(account)?.decimals ?? null : null;
  };
}
