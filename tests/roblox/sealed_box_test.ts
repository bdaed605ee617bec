// The sealed box the secrets API takes, opened by libsodium itself (an independent implementation).
import assert from "node:assert/strict";
import sodium from "libsodium-wrappers";
import { sealBox } from "../../lib/crypto/sealed_box.ts";

Deno.test("sealBox() makes a box libsodium's crypto_box_seal_open opens", async () => {
  await sodium.ready;
  const { publicKey, privateKey } = sodium.crypto_box_keypair();
  for (const value of ["bl_live_0123456789abcdef", "", "é ✓ 🎮", "x".repeat(1_024)]) {
    const box = sealBox(value, publicKey);
    assert.equal(box.length, new TextEncoder().encode(value).length + 48);
    const opened = sodium.crypto_box_seal_open(box, publicKey, privateKey);
    assert.equal(new TextDecoder().decode(opened), value);
  }
});

Deno.test("sealBox() uses a fresh ephemeral key per value, and a box does not open under another key", async () => {
  await sodium.ready;
  const recipient = sodium.crypto_box_keypair();
  const other = sodium.crypto_box_keypair();
  const a = sealBox("same", recipient.publicKey);
  const b = sealBox("same", recipient.publicKey);
  assert.notDeepEqual(a.slice(0, 32), b.slice(0, 32));
  assert.throws(() => sodium.crypto_box_seal_open(a, other.publicKey, other.privateKey));
  assert.throws(() => sealBox("x", new Uint8Array(31)), /32 bytes/);
});
