// Account reads: balances, account data, program and token account listings.
import { base58, base64 } from "@scure/base";
import { accountAt, listProgramAccounts } from "./accounts.ts";
import {
  checkAccountEncoding,
  decimalsAt,
  encodeAccount,
  type EncodingOptions,
} from "./encoding.ts";
import { invalidParam, invalidParams } from "./rpc_errors.ts";
import { bankSlot, type Config, configParam, context, param, pubkeyParam } from "./rpc_params.ts";
import type { RpcHandler } from "./rpc_dispatch.ts";
import type { AccountSnapshot, LedgerState } from "./state.ts";
import { decodeMint, decodeTokenAccount, isTokenProgram, tokenAmountJson } from "./token_layout.ts";

function encodingOptions(config: Config): EncodingOptions {
  const encoding = config.encoding as string | undefined;
  checkAccountEncoding(encoding);
  return { encoding, dataSlice: config.dataSlice as EncodingOptions["dataSlice"] };
}

function readAccount(state: LedgerState, key: string, slot: number, options: EncodingOptions) {
  const account = accountAt(state, key, slot);
  return account ? encodeAccount(state, account, options, slot) : null;
}

type Filter = {
  dataSize?: number;
  memcmp?: { offset: number; bytes: string; encoding?: string };
  tokenAccountState?: unknown;
};

function matchesFilters(account: AccountSnapshot, filters: Filter[]): boolean {
  return filters.every((filter) => {
    if (filter.dataSize !== undefined) return account.data.length === filter.dataSize;
    if (filter.memcmp) {
      const { offset, bytes, encoding } = filter.memcmp;
      const wanted = encoding === "base64" ? base64.decode(bytes) : base58.decode(bytes);
      if (offset + wanted.length > account.data.length) return false;
      return wanted.every((b, i) => account.data[offset + i] === b);
    }
    if (filter.tokenAccountState !== undefined) return decodeTokenAccount(account) !== null;
    return true;
  });
}

function checkFilters(value: unknown): Filter[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    throw invalidParams("Invalid params: invalid type, expected a sequence.");
  }
  if (value.length > 4) throw invalidParam("too many filters provided; max 4");
  for (const f of value as Filter[]) {
    if (f.memcmp) {
      const { bytes, encoding } = f.memcmp;
      if (encoding !== "base64" && bytes.length > 175) {
        throw invalidParam("base58 encoded binary data too large");
      }
      try {
        encoding === "base64" ? base64.decode(bytes) : base58.decode(bytes);
      } catch {
        throw invalidParam(`invalid ${encoding ?? "base58"} encoding`);
      }
    } else if (f.dataSize === undefined && f.tokenAccountState === undefined) {
      throw invalidParams(
        "Invalid params: unknown filter, expected `dataSize`, `memcmp` or `tokenAccountState`.",
      );
    }
  }
  return value as Filter[];
}

export const accountMethods: Record<string, RpcHandler> = {
  getBalance: (state, params) => {
    const key = pubkeyParam(param(params, 0, "1 or 2 elements"));
    const slot = bankSlot(state, configParam(params, 1));
    return { context: context(slot), value: accountAt(state, key, slot)?.lamports ?? 0n };
  },
  getAccountInfo: (state, params) => {
    const key = pubkeyParam(param(params, 0, "1 or 2 elements"));
    const config = configParam(params, 1);
    const slot = bankSlot(state, config);
    return {
      context: context(slot),
      value: readAccount(state, key, slot, encodingOptions(config)),
    };
  },
  getMultipleAccounts: (state, params) => {
    const keys = param<unknown[]>(params, 0, "1 or 2 elements");
    if (!Array.isArray(keys)) {
      throw invalidParams("Invalid params: invalid type, expected a sequence.");
    }
    if (keys.length > 100) throw invalidParam("Too many inputs provided; max 100");
    const checked = keys.map(pubkeyParam);
    const config = configParam(params, 1);
    const slot = bankSlot(state, config);
    const options = encodingOptions(config);
    return {
      context: context(slot),
      value: checked.map((k) => readAccount(state, k, slot, options)),
    };
  },
  getProgramAccounts: (state, params) => {
    const program = pubkeyParam(param(params, 0, "1 or 2 elements"));
    const config = configParam(params, 1);
    const slot = bankSlot(state, config);
    const options = encodingOptions(config);
    const filters = checkFilters(config.filters);
    const value = listProgramAccounts(state, program, slot)
      .filter(({ account }) => matchesFilters(account, filters))
      .map(({ pubkey, account }) => ({
        pubkey,
        account: encodeAccount(state, account, options, slot),
      }));
    return config.withContext ? { context: context(slot), value } : value;
  },
  getTokenAccountsByOwner: (state, params) => {
    const owner = pubkeyParam(param(params, 0, "2 or 3 elements"));
    const filter = param<Record<string, unknown>>(params, 1, "2 or 3 elements");
    const config = configParam(params, 2);
    const slot = bankSlot(state, config);
    const options = encodingOptions(config);
    let program: string;
    let mint: string | null = null;
    if (filter && typeof filter.mint === "string") {
      mint = pubkeyParam(filter.mint);
      const mintAccount = accountAt(state, mint, slot);
      if (!mintAccount || !isTokenProgram(mintAccount.owner) || !decodeMint(mintAccount)) {
        throw invalidParam("could not find mint");
      }
      program = mintAccount.owner;
    } else if (filter && typeof filter.programId === "string") {
      program = pubkeyParam(filter.programId);
      if (!isTokenProgram(program)) throw invalidParam("unrecognized Token program id");
    } else {
      throw invalidParams("Invalid params: expected `mint` or `programId`.");
    }
    const value = listProgramAccounts(state, program, slot)
      .filter(({ account }) => {
        const token = decodeTokenAccount(account);
        return token !== null && token.owner === owner && (mint === null || token.mint === mint);
      })
      .map(({ pubkey, account }) => ({
        pubkey,
        account: encodeAccount(state, account, options, slot),
      }));
    return { context: context(slot), value };
  },
  getTokenAccountBalance: (state, params) => {
    const key = pubkeyParam(param(params, 0, "1 or 2 elements"));
    const slot = bankSlot(state, configParam(params, 1));
    const account = accountAt(state, key, slot);
    if (!account) throw invalidParam("could not find account");
    const token = decodeTokenAccount(account);
    if (!token) throw invalidParam("not a Token account");
    const decimals = decimalsAt(state, slot)(token.mint);
    if (decimals === null) throw invalidParam("could not find mint");
    return { context: context(slot), value: tokenAmountJson(token.amount, decimals) };
  },
  getTokenSupply: (state, params) => {
    const key = pubkeyParam(param(params, 0, "1 or 2 elements"));
    const slot = bankSlot(state, configParam(params, 1));
    const account = accountAt(state, key, slot);
    const mint = account ? decodeMint(account) : null;
    if (!mint) throw invalidParam("not a Token mint");
    return { context: context(slot), value: tokenAmountJson(mint.supply, mint.decimals) };
  },
};
