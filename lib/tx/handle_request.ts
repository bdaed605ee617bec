/** One transaction request from steps 5 to 14 (the guard ran steps 1 and 2, the route 3 and 4). */
import type { AppContext } from "../context.ts";
import { txResultOf } from "./result.ts";
import type { TxRequestInput } from "./body.ts";
import { checkTxRequest } from "./checks.ts";
import { executeAttempt } from "./send_and_wait.ts";
import { reserveTxRequest } from "./reserve.ts";
import { startDeadline } from "./timing.ts";
import type { TxResult } from "./result.ts";
import type { TxKind } from "../../core/events.ts";

/** Checks, reserves and sends a request; answers its TxResult or throws the first failing check. */
export async function handleTxRequest(
  ctx: AppContext,
  projectId: string,
  kind: TxKind,
  input: TxRequestInput,
): Promise<TxResult> {
  // The route's answer deadline runs from the request's arrival.
  const deadline = startDeadline(ctx.tx.timing);
  const checked = await checkTxRequest(ctx, projectId, kind, input);
  if (checked.kind === "existing") return txResultOf(checked.record);
  const request = checked.request;
  const reserved = await reserveTxRequest(ctx, request, { deadline });
  if (reserved.kind === "existing") return txResultOf(reserved.record);
  return await executeAttempt(ctx, {
    projectId,
    attemptId: reserved.entry.value.attemptId,
    cluster: request.project.cluster,
    kind,
    walletAddress: request.walletAddress,
    recipient: request.recipient,
    mint: request.mint,
    amount: request.amount,
  }, { entry: reserved.entry, deadline });
}
