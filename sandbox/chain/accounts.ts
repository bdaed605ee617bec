// Account reads at a commitment level. LiteSVM holds only the newest state, so every change a
// landed transaction makes is also kept as a version until it is finalized; a read at an older
// commitment slot takes the newest version at or before that slot.
import { type Address, address, lamports } from "@solana/kit";
import type { AccountSnapshot, LedgerState } from "./state.ts";

/** The SVM's current view of an account; zero-lamport accounts do not exist, as on a node. */
export function currentAccount(state: LedgerState, key: string): AccountSnapshot | null {
  const account = state.svm.getAccount(address(key));
  if (!account.exists || account.lamports === 0n) return null;
  return {
    lamports: account.lamports,
    data: new Uint8Array(account.data),
    owner: account.programAddress,
    executable: account.executable,
  };
}

/** The account as the bank at `slot` sees it. */
export function accountAt(state: LedgerState, key: string, slot: number): AccountSnapshot | null {
  const versions = state.accountVersions.get(key);
  // Before its oldest kept version, the account looked as that version did.
  const version = versions?.findLast((v) => v.slot <= slot) ?? versions?.[0];
  return version ? version.account : currentAccount(state, key);
}

/** Takes the pre-state of accounts a transaction is about to write. */
export function snapshotAccounts(
  state: LedgerState,
  keys: readonly string[],
): (AccountSnapshot | null)[] {
  return keys.map((key) => currentAccount(state, key));
}

/** Records the changes a landed transaction made, for reads at older commitments. */
export function recordAccountChanges(
  state: LedgerState,
  keys: readonly string[],
  before: (AccountSnapshot | null)[],
): void {
  if (before.length !== keys.length) {
    throw new Error("Cannot record changes: one pre-state per key");
  }
  keys.forEach((key, i) => {
    const previous = before[i] ?? null;
    const after = currentAccount(state, key);
    if (sameAccount(previous, after)) return;
    let versions = state.accountVersions.get(key);
    if (!versions) {
      versions = [{ slot: -1, account: previous }];
      state.accountVersions.set(key, versions);
    }
    const last = versions.at(-1);
    if (last?.slot === state.slot) last.account = after;
    else versions.push({ slot: state.slot, account: after });
  });
}

/**
 * Writes an account outside any transaction (fixtures, control API). The write is visible at
 * every commitment at once, as if it had been in genesis.
 */
export function writeAccount(
  state: LedgerState,
  key: string,
  account: AccountSnapshot | null,
): void {
  state.svm.setAccount({
    address: address(key),
    lamports: lamports(account?.lamports ?? 0n),
    programAddress: account?.owner ?? address("11111111111111111111111111111111"),
    executable: account?.executable ?? false,
    data: account?.data ?? new Uint8Array(),
    space: BigInt(account?.data.length ?? 0),
  });
  state.accountVersions.delete(key);
}

/** Addresses of all accounts owned by `owner` at `slot`, with their state. */
export function listProgramAccounts(
  state: LedgerState,
  owner: string,
  slot: number,
): { pubkey: Address; account: AccountSnapshot }[] {
  const keys = new Set<string>(state.svm.getProgramAccounts(address(owner)).map((a) => a.address));
  for (const key of state.accountVersions.keys()) keys.add(key);
  const out: { pubkey: Address; account: AccountSnapshot }[] = [];
  for (const key of keys) {
    const account = accountAt(state, key, slot);
    if (account && account.owner === owner) out.push({ pubkey: address(key), account });
  }
  return out;
}

function sameAccount(a: AccountSnapshot | null, b: AccountSnapshot | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.lamports !== b.lamports || a.owner !== b.owner || a.executable !== b.executable) {
    return false;
  }
  if (a.data.length !== b.data.length) return false;
  for (let i = 0; i < a.data.length; i++) if (a.data[i] !== b.data[i]) return false;
  return true;
}
