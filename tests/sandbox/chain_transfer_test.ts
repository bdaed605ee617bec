import assert from "node:assert/strict";
import {
  address,
  createSolanaRpc,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  type Instruction,
  type KeyPairSigner,
  lamports,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { getTransferCheckedInstruction } from "@solana-program/token";
import { startChain } from "../../sandbox/chain/mod.ts";
import {
  createFundedSigner,
  createMint,
  findAta,
  mintTo,
  signInstructions,
} from "../../sandbox/chain/fixtures.ts";

const TOKEN_2022 = address("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");

async function signedTransfer(
  rpcUrl: string,
  feePayer: KeyPairSigner,
  instruction: Instruction,
) {
  const rpc = createSolanaRpc(rpcUrl);
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  return await signInstructions(feePayer, [instruction], latest);
}

Deno.test("sandbox chain lands a SOL transfer and moves it to finalized", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  // Given
  const sender = await createFundedSigner(chain, { lamports: 2_000_000_000n });
  const recipient = await generateKeyPairSigner();
  const tx = await signedTransfer(
    chain.rpcUrl,
    sender,
    getTransferSolInstruction({
      source: sender,
      destination: recipient.address,
      amount: lamports(1_000_000_000n),
    }),
  );
  const signature = getSignatureFromTransaction(tx);

  // When
  const sent = await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), {
    encoding: "base64",
    preflightCommitment: "confirmed",
  }).send();

  // Then
  assert.equal(sent, signature);
  const processed = await rpc.getSignatureStatuses([signature]).send();
  assert.equal(processed.value[0]?.confirmationStatus, "processed");
  assert.equal(processed.value[0]?.confirmations, 0n);
  assert.equal(processed.value[0]?.err, null);
  const atProcessed = await rpc.getBalance(recipient.address, { commitment: "processed" }).send();
  assert.equal(atProcessed.value, 1_000_000_000n);
  const atConfirmed = await rpc.getBalance(recipient.address, { commitment: "confirmed" }).send();
  assert.equal(atConfirmed.value, 0n);

  chain.advanceSlots(1);
  const confirmed = await rpc.getSignatureStatuses([signature]).send();
  assert.equal(confirmed.value[0]?.confirmationStatus, "confirmed");
  assert.equal(
    (await rpc.getBalance(recipient.address, { commitment: "confirmed" }).send()).value,
    1_000_000_000n,
  );
  const finalizedRead = { commitment: "finalized" } as const;
  assert.equal((await rpc.getBalance(recipient.address, finalizedRead).send()).value, 0n);

  chain.advanceSlots(30);
  const stillConfirmed = await rpc.getSignatureStatuses([signature]).send();
  assert.equal(stillConfirmed.value[0]?.confirmationStatus, "confirmed");
  chain.advanceSlots(1);
  const finalized = await rpc.getSignatureStatuses([signature]).send();
  assert.equal(finalized.value[0]?.confirmationStatus, "finalized");
  assert.equal(finalized.value[0]?.confirmations, null);
  assert.equal(
    (await rpc.getBalance(recipient.address, finalizedRead).send()).value,
    1_000_000_000n,
  );
  const senderBalance = await rpc.getBalance(sender.address, finalizedRead).send();
  assert.equal(senderBalance.value, 1_000_000_000n - 5000n);

  const fetched = await rpc.getTransaction(signature, {
    encoding: "json",
    maxSupportedTransactionVersion: 0,
  }).send();
  assert.equal(fetched?.meta?.err, null);
  assert.equal(fetched?.meta?.fee, 5000n);
  assert.deepEqual(fetched?.transaction.signatures, [signature]);
});

Deno.test("sandbox chain lands a Token-2022 transfer and moves it to finalized", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  // Given
  const payer = await createFundedSigner(chain);
  const owner = await createFundedSigner(chain, { lamports: 100_000_000n });
  const recipient = await generateKeyPairSigner();
  const mint = await createMint(chain, { payer, decimals: 6, tokenProgram: TOKEN_2022 });
  const { tokenAccount: source } = await mintTo(chain, {
    payer,
    mint,
    authority: payer,
    owner: owner.address,
    amount: 5_000_000n,
    decimals: 6,
    tokenProgram: TOKEN_2022,
  });
  const { tokenAccount: destination } = await mintTo(chain, {
    payer,
    mint,
    authority: payer,
    owner: recipient.address,
    amount: 0n,
    decimals: 6,
    tokenProgram: TOKEN_2022,
  });
  assert.equal(destination, await findAta(recipient.address, mint, TOKEN_2022));
  const tx = await signedTransfer(
    chain.rpcUrl,
    owner,
    getTransferCheckedInstruction({
      source,
      mint,
      destination,
      authority: owner,
      amount: 1_500_000n,
      decimals: 6,
    }, { programAddress: TOKEN_2022 }),
  );

  // When
  const signature = await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), {
    encoding: "base64",
    preflightCommitment: "confirmed",
  }).send();
  chain.advanceSlots(32);

  // Then
  const { value: [status] } = await rpc.getSignatureStatuses([signature]).send();
  assert.equal(status?.confirmationStatus, "finalized");
  const balance = await rpc.getTokenAccountBalance(destination).send();
  assert.deepEqual(balance.value, {
    amount: "1500000",
    decimals: 6,
    uiAmount: 1.5,
    uiAmountString: "1.5",
  });
  const accounts = await rpc.getTokenAccountsByOwner(
    recipient.address,
    { programId: TOKEN_2022 },
    { encoding: "jsonParsed" },
  ).send();
  assert.equal(accounts.value.length, 1);
  const [account] = accounts.value;
  assert.ok(account);
  assert.equal(account.pubkey, destination);
  const parsed = account.account.data.parsed;
  assert.equal(account.account.data.program, "spl-token-2022");
  assert.equal(parsed.type, "account");
  assert.equal(parsed.info.mint, mint);
  assert.equal(parsed.info.tokenAmount.amount, "1500000");
  const byMint = await rpc.getTokenAccountsByOwner(owner.address, { mint }, {
    encoding: "base64",
  }).send();
  assert.equal(byMint.value.length, 1);
  const classic = await rpc.getTokenAccountsByOwner(recipient.address, {
    programId: address("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"),
  }, { encoding: "base64" }).send();
  assert.equal(classic.value.length, 0);
  const history = await rpc.getTransaction(signature, {
    encoding: "json",
    maxSupportedTransactionVersion: 0,
  }).send();
  const post = history?.meta?.postTokenBalances?.find((b) => b.owner === recipient.address);
  assert.equal(post?.uiTokenAmount.amount, "1500000");
});
