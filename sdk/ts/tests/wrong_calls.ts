// deno-fmt-ignore-file: each `@ts-expect-error` must stay on the line above the call it marks.
// A compile-time test: `deno check` of this file (tests/v1/sdk_ts_test.ts, `deno task check`)
// passes only while every right call below type-checks and every call marked `@ts-expect-error`
// does not (an expected error that does not happen is itself an error).
import { Blocklink } from "../src/mod.ts";

declare const blocklink: Blocklink;
const address = "64o6jeVBp5qeED4xtGpjmSYL4gQvmnMhSL2SaXPS4G5z";

export async function rightCalls(): Promise<void> {
  await blocklink.transferSol({ to: { userId: 1001 }, amount: "0.25", idempotencyKey: "k" });
  await blocklink.transferSol({ to: { address }, amount: "0.25", idempotencyKey: "k" });
  await blocklink.transferToken({ to: { userId: 1 }, mint: address, amount: "1", idempotencyKey: "k" });
  await blocklink.getPlayerWallet(1001);
  await blocklink.getPlayerWallets([1001, 1002]);
  await blocklink.listEvents({ types: ["tx", "watch"], limit: 500 });
  for await (const event of blocklink.events({ types: ["tx"] })) {
    // Narrowed to the `tx` event: its fields need no check.
    const status: "confirmed" | "failed" = event.status;
    console.log(status, event.key);
  }
}

export async function wrongCalls(): Promise<void> {
  // @ts-expect-error `to` must name a player or an address
  await blocklink.transferSol({ to: {}, amount: "1", idempotencyKey: "k" });
  // @ts-expect-error `to` names one recipient, not two
  await blocklink.transferSol({ to: { userId: 1001, address }, amount: "1", idempotencyKey: "k" });
  // @ts-expect-error a user id is a number
  await blocklink.transferSol({ to: { userId: "1001" }, amount: "1", idempotencyKey: "k" });
  // @ts-expect-error a user id is a number
  await blocklink.getPlayerWallet("1001");
  // @ts-expect-error user ids are numbers
  await blocklink.getPlayerWallets(["1001"]);
  // @ts-expect-error not an event type
  await blocklink.listEvents({ types: ["tx", "transfer"] });
  // @ts-expect-error not an event type
  blocklink.events({ types: ["nope"] });
  // @ts-expect-error an amount is a decimal string, never a number
  await blocklink.transferSol({ to: { userId: 1 }, amount: 1, idempotencyKey: "k" });
  // @ts-expect-error a SOL transfer has no mint
  await blocklink.transferSol({ to: { userId: 1 }, mint: address, amount: "1", idempotencyKey: "k" });
  // @ts-expect-error a token transfer needs its mint
  await blocklink.transferToken({ to: { userId: 1 }, amount: "1", idempotencyKey: "k" });
}

export async function errorsNarrowByStatus(): Promise<void> {
  const paid = await blocklink.transferSol({ to: { userId: 1 }, amount: "1", idempotencyKey: "k" });
  if (!paid.ok && paid.status === 429) {
    const retryable: boolean = paid.code === "rate_limited";
    console.log(retryable);
    // @ts-expect-error a 429 never carries wallet_not_linked (a 404)
    if (paid.code === "wallet_not_linked") return;
  }
  if (!paid.ok && paid.status === 404) {
    const code: "wallet_not_linked" = paid.code;
    console.log(code);
  }
  if (paid.ok) {
    // @ts-expect-error a TxResult has no such field
    console.log(paid.data.amount);
  }
}
