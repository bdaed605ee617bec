import assert from "node:assert/strict";
import {
  type Address,
  address,
  createSolanaRpc,
  generateKeyPairSigner,
  type KeyPairSigner,
} from "@solana/kit";
import { getCreateAccountInstruction } from "@solana-program/system";
import {
  getInitializeAccount3Instruction,
  getMintToCheckedInstruction,
  getTokenSize,
} from "@solana-program/token";
import {
  createFundedSigner,
  createMint,
  findAta,
  mintTo,
  sendInstructions,
} from "../../sandbox/chain/fixtures.ts";
import type { SandboxChain } from "../../sandbox/chain/mod.ts";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../../lib/chain/mints.ts";
import { assertErrorCode } from "../support/assertions.ts";
import { startChainReads } from "../support/chain_reads.ts";

/** Opens a second, non-associated token account of `owner` and mints `amount` into it. */
async function mintToExtraAccount(
  chain: SandboxChain,
  input: {
    payer: KeyPairSigner;
    mint: Address;
    owner: Address;
    amount: bigint;
    decimals: number;
    tokenProgram: Address;
  },
): Promise<Address> {
  const account = await generateKeyPairSigner();
  const space = BigInt(getTokenSize());
  const rent = await createSolanaRpc(chain.rpcUrl).getMinimumBalanceForRentExemption(space).send();
  const programAddress = input.tokenProgram;
  await sendInstructions(chain, [
    getCreateAccountInstruction({
      payer: input.payer,
      newAccount: account,
      lamports: rent,
      space,
      programAddress,
    }),
    getInitializeAccount3Instruction(
      { account: account.address, mint: input.mint, owner: input.owner },
      { programAddress },
    ),
    getMintToCheckedInstruction({
      mint: input.mint,
      token: account.address,
      mintAuthority: input.payer,
      amount: input.amount,
      decimals: input.decimals,
    }, { programAddress }),
  ], { feePayer: input.payer });
  return account.address;
}

Deno.test("GET /v1/wallets/:address/tokens sums every account of a mint under both programs", async (t) => {
  await using h = await startChainReads();
  const payer = await createFundedSigner(h.chain);
  const { address: wallet } = await generateKeyPairSigner();

  // Given a Token mint held in two accounts, past 2^53 in base units
  const classic = await createMint(h.chain, { payer, decimals: 6 });
  await mintTo(h.chain, {
    payer,
    mint: classic,
    authority: payer,
    owner: wallet,
    amount: (1n << 53n) + 1n,
    decimals: 6,
  });
  await mintToExtraAccount(h.chain, {
    payer,
    mint: classic,
    owner: wallet,
    amount: 7n,
    decimals: 6,
    tokenProgram: TOKEN_PROGRAM,
  });
  // And a Token-2022 mint held in two accounts
  const t22 = await createMint(h.chain, { payer, decimals: 9, tokenProgram: TOKEN_2022_PROGRAM });
  await mintTo(h.chain, {
    payer,
    mint: t22,
    authority: payer,
    owner: wallet,
    amount: 1_500_000_000n,
    decimals: 9,
    tokenProgram: TOKEN_2022_PROGRAM,
  });
  await mintToExtraAccount(h.chain, {
    payer,
    mint: t22,
    owner: wallet,
    amount: 1n,
    decimals: 9,
    tokenProgram: TOKEN_2022_PROGRAM,
  });
  // And a 0-decimal mint with an empty account
  const empty = await createMint(h.chain, { payer, decimals: 0 });
  await mintTo(h.chain, {
    payer,
    mint: empty,
    authority: payer,
    owner: wallet,
    amount: 0n,
    decimals: 0,
  });

  const classicEntry = {
    mint: classic,
    amount: "9007199254741000",
    decimals: 6,
    uiAmount: "9007199254.741",
  };
  const t22Entry = { mint: t22, amount: "1500000001", decimals: 9, uiAmount: "1.500000001" };
  const emptyEntry = { mint: empty, amount: "0", decimals: 0, uiAmount: "0" };

  await t.step("without mint: one entry per mint", async () => {
    const res = await h.get(`/v1/wallets/${wallet}/tokens`);
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.address, wallet);
    const byMint = (a: { mint: string }, b: { mint: string }) => a.mint < b.mint ? -1 : 1;
    assert.deepEqual(body.tokens, [classicEntry, t22Entry, emptyEntry].sort(byMint));
  });

  await t.step("with a Token-2022 mint: exactly that entry", async () => {
    const res = await h.get(`/v1/wallets/${wallet}/tokens?mint=${t22}`);
    assert.deepEqual(await res.json(), { address: wallet, tokens: [t22Entry] });
  });

  await t.step("with a Token mint: the summed entry", async () => {
    const res = await h.get(`/v1/wallets/${wallet}/tokens?mint=${classic}`);
    assert.deepEqual(await res.json(), { address: wallet, tokens: [classicEntry] });
  });

  await t.step("with a mint the wallet never held: zero amounts", async () => {
    const { address: stranger } = await generateKeyPairSigner();
    const res = await h.get(`/v1/wallets/${stranger}/tokens?mint=${t22}`);
    assert.deepEqual(await res.json(), {
      address: stranger,
      tokens: [{ mint: t22, amount: "0", decimals: 9, uiAmount: "0" }],
    });
  });

  await t.step("a wallet without token accounts has an empty list", async () => {
    const { address: stranger } = await generateKeyPairSigner();
    const res = await h.get(`/v1/wallets/${stranger}/tokens`);
    assert.deepEqual(await res.json(), { address: stranger, tokens: [] });
  });

  await t.step("invalid_mint for anything that is not a token mint", async () => {
    const ata = await findAta(wallet, classic);
    const ata2022 = await findAta(wallet, t22, TOKEN_2022_PROGRAM);
    // Mint-shaped bytes under a program other than Token or Token-2022.
    const { address: impostor } = await generateKeyPairSigner();
    const data = new Uint8Array(82);
    data[44] = 6;
    data[45] = 1;
    h.chain.setAccount(impostor, {
      lamports: 1_000_000n,
      owner: address("metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s"),
      data,
    });
    const { address: missing } = await generateKeyPairSigner();
    for (const mint of [missing, payer.address, ata, ata2022, impostor]) {
      const res = await h.get(`/v1/wallets/${wallet}/tokens?mint=${mint}`);
      await assertErrorCode(res, 400, "invalid_mint");
    }
  });

  await t.step("invalid_address for a malformed wallet or mint", async () => {
    await assertErrorCode(await h.get(`/v1/wallets/123/tokens`), 400, "invalid_address");
    await assertErrorCode(
      await h.get(`/v1/wallets/${wallet}/tokens?mint=123`),
      400,
      "invalid_address",
    );
    await assertErrorCode(
      await h.get(`/v1/wallets/${wallet}/tokens?mint=`),
      400,
      "invalid_address",
    );
    // The wallet is checked before the mint.
    await assertErrorCode(await h.get(`/v1/wallets/1/tokens?mint=${t22}`), 400, "invalid_address");
  });

  await t.step("internal when the RPC fails, naming no URL", async () => {
    const { address: stranger } = await generateKeyPairSigner();
    h.chain.faults.failHttp(2, { status: 502 });
    const body = await assertErrorCode(
      await h.get(`/v1/wallets/${stranger}/tokens`),
      500,
      "internal",
    );
    assert.ok(!body.error.message.includes(h.chain.rpcUrl));
    h.chain.faults.clear();
  });
});
