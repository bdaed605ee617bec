/**
 * A payout's transaction bytes on the hot path, without Kit's codecs: Kit decodes every base58
 * address with BigInt arithmetic (about 0.1 ms each on this machine, so most of a payout's CPU
 * went into writing six addresses). Kit still orders the accounts (`compileTransactionMessage`);
 * this writes the compiled v0 message exactly as Kit's encoder does (the test compares them byte
 * for byte), and the wire transaction of a message signed by its fee payer alone.
 */
import { base58 } from "@scure/base";
import type { compileTransactionMessage } from "@solana/kit";
import { addressBytes } from "./validation.ts";

/** A compiled v0 message, as Kit's `compileTransactionMessage` returns it. */
type CompiledMessage = ReturnType<typeof compileTransactionMessage>;

/** Solana's compact u16 (1 to 3 bytes), appended to `out`. */
function pushShortU16(out: number[], value: number): void {
  let rest = value;
  for (;;) {
    const low = rest & 0x7f;
    rest >>= 7;
    if (rest === 0) {
      out.push(low);
      return;
    }
    out.push(low | 0x80);
  }
}

function pushBytes(out: number[], bytes: ArrayLike<number>): void {
  for (let i = 0; i < bytes.length; i++) out.push(bytes[i]!);
}

function must32(text: string, what: string): Uint8Array {
  const bytes = addressBytes(text);
  if (!bytes) throw new Error(`Cannot encode the transaction: ${what} is not 32 bytes of base58`);
  return bytes;
}

/** The message bytes of a compiled v0 message with a blockhash lifetime and no lookup tables. */
export function encodeMessage(compiled: CompiledMessage): Uint8Array {
  if (compiled.version !== 0 || compiled.addressTableLookups?.length) {
    throw new Error("Cannot encode the transaction: only v0 messages without lookup tables");
  }
  const out: number[] = [0x80];
  const { header } = compiled;
  out.push(
    header.numSignerAccounts,
    header.numReadonlySignerAccounts,
    header.numReadonlyNonSignerAccounts,
  );
  pushShortU16(out, compiled.staticAccounts.length);
  for (const account of compiled.staticAccounts) pushBytes(out, must32(account, "an account"));
  const lifetime = (compiled as { lifetimeToken?: string }).lifetimeToken;
  if (!lifetime) throw new Error("Cannot encode the transaction: it has no blockhash");
  pushBytes(out, must32(lifetime, "the blockhash"));
  pushShortU16(out, compiled.instructions.length);
  for (const ix of compiled.instructions) {
    out.push(ix.programAddressIndex);
    const indices = ix.accountIndices ?? [];
    pushShortU16(out, indices.length);
    for (const index of indices) out.push(index);
    const data = ix.data ?? new Uint8Array(0);
    pushShortU16(out, data.length);
    pushBytes(out, data);
  }
  pushShortU16(out, 0);
  return Uint8Array.from(out);
}

/** A transaction signed by its one signer: its signature (base58) and wire bytes (base64). */
export function signedWire(
  messageBytes: Uint8Array,
  signature: Uint8Array,
): { signature: string; wire: string } {
  const wire = new Uint8Array(1 + 64 + messageBytes.length);
  wire[0] = 1;
  wire.set(signature, 1);
  wire.set(messageBytes, 65);
  return { signature: base58.encode(signature), wire: wire.toBase64() };
}
