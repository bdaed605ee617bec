// Decoding of wire transactions as the node receives them.
import {
  type Address,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Transaction,
} from "@solana/kit";
import { base58, base64 } from "@scure/base";
import { invalidParams } from "./rpc_errors.ts";

export type DecodedInstruction = {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
};

export type DecodedTransaction = {
  version: "legacy" | 0 | 1;
  signature: string;
  signatures: Uint8Array[];
  messageBytes: Uint8Array;
  accountKeys: Address[];
  numRequiredSignatures: number;
  numReadonlySigned: number;
  numReadonlyUnsigned: number;
  blockhash: string;
  instructions: DecodedInstruction[];
  addressTableLookups: {
    accountKey: string;
    writableIndexes: number[];
    readonlyIndexes: number[];
  }[];
  transaction: Transaction;
};

/** Max size of a serialized transaction (PACKET_DATA_SIZE). */
const PACKET_DATA_SIZE = 1232;

/** Decodes the string a client sent, in the encoding it named (base58 by default). */
export function decodeWireString(text: string, encoding: string | undefined): Uint8Array {
  const enc = encoding ?? "base58";
  const TYPE = "solana_transaction::versioned::VersionedTransaction";
  if (enc === "base64") {
    const max = Math.ceil(PACKET_DATA_SIZE / 3) * 4;
    if (text.length > max) {
      throw invalidParams(
        `base64 encoded ${TYPE} too large: ${text.length} bytes (max: encoded/raw ${max}/${PACKET_DATA_SIZE})`,
      );
    }
    try {
      return base64.decode(text);
    } catch (e) {
      throw invalidParams(`invalid base64 encoding: ${(e as Error).message}`);
    }
  }
  if (enc === "base58") {
    const max = 1683;
    if (text.length > max) {
      throw invalidParams(
        `base58 encoded ${TYPE} too large: ${text.length} bytes (max: encoded/raw ${max}/${PACKET_DATA_SIZE})`,
      );
    }
    try {
      return base58.decode(text);
    } catch (e) {
      throw invalidParams(`invalid base58 encoding: ${(e as Error).message}`);
    }
  }
  throw invalidParams(`unsupported encoding: ${enc}. Supported encodings: base58, base64`);
}

/** Decodes a wire transaction, failing as the node does on malformed bytes. */
export function decodeTransaction(wire: Uint8Array): DecodedTransaction {
  const fail = (why: string) =>
    invalidParams(
      `failed to deserialize solana_transaction::versioned::VersionedTransaction: ${why}`,
    );
  if (wire.length > PACKET_DATA_SIZE) {
    throw invalidParams(
      `decoded transaction too large: ${wire.length} bytes (max: ${PACKET_DATA_SIZE})`,
    );
  }
  let transaction: Transaction;
  let compiled;
  let count = 0;
  let offset = 0;
  try {
    // short_vec length prefix of the signature list
    for (let shift = 0;; shift += 7) {
      const byte = wire[offset++];
      if (byte === undefined) throw new Error("io error: unexpected end of file");
      count |= (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) break;
    }
    transaction = getTransactionDecoder().decode(wire) as Transaction;
    compiled = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
  } catch (e) {
    const [firstLine = ""] = (e as Error).message.split("\n");
    throw fail(firstLine);
  }
  const signatures: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    signatures.push(wire.slice(offset + i * 64, offset + (i + 1) * 64));
  }
  const version = compiled.version as "legacy" | 0 | 1;
  const header = compiled.header;
  const instructions: DecodedInstruction[] = "instructions" in compiled
    ? compiled.instructions.map((ix) => ({
      programIdIndex: ix.programAddressIndex,
      accounts: ix.accountIndices ?? [],
      data: new Uint8Array(ix.data ?? []),
    }))
    : [];
  const lookups = "addressTableLookups" in compiled ? compiled.addressTableLookups ?? [] : [];
  const decoded: DecodedTransaction = {
    version,
    signature: base58.encode(signatures[0] ?? new Uint8Array(64)),
    signatures,
    messageBytes: new Uint8Array(transaction.messageBytes),
    accountKeys: [...compiled.staticAccounts],
    numRequiredSignatures: header.numSignerAccounts,
    numReadonlySigned: header.numReadonlySignerAccounts,
    numReadonlyUnsigned: header.numReadonlyNonSignerAccounts,
    blockhash: String(compiled.lifetimeToken),
    instructions,
    addressTableLookups: lookups.map((l) => ({
      accountKey: l.lookupTableAddress,
      writableIndexes: [...l.writableIndexes],
      readonlyIndexes: [...l.readonlyIndexes],
    })),
    transaction,
  };
  if (signatures.length === 0 || signatures.length !== decoded.numRequiredSignatures) {
    throw invalidParams(
      "invalid transaction: Transaction failed to sanitize accounts offsets correctly",
    );
  }
  return decoded;
}

/** Whether the account at this index of the static keys is write-locked. */
export function isWritable(tx: DecodedTransaction, index: number): boolean {
  const n = tx.accountKeys.length;
  if (index < tx.numRequiredSignatures) {
    return index < tx.numRequiredSignatures - tx.numReadonlySigned;
  }
  return index < n - tx.numReadonlyUnsigned;
}

export function isSigner(tx: DecodedTransaction, index: number): boolean {
  return index < tx.numRequiredSignatures;
}

/** Verifies every signature against its signer key, as the node's sigverify stage does. */
export async function verifySignatures(tx: DecodedTransaction): Promise<boolean> {
  const checks = tx.signatures.map(async (sig, i) => {
    // A signature without its signer's key cannot verify.
    const signer = tx.accountKeys[i];
    if (signer === undefined) return false;
    try {
      const key = await crypto.subtle.importKey(
        "raw",
        base58.decode(signer) as Uint8Array<ArrayBuffer>,
        "Ed25519",
        false,
        ["verify"],
      );
      return await crypto.subtle.verify(
        "Ed25519",
        key,
        sig as Uint8Array<ArrayBuffer>,
        tx.messageBytes as Uint8Array<ArrayBuffer>,
      );
    } catch {
      return false;
    }
  });
  return (await Promise.all(checks)).every(Boolean);
}
