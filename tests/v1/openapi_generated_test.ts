// Issue 27, item 1: the document is exact. Requests generated from the OpenAPI document alone
// (tests/support/openapi_requests.ts) go to the real app on a real store and chain: of those the
// document calls valid, none may be refused for a reason the document could state (refusals
// that depend on state, such as an unlinked player, a policy limit or a mint missing on the
// cluster, are counted apart); of those it calls invalid, none may be accepted. Every answer is
// also checked against the document by `call()`.
import assert from "node:assert/strict";
import { createFundedSigner, createMint, mintTo } from "../../sandbox/chain/fixtures.ts";
import { buildOpenApiDocument } from "../../routes/v1/openapi.ts";
import { call, TEST_BASE_URL } from "../support/test_app.ts";
import { type GeneratedRequest, RequestGenerator } from "../support/openapi_requests.ts";
import { startTxHarness } from "../support/tx_harness.ts";

const SEED = Number(Deno.env.get("OPENAPI_SEED") ?? 27);
const VALID_PER_OPERATION = 150;

/** Refusals that depend on the project's state or the chain, which no document can state. */
const STATE_CODES = new Set([
  "wallet_not_linked",
  "sol_transfers_disabled",
  "mint_not_allowed",
  "invalid_mint",
  "amount_over_limit",
  "invalid_limit_config",
  "idempotency_conflict",
  "daily_tx_quota_exceeded",
  "recipient_rate_limited",
  "player_rate_limited",
  "hourly_budget_exceeded",
  "daily_failed_tx_quota_exceeded",
  "read_budget_exceeded",
  "not_found",
]);

type Outcome =
  | "accepted"
  | "refused: state"
  | "refused: parameter dependency"
  | "refused: statable"
  | "invalid refused"
  | "invalid accepted";

Deno.test("Requests generated from the document: no valid one refused for a statable reason, no invalid one accepted", async () => {
  // Given: a project with a funded wallet, a policy that allows SOL and one token, linked players
  await using h = await startTxHarness();
  const issuer = await createFundedSigner(h.chain);
  const mint = await createMint(h.chain, { payer: issuer, decimals: 6 });
  await mintTo(h.chain, {
    payer: issuer,
    mint,
    authority: issuer,
    owner: h.wallet!,
    amount: 10n ** 15n,
    decimals: 6,
  });
  await h.policy({
    maxSolPerTransfer: "1000",
    allowedMints: [{ mint, maxPerTransaction: "1000000" }],
  });
  for (const userId of [1, 2, 1001]) await h.link(userId);
  const document = buildOpenApiDocument({ serverUrl: TEST_BASE_URL, title: "Blocklink" });
  const generator = new RequestGenerator(document, SEED);

  // When: every generated request is sent
  const counts = new Map<string, number>();
  const statable: string[] = [];
  const accepted: string[] = [];
  const misjudged: string[] = [];
  let sent = 0;
  for (const request of generator.requests(VALID_PER_OPERATION)) {
    if (generator.isValid(request) !== (request.broken === null)) {
      misjudged.push(describe(request, 0, "the oracle disagrees with the generator"));
      continue;
    }
    // Within the 600-a-minute quota: the quotas are not what this test measures.
    if (++sent % 500 === 0) h.a.clock.advance(61_000);
    const response = await call(h.a.app, request.path, {
      method: request.method.toUpperCase(),
      apiKey: h.apiKey,
      ...(request.body === undefined ? {} : { json: request.body }),
    });
    const body = await response.json();
    assert.ok(response.status < 500, describe(request, response.status, JSON.stringify(body)));
    const outcome = judge(request, response.status, body);
    counts.set(
      `${request.operationId} ${outcome}`,
      (counts.get(`${request.operationId} ${outcome}`) ?? 0) + 1,
    );
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
    if (outcome === "refused: statable") {
      statable.push(describe(request, response.status, body.error.message));
    }
    if (outcome === "invalid accepted") accepted.push(describe(request, response.status, ""));
  }

  // Then
  const total = (outcome: Outcome) => counts.get(outcome) ?? 0;
  console.log(
    `${sent} requests (seed ${SEED}): ${
      JSON.stringify(Object.fromEntries([...counts].sort()), null, 1)
    }`,
  );
  assert.deepEqual(misjudged, [], "the generator made a request of the wrong kind");
  assert.deepEqual(statable, [], "valid requests refused for a reason the document could state");
  assert.deepEqual(accepted, [], "invalid requests accepted");
  // The run exercised the service: most valid requests were answered, every operation was sent.
  assert.ok(sent >= 2_000, `only ${sent} requests`);
  assert.ok(total("accepted") >= 1_000, `only ${total("accepted")} accepted`);
  assert.ok(total("invalid refused") >= 150, `only ${total("invalid refused")} invalid`);
});

function judge(request: GeneratedRequest, status: number, body: unknown): Outcome {
  const ok = status < 400;
  if (request.broken !== null) return ok ? "invalid accepted" : "invalid refused";
  if (ok) return "accepted";
  const { code, message } = (body as { error: { code: string; message: string } }).error;
  if (STATE_CODES.has(code)) return "refused: state";
  // A token amount with more decimals than its mint has: the mint's decimals are the chain's.
  if (code === "invalid_amount" && request.operationId !== "transferSol") return "refused: state";
  // A cursor beyond the end of this project's feed: the feed's length is state.
  if (code === "invalid_request" && /past the end/.test(message)) return "refused: state";
  // `recent` only with `after=latest`: OpenAPI cannot tie one parameter to another's value.
  if (code === "invalid_request" && /^recent: only with after=latest$/.test(message)) {
    return "refused: parameter dependency";
  }
  return "refused: statable";
}

function describe(request: GeneratedRequest, status: number, detail: string): string {
  const body = request.body === undefined ? "" : ` ${JSON.stringify(request.body)}`;
  const broken = request.broken ? ` [${request.broken}]` : "";
  return `${request.method.toUpperCase()} ${request.path}${body}${broken} -> ${status} ${detail}`;
}
