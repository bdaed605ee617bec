// Reads of huge wallets stop within a fixed budget of RPC calls and bytes (issue 12, item 5).
import assert from "node:assert/strict";
import { type Address, generateKeyPairSigner, getAddressDecoder } from "@solana/kit";
import { AccountState, getTokenEncoder } from "@solana-program/token";
import { createFundedSigner, createMint } from "../../sandbox/chain/fixtures.ts";
import type { SandboxChain } from "../../sandbox/chain/mod.ts";
import { TOKEN_PROGRAM } from "../../lib/chain/mints.ts";
import { DEFAULT_READ_BUDGET } from "../../lib/chain/read_budget.ts";
import { assertErrorCode } from "../support/assertions.ts";
import { startCounted } from "../support/chain_reads.ts";

/** Gives `owner` `count` token accounts of `mint` holding 1 each, written straight into the ledger. */
function giveTokenAccounts(
  chain: SandboxChain,
  owner: Address,
  mint: Address,
  count: number,
) {
  const encoder = getTokenEncoder();
  const addresses = getAddressDecoder();
  for (let i = 0; i < count; i++) {
    const account = addresses.decode(crypto.getRandomValues(new Uint8Array(32)));
    const data = new Uint8Array(encoder.encode({
      mint,
      owner,
      amount: 1n,
      delegate: null,
      state: AccountState.Initialized,
      isNative: null,
      delegatedAmount: 0n,
      closeAuthority: null,
    }));
    chain.setAccount(account, { lamports: 2_039_280n, owner: TOKEN_PROGRAM, data });
  }
}

Deno.test("A token or asset read of a wallet with thousands of token accounts fails clearly within its budget", async () => {
  await using s = await startCounted();
  const { h, counter } = s;
  // Given a wallet holding 6,000 token accounts (an NFT-like 0-decimal mint, supply aside)
  const payer = await createFundedSigner(h.chain);
  const mint = await createMint(h.chain, { payer, decimals: 0 });
  const owner = (await generateKeyPairSigner()).address;
  giveTokenAccounts(h.chain, owner, mint, 6_000);
  const before = counter.total();
  // When the game reads its tokens or its assets
  for (const path of [`/v1/wallets/${owner}/tokens`, `/v1/wallets/${owner}/assets`]) {
    const body = await assertErrorCode(await h.get(path), 422, "read_budget_exceeded");
    assert.match(body.error.message, /MB of RPC answers/);
  }
  // Then each read stopped within its call budget
  assert.ok(counter.total() - before <= 2 * DEFAULT_READ_BUDGET.calls);
  // And a read of one mint with that many accounts is bounded the same way
  await assertErrorCode(
    await h.get(`/v1/wallets/${owner}/tokens?mint=${mint}`),
    422,
    "read_budget_exceeded",
  );
});
