// Test and demo fixtures that act on the sandbox only through real transactions over RPC.
import {
  type Address,
  appendTransactionMessageInstructions,
  type Blockhash,
  type Commitment,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  type Instruction,
  type KeyPairSigner,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Signature,
  signTransactionMessageWithSigners,
  type TransactionSigner,
} from "@solana/kit";
import { getCreateAccountInstruction, getTransferSolInstruction } from "@solana-program/system";
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";

/** What fixtures need of a chain: its URL and, for manual time, a way to step it. */
export type FixtureChain = {
  rpcUrl: string;
  slotMs: number;
  autoAdvance: boolean;
  advanceSlots(n: number): void | Promise<void>;
};

export type SettleOptions = { commitment?: Commitment | undefined };

const ORDER: Commitment[] = ["processed", "confirmed", "finalized"];

/**
 * Waits until a signature reaches the commitment (default confirmed), stepping the clock when
 * the chain does not advance on its own. Throws if the transaction failed or never lands.
 */
export async function waitForCommitment(
  chain: FixtureChain,
  signature: Signature,
  options: SettleOptions = {},
): Promise<void> {
  const rpc = createSolanaRpc(chain.rpcUrl);
  const wanted = ORDER.indexOf(options.commitment ?? "confirmed");
  for (let round = 0; round < 400; round++) {
    const { value: [status] } = await rpc.getSignatureStatuses([signature]).send();
    if (status?.err) {
      throw new Error(
        `Cannot settle ${signature}: transaction failed: ${JSON.stringify(status.err)}`,
      );
    }
    if (status && ORDER.indexOf(status.confirmationStatus ?? "processed") >= wanted) return;
    if (chain.autoAdvance) await new Promise((r) => setTimeout(r, Math.max(10, chain.slotMs / 2)));
    else await chain.advanceSlots(1);
  }
  throw new Error(`Cannot settle ${signature}: it did not reach the commitment`);
}

/** The blockhash a transaction lives by, as `getLatestBlockhash` answers it. */
export type Lifetime = { blockhash: Blockhash; lastValidBlockHeight: bigint };

/** Signs `instructions` in one transaction paid by `feePayer` under `latest`, without sending it. */
export async function signInstructions(
  feePayer: TransactionSigner,
  instructions: Instruction[],
  latest: Lifetime,
) {
  return await signTransactionMessageWithSigners(pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  ));
}

/** A signed SOL transfer of `amount` lamports from `sender` to `to` under `latest`, not sent. */
export async function signSolTransfer(
  sender: TransactionSigner,
  to: Address,
  amount: bigint,
  latest: Lifetime,
) {
  const transfer = getTransferSolInstruction({
    source: sender,
    destination: to,
    amount: lamports(amount),
  });
  return await signInstructions(sender, [transfer], latest);
}

/**
 * Sends `amount` lamports from `from` to a new address without preflight, so that a transfer
 * which fails on chain still lands; does not wait for it.
 */
export async function sendSolTransfer(
  chain: Pick<FixtureChain, "rpcUrl">,
  options: { from: TransactionSigner; amount: bigint },
): Promise<Signature> {
  const rpc = createSolanaRpc(chain.rpcUrl);
  const { address: to } = await generateKeyPairSigner();
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  const signed = await signSolTransfer(options.from, to, options.amount, latest);
  await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), {
    encoding: "base64",
    skipPreflight: true,
  }).send();
  return getSignatureFromTransaction(signed);
}

/** Signs and sends instructions (blockhash and preflight at confirmed), then waits for them. */
export async function sendInstructions(
  chain: FixtureChain,
  instructions: Instruction[],
  options: { feePayer: TransactionSigner } & SettleOptions,
): Promise<Signature> {
  const rpc = createSolanaRpc(chain.rpcUrl);
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  const signed = await signInstructions(options.feePayer, instructions, latest);
  const signature = getSignatureFromTransaction(signed);
  await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), {
    encoding: "base64",
    preflightCommitment: "confirmed",
  }).send();
  await waitForCommitment(chain, signature, options);
  return signature;
}

/** requestAirdrop over RPC, then waits for it. */
export async function airdrop(
  chain: FixtureChain,
  to: Address,
  amount: bigint,
  options: SettleOptions = {},
): Promise<Signature> {
  const rpc = createSolanaRpc(chain.rpcUrl);
  const signature = await rpc.requestAirdrop(to, lamports(amount)).send();
  await waitForCommitment(chain, signature, options);
  return signature;
}

/** A new key pair holding `lamports` (default 10 SOL). */
export async function createFundedSigner(
  chain: FixtureChain,
  options: { lamports?: bigint } & SettleOptions = {},
): Promise<KeyPairSigner> {
  const signer = await generateKeyPairSigner();
  await airdrop(chain, signer.address, options.lamports ?? 10_000_000_000n, options);
  return signer;
}

export type CreateMintOptions = {
  payer: TransactionSigner;
  decimals: number;
  /** Mint authority address (default: the payer). */
  mintAuthority?: Address;
  freezeAuthority?: Address | null;
  /** TOKEN_PROGRAM_ADDRESS (default) or the Token-2022 program address. */
  tokenProgram?: Address;
} & SettleOptions;

/** Creates and initializes a mint under Token or Token-2022; returns its address. */
export async function createMint(
  chain: FixtureChain,
  options: CreateMintOptions,
): Promise<Address> {
  const rpc = createSolanaRpc(chain.rpcUrl);
  const mint = await generateKeyPairSigner();
  const tokenProgram = options.tokenProgram ?? TOKEN_PROGRAM_ADDRESS;
  const space = BigInt(getMintSize());
  const rent = await rpc.getMinimumBalanceForRentExemption(space).send();
  await sendInstructions(chain, [
    getCreateAccountInstruction({
      payer: options.payer,
      newAccount: mint,
      lamports: rent,
      space,
      programAddress: tokenProgram,
    }),
    getInitializeMint2Instruction({
      mint: mint.address,
      decimals: options.decimals,
      mintAuthority: options.mintAuthority ?? options.payer.address,
      freezeAuthority: options.freezeAuthority ?? null,
    }, { programAddress: tokenProgram }),
  ], { feePayer: options.payer, commitment: options.commitment });
  return mint.address;
}

/** The associated token account of an owner for a mint under its token program. */
export async function findAta(
  owner: Address,
  mint: Address,
  tokenProgram: Address = TOKEN_PROGRAM_ADDRESS,
): Promise<Address> {
  const [ata] = await findAssociatedTokenPda({ owner, mint, tokenProgram });
  return ata;
}

export type MintToOptions = {
  payer: TransactionSigner;
  mint: Address;
  /** The mint authority, signing. */
  authority: TransactionSigner;
  /** Wallet receiving the tokens; its associated token account is created if missing. */
  owner: Address;
  amount: bigint;
  decimals: number;
  tokenProgram?: Address;
} & SettleOptions;

/** Mints to a wallet's associated token account; returns that account and the signature. */
export async function mintTo(
  chain: FixtureChain,
  options: MintToOptions,
): Promise<{ tokenAccount: Address; signature: Signature }> {
  const tokenProgram = options.tokenProgram ?? TOKEN_PROGRAM_ADDRESS;
  const tokenAccount = await findAta(options.owner, options.mint, tokenProgram);
  const signature = await sendInstructions(chain, [
    getCreateAssociatedTokenIdempotentInstruction({
      payer: options.payer,
      ata: tokenAccount,
      owner: options.owner,
      mint: options.mint,
      tokenProgram,
    }),
    getMintToCheckedInstruction({
      mint: options.mint,
      token: tokenAccount,
      mintAuthority: options.authority,
      amount: options.amount,
      decimals: options.decimals,
    }, { programAddress: tokenProgram }),
  ], { feePayer: options.payer, commitment: options.commitment });
  return { tokenAccount, signature };
}
