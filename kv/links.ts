/** Player-wallet links: one wallet per player and one player per wallet, within a project. */
import { commitWithRetry, RETRY } from "../core/commit_retry.ts";
import { must } from "../core/must.ts";
import { getManyAtOnce } from "./get_many.ts";
import { wasWrittenBy } from "./lost_answer.ts";
import type { KvReader } from "./read_batches.ts";

/** A player's link as stored under the player. */
export interface LinkByUser {
  address: string;
  linkedAt: number;
}
/** The reverse index entry under the wallet. */
export interface LinkByAddress {
  userId: number;
  linkedAt: number;
}

/** Key of a player's link. */
export function linkByUserKey(projectId: string, userId: number): Deno.KvKey {
  return ["links_by_user", projectId, userId];
}
/** Key of a wallet's link. */
export function linkByAddressKey(projectId: string, address: string): Deno.KvKey {
  return ["links_by_address", projectId, address];
}

/** What a link changed, so callers can publish the right events. */
interface LinkOutcome {
  link: LinkByUser;
  /** The player's previous wallet, when it was a different one (no event: a swap). */
  replacedAddress: string | null;
  /** Another player who held this wallet until now and lost it (gets `wallet_unlinked`). */
  previousOwner: number | null;
}

/**
 * Commits a link change's atomic operation in the caller's way (adding the events the change
 * reports, so they land together or not at all); answers whether the commit succeeded. Called in
 * each round of the change's retry loop.
 */
type LinkCommit<C> = (op: Deno.AtomicOperation, change: C) => Promise<boolean>;

async function plainCommit(op: Deno.AtomicOperation): Promise<boolean> {
  return (await op.commit()).ok;
}

/** Links `address` to `userId` in one atomic commit, replacing the player's wallet and taking the wallet from any other player. */
export async function linkWallet(
  kv: Deno.Kv,
  projectId: string,
  link: { userId: number; address: string; now: number },
  options: { commit?: LinkCommit<LinkOutcome> } = {},
): Promise<LinkOutcome> {
  const commit = options.commit ?? plainCommit;
  const { userId, address, now } = link;
  return await commitWithRetry("link wallet", async () => {
    const [userEntry, addressEntry] = await kv.getMany<[LinkByUser, LinkByAddress]>([
      linkByUserKey(projectId, userId),
      linkByAddressKey(projectId, address),
    ]);
    const op = kv.atomic().check(userEntry, addressEntry);
    const replacedAddress = userEntry.value && userEntry.value.address !== address
      ? userEntry.value.address
      : null;
    if (replacedAddress) {
      const old = await kv.get<LinkByAddress>(linkByAddressKey(projectId, replacedAddress));
      op.check(old);
      if (old.value?.userId === userId) op.delete(old.key);
    }
    const previousOwner = addressEntry.value && addressEntry.value.userId !== userId
      ? addressEntry.value.userId
      : null;
    if (previousOwner !== null) {
      const theirs = await kv.get<LinkByUser>(linkByUserKey(projectId, previousOwner));
      op.check(theirs);
      if (theirs.value?.address === address) op.delete(theirs.key);
    }
    const stored: LinkByUser = { address, linkedAt: now };
    op.set(linkByUserKey(projectId, userId), stored)
      .set(linkByAddressKey(projectId, address), { userId, linkedAt: now });
    const outcome = { link: stored, replacedAddress, previousOwner };
    const applied = await commit(op, outcome) ||
      await wasWrittenBy<LinkByAddress>(
        kv,
        linkByAddressKey(projectId, address),
        (v) => v.userId === userId && v.linkedAt === now,
      );
    if (applied) return outcome;
    return RETRY;
  });
}

/** Removes the player's link; returns the wallet that was unlinked, or null when none (`commit` gets that wallet). */
export async function unlinkWallet(
  kv: Deno.Kv,
  projectId: string,
  userId: number,
  options: { commit?: LinkCommit<string> } = {},
): Promise<string | null> {
  const commit = options.commit ?? plainCommit;
  return await commitWithRetry("unlink wallet", async () => {
    const userEntry = await kv.get<LinkByUser>(linkByUserKey(projectId, userId));
    if (!userEntry.value) return null;
    const addressEntry = await kv.get<LinkByAddress>(
      linkByAddressKey(projectId, userEntry.value.address),
    );
    const op = kv.atomic().check(userEntry, addressEntry).delete(userEntry.key);
    if (addressEntry.value?.userId === userId) op.delete(addressEntry.key);
    if (await commit(op, userEntry.value.address)) return userEntry.value.address;
    return RETRY;
  });
}

/** Returns the player's link, or null. */
export async function getLinkByUser(
  kv: KvReader,
  projectId: string,
  userId: number,
): Promise<LinkByUser | null> {
  return (await kv.get<LinkByUser>(linkByUserKey(projectId, userId))).value;
}

/** Returns which player holds `address` in the project, or null. */
export async function getLinkByAddress(
  kv: KvReader,
  projectId: string,
  address: string,
): Promise<LinkByAddress | null> {
  return (await kv.get<LinkByAddress>(linkByAddressKey(projectId, address))).value;
}

/** Looks up many players' links with one batched read per 10 distinct ids. */
export async function getLinksByUsers(
  kv: Deno.Kv,
  projectId: string,
  userIds: readonly number[],
): Promise<Map<number, LinkByUser | null>> {
  const distinct = [...new Set(userIds)];
  const entries = await getManyAtOnce<LinkByUser>(
    kv,
    distinct.map((id) => linkByUserKey(projectId, id)),
  );
  const found = new Map<number, LinkByUser | null>();
  distinct.forEach((id, i) => found.set(id, must(entries[i], "getMany entry for a user").value));
  return found;
}

/** Lists a project's links (for the dashboard), up to `limit`. */
export async function listLinks(
  kv: Deno.Kv,
  projectId: string,
  limit = 100,
): Promise<Array<{ userId: number } & LinkByUser>> {
  const links: Array<{ userId: number } & LinkByUser> = [];
  for await (
    const e of kv.list<LinkByUser>({ prefix: ["links_by_user", projectId] }, { limit })
  ) {
    links.push({ userId: e.key[2] as number, ...e.value });
  }
  return links;
}
