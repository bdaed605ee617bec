/**
 * Steps 5 to 11 of the transaction routes' order of checks, after step 1 once more: the key may
 * have been revoked, or its project deleted, since the guard's cached look-up. They read and never
 * write, so a request refused here reserves nothing. Every store read is made up front in one
 * batch; the checks then run in the spec's order and the first failure is thrown.
 */
import type { Address } from "@solana/kit";
import type { TxContext } from "./runtime.ts";
import { parseUnits } from "../chain/amounts.ts";
import { fetchMint, type MintInfo } from "../chain/mints.ts";
import { parseAddress } from "../chain/validation.ts";
import {
  type LinkByAddress,
  linkByAddressKey,
  type LinkByUser,
  linkByUserKey,
} from "../../kv/links.ts";
import { type Project, projectKey } from "../../kv/projects.ts";
import { apiKeyKey, type ApiKeyRecord } from "../../kv/api_keys.ts";
import { policyKey } from "../../kv/policy.ts";
import {
  liveTxRequest,
  type TxBody,
  txRequestKey,
  type TxRequestRecord,
} from "../../kv/tx_requests.ts";
import { ApiError } from "../../core/api_error.ts";
import { checkSender, type TxSender } from "./sender.ts";
import { isSameRequest, type TxRequestInput } from "./request_body.ts";
import { retryRead, rpcFailureReason } from "./chain_errors.ts";
import type { Deadline } from "./timing.ts";
import { abortable } from "../../core/deadline.ts";
import { findMintAllowance, SOL_ASSET } from "./policy.ts";
import { emptyPolicy, type TxPolicy } from "../../kv/policy.ts";
import type { TxKind } from "../../core/events.ts";
import { SOL_DECIMALS } from "../chain/sol_balance.ts";
import { SOL_TRANSFER_PROGRAMS } from "./build.ts";

/** The API key a request came with and its project, as the guard resolved them. */
export interface TxCaller {
  projectId: string;
  keyId: string;
}

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
   * The project's and the sender's records as step 1 read them again: the reservation's first
   * round commits against them (and `previous`) without reading them a second time.
   */
  read: { project: Deno.KvEntryMaybe<Project>; sender: Deno.KvEntryMaybe<unknown> };
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

/** Runs steps 5 to 11 for a request of `kind` sent by `caller`. */
export async function checkTxRequest(
  ctx: TxContext,
  caller: TxCaller,
  kind: TxKind,
  input: TxRequestInput,
  options: { deadline: Deadline },
): Promise<CheckOutcome> {
  const { body } = input;
  const { projectId, keyId } = caller;
  const to = body.to as { userId?: number; address?: string };
  // A `to.address` that is no address is refused at step 8; it never becomes part of a key.
  const toAddress = to.address === undefined ? null : parseAddress(to.address);
  const linkKey = to.userId !== undefined
    ? linkByUserKey(projectId, to.userId)
    : toAddress && linkByAddressKey(projectId, toAddress);
  // Batched with other requests' reads, maybe in two snapshots: no check needs them read
  // together, and the reservation's commit checks the request, the project and the key again.
  const [projectEntry, keyEntry, previous, policyEntry, linkEntry] = await ctx.reads.getMany([
    projectKey(projectId),
    apiKeyKey(projectId, keyId),
    txRequestKey(projectId, input.idempotencyKey),
    policyKey(projectId),
    ...(linkKey ? [linkKey] : []),
  ]) as [
    Deno.KvEntryMaybe<Project>,
    Deno.KvEntryMaybe<ApiKeyRecord>,
    Deno.KvEntryMaybe<TxRequestRecord>,
    Deno.KvEntryMaybe<TxPolicy>,
    Deno.KvEntryMaybe<LinkByUser | LinkByAddress> | undefined,
  ];

  // Step 1 again, on the records themselves.
  const project = projectEntry.value;
  checkSender(project, keyEntry.value, { keyId });

  // Step 5: the mint must be an address.
  let mintAddress: Address | null = null;
  if (kind !== "transfer-sol") {
    mintAddress = parseAddress(body.mint ?? undefined);
    if (!mintAddress) throw new ApiError(400, "invalid_address", "mint is not a valid address");
  }

  // Step 6: the managed wallet exists (read fresh: the key's cached project may predate it).
  const walletAddress = parseAddress(project?.walletAddress ?? undefined);
  if (!project || !walletAddress) {
    throw new ApiError(409, "wallet_not_configured", "The project has no managed wallet");
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
      throw new ApiError(
        404,
        "wallet_not_linked",
        "The player has no wallet linked to this project",
      );
    }
    recipient = address;
    recipientUserId = to.userId;
  } else {
    if (!toAddress) throw new ApiError(400, "invalid_address", "to.address is not a valid address");
    if (kind === "transfer-sol" && SOL_TRANSFER_PROGRAMS.includes(toAddress)) {
      throw new ApiError(
        400,
        "invalid_address",
        "to.address is a program the transfer itself calls (System, Compute Budget or Memo): " +
          "it cannot receive SOL",
      );
    }
    recipient = toAddress;
    recipientUserId = (linkEntry?.value as LinkByAddress | null | undefined)?.userId ?? null;
  }

  // Step 9: the asset must be allowed by the policy.
  const policy = policyEntry.value ?? emptyPolicy();
  let limitText: string;
  if (kind === "transfer-sol") {
    if (policy.maxSolPerTransfer === null) {
      throw new ApiError(403, "sol_transfers_disabled", "SOL transfers are disabled by the policy");
    }
    limitText = policy.maxSolPerTransfer;
  } else {
    const allowance = findMintAllowance(policy, mintAddress!);
    if (!allowance) {
      throw new ApiError(403, "mint_not_allowed", "The mint is not allowed by the policy");
    }
    limitText = allowance.maxPerTransaction;
  }

  // Step 10: the mint must exist on the project's cluster.
  let mint: MintInfo | null = null;
  if (mintAddress) {
    mint = await findMint(ctx, project, mintAddress, options.deadline);
    if (!mint) {
      throw new ApiError(400, "invalid_mint", "The mint does not exist on the project's cluster");
    }
  }

  // Step 11: the amount, then the per-transaction limit in the asset's decimals.
  const decimals = mint?.decimals ?? SOL_DECIMALS;
  const amount = parseAmount(body.amount, decimals);
  const limit = parseUnits(limitText, decimals);
  if (limit === null) {
    throw new ApiError(
      422,
      "invalid_limit_config",
      `The per-transaction maximum ${limitText} cannot be represented with ${decimals} decimals`,
    );
  }
  if (amount > limit) {
    throw new ApiError(
      403,
      "amount_over_limit",
      `Amount is above the per-transaction maximum of ${limitText}`,
    );
  }

  return {
    kind: "checked",
    request: {
      sender: { keyId },
      project,
      walletAddress,
      kind,
      input,
      policy,
      previous,
      read: { project: projectEntry, sender: keyEntry },
      recipient,
      recipientUserId,
      asset: mint ? mint.address : SOL_ASSET,
      mint,
      decimals,
      amount,
    },
  };
}

/**
 * Step 7: the stored attempt a used key answers with (one not `failed`), or null to go on with a
 * new or a failed key; 409 `idempotency_conflict` when the key was used for another request.
 */
export function storedAnswer(
  stored: TxRequestRecord | null,
  request: { kind: TxKind; body: TxBody },
  now: number,
): TxRequestRecord | null {
  const used = liveTxRequest(stored, now);
  if (!used) return null;
  if (!isSameRequest(used, request)) throw idempotencyConflict();
  return used.status === "failed" ? null : used;
}

/** The amount in raw units of an asset with `decimals`; 400 `invalid_amount` (step 11). */
export function parseAmount(text: string, decimals: number): bigint {
  const amount = parseUnits(text, decimals);
  if (amount === null || amount === 0n || amount > U64_MAX) {
    throw new ApiError(
      400,
      "invalid_amount",
      amount === 0n
        ? "Amount must be greater than zero"
        : `Amount must be a positive number with at most ${decimals} decimals`,
    );
  }
  return amount;
}

/** Largest raw amount a token or lamport amount can hold. */
const U64_MAX = 2n ** 64n - 1n;

/** 409 `idempotency_conflict`. */
export function idempotencyConflict(): ApiError {
  return new ApiError(
    409,
    "idempotency_conflict",
    "The idempotency key was already used for a different request",
  );
}

/** The mint on the project's cluster (cached), or null when there is none; 502 `rpc_error`. */
export async function findMint(
  ctx: TxContext,
  project: Project,
  mint: Address,
  deadline: Deadline,
): Promise<MintInfo | null> {
  const read = (abortSignal: AbortSignal) =>
    fetchMint(ctx.rpc[project.cluster], mint, { abortSignal });
  try {
    // A lookup of the same mint already in flight is shared, and waited for until our deadline.
    return await abortable(
      ctx.tx.mints.get(
        project.cluster,
        mint,
        () => retryRead(read, { timing: ctx.tx.timing }),
      ),
      deadline.signal,
    );
  } catch (error) {
    // Nothing is reserved yet: the caller may simply retry.
    throw new ApiError(502, "rpc_error", `Could not read the mint: ${rpcFailureReason(error)}`);
  }
}
