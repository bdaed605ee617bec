// The transaction bytes written without Kit's codecs (lib/chain/wire.ts) are Kit's, byte for byte.
import assert from "node:assert/strict";
import {
  address,
  appendTransactionMessageInstructions,
  compileTransactionMessage,
  createNoopSigner,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getCompiledTransactionMessageEncoder,
  getSignatureFromTransaction,
  type Instruction,
  isAddress,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type SignatureBytes,
  type Transaction,
  type TransactionMessageBytes,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getTransferCheckedInstruction,
} from "@solana-program/token";
import {
  getSetComputeUnitLimitInstruction,
  getSetComputeUnitPriceInstruction,
} from "@solana-program/compute-budget";
import { encodeMessage, signedWire } from "../../lib/chain/wire.ts";
import { addressBytes, parseAddress } from "../../lib/chain/validation.ts";

const BLOCKHASH = {
  blockhash: "EETubP5AKHgjPAhzPAFcb8BAY1hMH639CWCFTqi3hq1k",
  lastValidBlockHeight: 99n,
};

async function messageOf(
  instructions: (payer: ReturnType<typeof createNoopSigner>) => Promise<Instruction[]>,
) {
  const payer = createNoopSigner((await generateKeyPairSigner()).address);
  return pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(BLOCKHASH as never, m),
    (m) => appendTransactionMessageInstructions([...BUDGET, ...MEMO], m),
    async (m) => appendTransactionMessageInstructions(await instructions(payer), await m),
  );
}

const BUDGET = [
  getSetComputeUnitLimitInstruction({ units: 30_000 }),
  getSetComputeUnitPriceInstruction({ microLamports: 5_000n }),
];
const MEMO: Instruction[] = [{
  programAddress: address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"),
  data: new TextEncoder().encode("01JABCDEFGHJKMNPQRSTVWXYZ0"),
}];

Deno.test("encodeMessage() writes Kit's bytes for SOL, shared SOL and token transactions", async () => {
  const recipient = async () => (await generateKeyPairSigner()).address;
  const mint = await recipient();
  const cases: Record<
    string,
    (payer: ReturnType<typeof createNoopSigner>) => Promise<Instruction[]>
  > = {
    "one SOL transfer": async (payer) => [
      getTransferSolInstruction({ source: payer, destination: await recipient(), amount: 1n }),
    ],
    "nine SOL transfers": async (payer) =>
      await Promise.all(
        Array.from({ length: 9 }, async (_, i) =>
          getTransferSolInstruction({
            source: payer,
            destination: await recipient(),
            amount: BigInt(i + 1),
          })),
      ),
    "two token transfers": async (payer) => {
      const [source] = await findAssociatedTokenPda({
        owner: payer.address,
        mint,
        tokenProgram: TOKEN,
      });
      const out: Instruction[] = [];
      for (let i = 0; i < 2; i++) {
        const owner = await recipient();
        const [ata] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN });
        out.push(
          getCreateAssociatedTokenIdempotentInstruction({
            payer,
            ata,
            owner,
            mint,
            tokenProgram: TOKEN,
          }),
          getTransferCheckedInstruction({
            source,
            mint,
            destination: ata,
            authority: payer,
            amount: 5n,
            decimals: 6,
          }),
        );
      }
      return out;
    },
  };
  for (const [name, instructions] of Object.entries(cases)) {
    const compiled = compileTransactionMessage(await messageOf(instructions));
    assert.deepEqual(
      encodeMessage(compiled),
      new Uint8Array(getCompiledTransactionMessageEncoder().encode(compiled)),
      name,
    );
  }
});

Deno.test("signedWire() answers Kit's signature and wire transaction", async () => {
  const payer = await generateKeyPairSigner();
  const compiled = compileTransactionMessage(
    await messageOf((p) =>
      Promise.resolve([
        getTransferSolInstruction({ source: p, destination: payer.address, amount: 3n }),
      ])
    ),
  );
  const messageBytes = encodeMessage(compiled);
  const signature = crypto.getRandomValues(new Uint8Array(64));
  const transaction = {
    messageBytes: messageBytes as unknown as TransactionMessageBytes,
    signatures: { [compiled.staticAccounts[0]!]: signature as SignatureBytes },
  } as Transaction;
  assert.deepEqual(signedWire(messageBytes, signature), {
    signature: getSignatureFromTransaction(transaction),
    wire: getBase64EncodedWireTransaction(transaction),
  });
});

Deno.test("parseAddress() takes base58 of exactly 32 bytes only", () => {
  assert.equal(
    parseAddress("11111111111111111111111111111111"),
    "11111111111111111111111111111111",
  );
  assert.equal(parseAddress(TOKEN), TOKEN);
  for (
    const bad of [
      "123",
      "0OIl" + "1".repeat(40),
      "1".repeat(45),
      TOKEN.slice(0, -1) + "0",
      "z".repeat(44),
    ]
  ) {
    assert.equal(parseAddress(bad), null, bad);
  }
  assert.equal(addressBytes(TOKEN)?.length, 32);
  // Kit's own check agrees on the edges.
  for (const text of ["1".repeat(32), "2".repeat(44), "z".repeat(44), "1".repeat(31), TOKEN]) {
    assert.equal(parseAddress(text) !== null, isAddress(text), text);
  }
});

const TOKEN = address("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
