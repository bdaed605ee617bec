/**
 * The links this instance found lately (its payouts', and the wallets `/v1` read for players), by
 * player and by wallet: a guess at a payout's recipient before its checks read the link
 * (`read_ahead.ts`). Only a guess: a payout whose link
 * says otherwise reads what it needs again. Bounded: the least recently used give way.
 */
import type { Address } from "@solana/kit";

// About 4 MB at most.
const MAX_LINKS = 40_000;

/** Where a payout goes: a player (`userId`) or a wallet (`address`). */
export type PayoutTarget = { userId: number } | { address: Address };

/** A payout's recipient and the player who holds it (null: no player). */
export interface Recipient {
  recipient: Address;
  userId: number | null;
}

/** The recent links of one process. */
export class RecentLinks {
  #links = new Map<string, Address | number | null>();

  /** The recipient a payout of the project to `to` had lately; null when none is known. */
  guess(projectId: string, to: PayoutTarget): Recipient | null {
    const known = this.#get(keyOf(projectId, to));
    if (known === undefined) return null;
    return "userId" in to
      ? { recipient: known as Address, userId: to.userId }
      : { recipient: to.address, userId: known as number | null };
  }

  /** Keeps what a payout of the project to `to` resolved to. */
  note(projectId: string, to: PayoutTarget, resolved: Recipient): void {
    const key = keyOf(projectId, to);
    this.#links.delete(key);
    this.#links.set(key, "userId" in to ? resolved.recipient : resolved.userId);
    if (this.#links.size > MAX_LINKS) this.#links.delete(this.#links.keys().next().value!);
  }

  #get(key: string): Address | number | null | undefined {
    const known = this.#links.get(key);
    if (known === undefined) return undefined;
    // Most recently used last, so the oldest give way first.
    this.#links.delete(key);
    this.#links.set(key, known);
    return known;
  }
}

function keyOf(projectId: string, to: PayoutTarget): string {
  return "userId" in to ? `${projectId}/user/${to.userId}` : `${projectId}/wallet/${to.address}`;
}
