/**
 * Steps 5 to 11 of the transaction routes' order of checks, after step 1 once more: the key may
 * have been revoked, or its project deleted, since the guard's cached look-up. They read and never
 * write, so a request refused here reserves nothing. Every store read is made up front in one
 * batch; the checks then run in the spec's order and the first failure is thrown.
 * Steps shared with the withdrawals are in `check_steps.ts`.
 */
import type { Address } from "@solana/kit";
import type { TxContext } from "../runtime.ts";
import type { MintInfo } from "../../chain/mints.ts";
import { parseAddress } from "../../chain/validation.ts";
import {
  type LinkByAddress,
  linkByAddressKey,
  type LinkByUser,
  linkByUserKey,
} from "../../../kv/links.ts";
import { type Project, projectKey } from "../../../kv/projects.ts";
import { policyKey } from "../../../kv/policy.ts";
import { txRequestKey, type TxRequestRecord } from "../../../kv/tx_requests.ts";
import { getManyAtOnce } from "../../../kv/get_many.ts";
import { ApiError } from "../../../core/api_error.ts";
import { checkSender, senderKey, type TxSender } from "./sender.ts";
import type { TxRequestInput } from "./request_body.ts";
import type { Deadline } from "../rpc/timing.ts";
import { SOL_ASSET } from "./policy.ts";
import { emptyPolicy, type TxPolicy } from "../../../kv/policy.ts";
import type { TxKind } from "../../../core/events.ts";
import { SOL_DECIMALS } from "../../chain/sol_balance.ts";
import { SOL_TRANSFER_PROGRAMS } from "../build/build.ts";
import { findMint, parseAmount, storedAnswer } from "./check_steps.ts";
import { allowedMaximum, checkMaximum } from "./policy_steps.ts";
import { type ReadAhead, readAhead } from "./read_ahead.ts";
import type { PayoutTarget } from "../recent_links.ts";
import type { Admission } from "../../quota/admission.ts";

/**
 * The API key a request came with and its project, as the guard resolved them; or, for a
 * reward's payment (`lib/rewards/`), the reward that sends it.
 */
export type TxCaller = { projectId: string } & ({ keyId: string } | { reward: string });

/** Everything steps 5 to 11 established, for the reservation and the build. */
export interface CheckedRequest {
  /** Who sent it: the reservation is checked against its record (the key's, or the member's). */
  sender: TxSender;
  project: Project;
  walletAddress: Address;
  kind: TxKind;
  input: TxRequestInput;
  policy: TxPolicy;
  /** The request record as read at step 7 (a failed attempt, or none). */
  previous: Deno.KvEntryMaybe<TxRequestRecord>;
  /**
   * The project's and the sender's records as step 1 read them again, and the policy steps 9 to 13
   * judged by (null for a withdrawal, outside it): the reservation's first round commits against
   * them (and `previous`) without reading them a second time. As the commit checks the policy, a
   * policy saved before it binds the payout at once (`reserve.ts`).
   */
  read: {
    project: Deno.KvEntryMaybe<Project>;
    sender: Deno.KvEntryMaybe<unknown>;
    policy: Deno.KvEntryMaybe<TxPolicy> | null;
  };
  /** The reservation's other records, read beside the checks' for a guessed recipient. */
  ahead: Promise<ReadAhead | null>;
  recipient: Address;
  recipientUserId: number | null;
  /** `SOL` or the mint address. */
  asset: string;
  mint: MintInfo | null;
  decimals: number;
  amount: bigint;
}

/** The outcome of steps 5 to 11: a stored attempt to answer with (step 7), or a checked request. */
type CheckOutcome =
  | { kind: "existing"; record: TxRequestRecord }
  | { kind: "checked"; request: CheckedRequest };

/** Who sends a request of `caller`. */
function senderOf(caller: TxCaller): TxSender {
  return "keyId" in caller ? { keyId: caller.keyId } : { reward: caller.reward };
}

/** Runs steps 5 to 11 for a request of `kind` sent by `caller`. */
export async function checkTxRequest(
  ctx: TxContext,
  caller: TxCaller,
  kind: TxKind,
  input: TxRequestInput,
  options: { deadline: Deadline; admission?: Admission | undefined },
): Promise<CheckOutcome> {
  const { body } = input;
  const { projectId } = caller;
  const sender = senderOf(caller);
  const to = body.to as { userId?: number; address?: string };
  // A `to.address` that is no address is refused at step 8; it never becomes part of a key.
  const toAddress = to.address === undefined ? null : parseAddress(to.address);
  // The player or wallet paid, whose link step 8 reads (none for a `to.address` that is no address).
  const target: PayoutTarget | null = to.userId !== undefined
    ? { userId: to.userId }
    : toAddress && { address: toAddress };
  const linkKey = target &&
    ("userId" in target
      ? linkByUserKey(projectId, target.userId)
      : linkByAddressKey(projectId, target.address));
  const requestKey = txRequestKey(projectId, input.idempotencyKey);
  const decidingKeys = [
    projectKey(projectId),
    senderKey(projectId, sender),
    policyKey(projectId),
    ...(linkKey ? [linkKey] : []),
  ];
  // One read; the reservation's commit checks the request, the project and the key again.
  // Both reads leave at once (over KV Connect in calls small enough not to wait: `kv/open_kv.ts`).
  const reading = getManyAtOnce(ctx.kv, [requestKey, ...decidingKeys]);
  const ahead = readAhead(ctx, {
    projectId,
    kind,
    to: target,
    asset: kind === "transfer-sol" ? SOL_ASSET : parseAddress(body.mint ?? undefined),
    counters: options.admission?.foldKey() ?? null,
  });
  // Taken by the reservation; a request refused before it must not leave it unheard.
  ahead.catch(() => {});
  const [previous, ...deciding] = await reading;
  const [projectEntry, keyEntry, policyEntry, linkEntry] = deciding as [
    Deno.KvEntryMaybe<Project>,
    Deno.KvEntryMaybe<unknown>,
    Deno.KvEntryMaybe<TxPolicy>,
    Deno.KvEntryMaybe<LinkByUser | LinkByAddress> | undefined,
  ];

  const read = {
    to,
    toAddress,
    target,
    ahead,
    previous: previous as Deno.KvEntryMaybe<TxRequestRecord>,
    projectEntry,
    keyEntry,
    policyEntry,
    linkEntry,
  };
  return await checkRead(ctx, caller, kind, input, read, options);
}

/** Steps 1 (again) to 11 on the records read for them. */
async function checkRead(
  ctx: TxContext,
  caller: TxCaller,
  kind: TxKind,
  input: TxRequestInput,
  read: {
    to: { userId?: number; address?: string };
    toAddress: Address | null;
    target: PayoutTarget | null;
    ahead: Promise<ReadAhead | null>;
    previous: Deno.KvEntryMaybe<TxRequestRecord>;
    projectEntry: Deno.KvEntryMaybe<Project>;
    keyEntry: Deno.KvEntryMaybe<unknown>;
    policyEntry: Deno.KvEntryMaybe<TxPolicy>;
    linkEntry: Deno.KvEntryMaybe<LinkByUser | LinkByAddress> | undefined;
  },
  options: { deadline: Deadline },
): Promise<CheckOutcome> {
  const { body } = input;
  const sender = senderOf(caller);
  const { to, toAddress, target, ahead, previous, projectEntry, keyEntry, policyEntry, linkEntry } =
    read;
  // Step 1 again, on the records themselves.
  const project = projectEntry.value;
  checkSender(project, keyEntry.value, sender);

  // Step 5: the mint must be an address.
  let mintAddress: Address | null = null;
  if (kind !== "transfer-sol") {
    mintAddress = parseAddress(body.mint ?? undefined);
    if (!mintAddress) throw new ApiError("invalid_address", "mint is not a valid address");
  }

  // Step 6: the managed wallet exists (read fresh: the key's cached project may predate it).
  const walletAddress = parseAddress(project?.walletAddress ?? undefined);
  if (!project || !walletAddress) {
    throw new ApiError("wallet_not_configured", "The project has no managed wallet");
  }

  // Step 7: a used key must carry the same request; an earlier non-failed attempt is the answer.
  const existing = storedAnswer(previous.value, { kind, body }, ctx.clock.now());
  if (existing) return { kind: "existing", record: existing };

  // Step 8: resolve the recipient, and the player who holds it at request time.
  let recipient: Address;
  let recipientUserId: number | null;
  if (to.userId !== undefined) {
    const link = linkEntry?.value as LinkByUser | null | undefined;
    const address = parseAddress(link?.address);
    if (!address) {
      throw new ApiError("wallet_not_linked", "The player has no wallet linked to this project");
    }
    recipient = address;
    recipientUserId = to.userId;
  } else {
    if (!toAddress) throw new ApiError("invalid_address", "to.address is not a valid address");
    if (kind === "transfer-sol" && SOL_TRANSFER_PROGRAMS.includes(toAddress)) {
      throw new ApiError(
        "invalid_address",
        "to.address is a program the transfer itself calls (System, Compute Budget or Memo): " +
          "it cannot receive SOL",
      );
    }
    recipient = toAddress;
    recipientUserId = (linkEntry?.value as LinkByAddress | null | undefined)?.userId ?? null;
  }
  // Step 8 threw for a `to.address` that is no address: the target is known here.
  ctx.tx.links.note(caller.projectId, target!, { recipient, userId: recipientUserId });

  // Step 9: the asset must be allowed by the policy.
  const policy = policyEntry.value ?? emptyPolicy();
  const limitText = allowedMaximum(kind, policy, mintAddress);

  // Step 10: the mint must exist on the project's cluster.
  let mint: MintInfo | null = null;
  if (mintAddress) {
    mint = await findMint(ctx, project, mintAddress, options.deadline);
    if (!mint) {
      throw new ApiError("invalid_mint", "The mint does not exist on the project's cluster");
    }
  }

  // Step 11: the amount, then the per-transaction limit in the asset's decimals.
  const decimals = mint?.decimals ?? SOL_DECIMALS;
  const amount = parseAmount(body.amount, decimals);
  checkMaximum(limitText, amount, decimals);

  return {
    kind: "checked",
    request: {
      sender,
      project,
      walletAddress,
      kind,
      input,
      policy,
      previous,
      read: { project: projectEntry, sender: keyEntry, policy: policyEntry },
      ahead,
      recipient,
      recipientUserId,
      asset: mint ? mint.address : SOL_ASSET,
      mint,
      decimals,
      amount,
    },
  };
}
