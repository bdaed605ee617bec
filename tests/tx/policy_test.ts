// The transaction policy: validation for the dashboard, storage, and values kept as typed.
import assert from "node:assert/strict";
import { generateKeyPairSigner } from "@solana/kit";
import { ApiError } from "../../core/api_error.ts";
import { validatePolicy } from "../../lib/tx/request/policy.ts";
import { emptyPolicy } from "../../kv/policy.ts";
import { getPolicy } from "../../kv/policy.ts";
import { savePolicy } from "../../lib/tx/request/policy.ts";
import { createTestApp } from "../support/test_app.ts";

function settingsError(input: unknown): string {
  try {
    validatePolicy(input);
  } catch (error) {
    assert.ok(error instanceof ApiError);
    assert.deepEqual([error.status, error.code], [400, "invalid_settings"]);
    return error.message;
  }
  assert.fail("validatePolicy() accepted an invalid policy");
}

Deno.test("validatePolicy() accepts a full policy, trims it and unsets blank fields", async () => {
  const mint = (await generateKeyPairSigner()).address;
  const policy = validatePolicy({
    maxSolPerTransfer: " 1.50 ",
    allowedMints: [{ mint: ` ${mint}`, maxPerTransaction: "0.5" }],
    perRecipientPerHour: "3",
    perPlayerPerHour: 10,
    hourlyBudgets: [{ asset: "SOL", amount: "100" }, { asset: mint, amount: "7.25" }],
  });
  assert.deepEqual(policy, {
    maxSolPerTransfer: "1.50",
    allowedMints: [{ mint, maxPerTransaction: "0.5" }],
    perRecipientPerHour: 3,
    perPlayerPerHour: 10,
    hourlyBudgets: [{ asset: "SOL", amount: "100" }, { asset: mint, amount: "7.25" }],
  });
  assert.deepEqual(
    validatePolicy({ maxSolPerTransfer: "", perRecipientPerHour: "", perPlayerPerHour: null }),
    emptyPolicy(),
  );
});

Deno.test("validatePolicy() names every bad field in one invalid_settings message", async () => {
  const mint = (await generateKeyPairSigner()).address;
  const message = settingsError({
    maxSolPerTransfer: "1,5",
    allowedMints: [
      { mint: "nope", maxPerTransaction: "0" },
      { mint, maxPerTransaction: "1" },
      { mint, maxPerTransaction: "-2" },
    ],
    perRecipientPerHour: "1.5",
    perPlayerPerHour: 0,
    hourlyBudgets: [{ asset: "ETH", amount: "1" }, { asset: "SOL", amount: "" }],
  });
  const problems = message.split("; ");
  for (
    const field of [
      "maxSolPerTransfer: ",
      "allowedMints[0].mint: ",
      "allowedMints[0].maxPerTransaction: must be greater than zero",
      "allowedMints[2].maxPerTransaction: ",
      "allowedMints[2].mint: is listed twice",
      "perRecipientPerHour: ",
      "perPlayerPerHour: must be at least 1",
      "hourlyBudgets[0].asset: ",
      "hourlyBudgets[1].amount: ",
    ]
  ) {
    assert.ok(problems.some((p) => p.startsWith(field)), `${field} missing in: ${message}`);
  }
  assert.match(settingsError("not an object"), /^policy: /);
  assert.match(
    settingsError({
      allowedMints: Array.from({ length: 51 }, () => ({ mint, maxPerTransaction: "1" })),
    }),
    /allowedMints: must list at most 50 mints/,
  );
});

Deno.test("savePolicy() stores limits exactly as typed, even ones an asset's decimals cannot represent", async () => {
  await using t = await createTestApp();
  assert.deepEqual(await getPolicy(t.kv, "p1"), emptyPolicy());
  const mint = (await generateKeyPairSigner()).address;
  const saved = await savePolicy(t.kv, "p1", {
    maxSolPerTransfer: "0.0000000001",
    allowedMints: [{ mint, maxPerTransaction: "1.5" }],
  });
  assert.equal(saved.maxSolPerTransfer, "0.0000000001");
  assert.deepEqual(await getPolicy(t.kv, "p1"), saved);
  assert.throws(() => validatePolicy({ maxSolPerTransfer: "x" }), ApiError);
  await assert.rejects(savePolicy(t.kv, "p1", { maxSolPerTransfer: "x" }), ApiError);
  assert.deepEqual(await getPolicy(t.kv, "p1"), saved);
});
