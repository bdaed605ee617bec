import assert from "node:assert/strict";
import { type Address, address, generateKeyPairSigner, getAddressEncoder } from "@solana/kit";
import { base58 } from "@scure/base";
import { formatUnits, parseUnits } from "../../lib/chain/amounts.ts";
import { parseAddress, parseSignature } from "../../lib/chain/validation.ts";
import {
  dasInterface,
  decodeMetadata,
  findMetadataAddress,
  TOKEN_STANDARDS,
  type TokenStandard,
} from "../../lib/chain/metaplex.ts";
import { decodeMint, TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../../lib/chain/mints.ts";
import { TtlCache } from "../../core/ttl_cache.ts";
import { transactionErrorJson } from "../../lib/chain/signature_status.ts";
import { ManualClock } from "../../core/clock.ts";

Deno.test("formatUnits() writes exact decimals without trailing zeros", () => {
  const cases: [bigint, number, string][] = [
    [0n, 9, "0"],
    [1n, 9, "0.000000001"],
    [1_000_000_000n, 9, "1"],
    [1_500_000_000n, 9, "1.5"],
    [10_000_000_000n, 9, "10"],
    [123_456_789_012_345_678_901n, 9, "123456789012.345678901"],
    [18_446_744_073_709_551_615n, 9, "18446744073709551615".slice(0, 11) + ".709551615"],
    [(1n << 53n) + 1n, 0, "9007199254740993"],
    [(1n << 53n) + 1n, 9, "9007199.254740993"],
    [5n, 0, "5"],
    [120n, 2, "1.2"],
    [-1_500n, 3, "-1.5"],
  ];
  for (const [raw, decimals, text] of cases) assert.equal(formatUnits(raw, decimals), text);
});

Deno.test("parseUnits() turns decimal text into base units and refuses extra decimals", () => {
  assert.equal(parseUnits("1.5", 9), 1_500_000_000n);
  assert.equal(parseUnits("0.000000001", 9), 1n);
  assert.equal(parseUnits("9007199.254740993", 9), (1n << 53n) + 1n);
  assert.equal(parseUnits("18446744073.709551615", 9), 18_446_744_073_709_551_615n);
  assert.equal(parseUnits("7", 0), 7n);
  assert.equal(parseUnits("0", 6), 0n);
  assert.equal(parseUnits("1.25", 2), 125n);
  assert.equal(parseUnits("0.0000000001", 9), null);
  assert.equal(parseUnits("1.0", 0), null);
  assert.equal(parseUnits("1.50", 1), null);
  for (const bad of ["", ".5", "1.", "-1", "+1", "1e9", " 1", "1,5", "0x10", "١"]) {
    assert.equal(parseUnits(bad, 9), null, bad);
  }
  for (const raw of [0n, 1n, 42n, 1_234_567_890_123n, 18_446_744_073_709_551_615n]) {
    for (const decimals of [0, 2, 6, 9]) {
      assert.equal(parseUnits(formatUnits(raw, decimals), decimals), raw);
    }
  }
});

Deno.test("parseAddress() and parseSignature() accept only base58 of 32 and 64 bytes", async () => {
  const { address: wallet } = await generateKeyPairSigner();
  assert.equal(parseAddress(wallet), wallet);
  assert.equal(
    parseAddress("11111111111111111111111111111111"),
    "11111111111111111111111111111111",
  );
  const bytes = (n: number, fill = 7) => base58.encode(new Uint8Array(n).fill(fill));
  for (const bad of ["123", "", bytes(31), bytes(33), bytes(64), `${wallet}0`, "I".repeat(44)]) {
    assert.equal(parseAddress(bad), null, bad);
  }
  assert.equal(parseAddress(undefined), null);
  const signature = bytes(64);
  assert.equal(parseSignature(signature), signature);
  for (const bad of ["123", bytes(32), bytes(63), bytes(65), wallet, "l".repeat(88)]) {
    assert.equal(parseSignature(bad), null, bad);
  }
});

/** Writes a metadata account the way the Token Metadata program lays it out (borsh). */
function metadataBytes(fields: {
  mint: Address;
  name: string;
  creators?: { address: Address; verified: boolean; share: number }[];
  tokenStandard?: TokenStandard | null;
  collection?: { verified: boolean; key: Address } | null;
  cutAfter?: "editionNonce" | "uses";
  pad?: number;
}): Uint8Array {
  const out: number[] = [];
  const enc = getAddressEncoder();
  const u32 = (n: number) => out.push(n & 255, (n >> 8) & 255, (n >> 16) & 255, n >>> 24);
  const str = (s: string, width: number) => {
    const b = new TextEncoder().encode(s.padEnd(width, "\0"));
    u32(b.length);
    out.push(...b);
  };
  out.push(4);
  out.push(...enc.encode(address("Upd1111111111111111111111111111111111111111")));
  out.push(...enc.encode(fields.mint));
  str(fields.name, 32);
  str("SYM", 10);
  str("https://example.com/nft.json", 200);
  out.push(0xf4, 0x01);
  if (fields.creators) {
    out.push(1);
    u32(fields.creators.length);
    for (const c of fields.creators) {
      out.push(...enc.encode(c.address), c.verified ? 1 : 0, c.share);
    }
  } else out.push(0);
  out.push(1, 1, 1, 254);
  if (fields.cutAfter === "editionNonce") return new Uint8Array(out);
  const ts = fields.tokenStandard;
  if (ts === undefined || ts === null) out.push(0);
  else out.push(1, TOKEN_STANDARDS.indexOf(ts));
  if (fields.collection) {
    out.push(1, fields.collection.verified ? 1 : 0, ...enc.encode(fields.collection.key));
  } else out.push(0);
  out.push(0);
  if (fields.cutAfter === "uses") return new Uint8Array(out);
  out.push(0, 0);
  return new Uint8Array([...out, ...new Array(fields.pad ?? 0).fill(0)]);
}

Deno.test("decodeMetadata() reads the Token Metadata layout", async (t) => {
  const mint = address("Mint111111111111111111111111111111111111111");
  const collection = address("Co11111111111111111111111111111111111111111");
  const creator = address("Cre1111111111111111111111111111111111111111");

  await t.step("a programmable NFT with a verified collection and creators", () => {
    const decoded = decodeMetadata(metadataBytes({
      mint,
      name: "Sword #1",
      creators: [{ address: creator, verified: true, share: 100 }],
      tokenStandard: "ProgrammableNonFungible",
      collection: { verified: true, key: collection },
      pad: 200,
    }));
    assert.ok(decoded);
    assert.equal(decoded.mint, mint);
    assert.equal(decoded.name, "Sword #1");
    assert.equal(decoded.symbol, "SYM");
    assert.equal(decoded.uri, "https://example.com/nft.json");
    assert.equal(decoded.sellerFeeBasisPoints, 500);
    assert.deepEqual(decoded.creators, [{ address: creator, verified: true, share: 100 }]);
    assert.equal(decoded.editionNonce, 254);
    assert.equal(decoded.tokenStandard, "ProgrammableNonFungible");
    assert.deepEqual(decoded.collection, { verified: true, key: collection });
    assert.equal(decoded.collectionDetails, null);
    assert.equal(decoded.programmableConfig, null);
  });

  await t.step("an unverified collection is kept as unverified", () => {
    const decoded = decodeMetadata(metadataBytes({
      mint,
      name: "X",
      tokenStandard: "NonFungible",
      collection: { verified: false, key: collection },
    }));
    assert.deepEqual(decoded?.collection, { verified: false, key: collection });
  });

  await t.step("an account from before token standards ends after the edition nonce", () => {
    const decoded = decodeMetadata(metadataBytes({ mint, name: "Old", cutAfter: "editionNonce" }));
    assert.ok(decoded);
    assert.equal(decoded.tokenStandard, null);
    assert.equal(decoded.collection, null);
  });

  await t.step("an account from before collection details ends after uses", () => {
    const decoded = decodeMetadata(metadataBytes({
      mint,
      name: "Mid",
      tokenStandard: "NonFungibleEdition",
      collection: { verified: true, key: collection },
      cutAfter: "uses",
    }));
    assert.equal(decoded?.tokenStandard, "NonFungibleEdition");
    assert.equal(decoded?.collection?.key, collection);
  });

  await t.step("a tail that does not parse counts as absent, as the program reads it", () => {
    const head = metadataBytes({ mint, name: "Bad", cutAfter: "editionNonce" });
    const badStandard = decodeMetadata(new Uint8Array([...head, 1, 9]));
    assert.equal(badStandard?.name, "Bad");
    assert.equal(badStandard?.tokenStandard, null);
    // A valid token standard followed by a broken collection option drops the whole group.
    const badCollection = decodeMetadata(new Uint8Array([...head, 1, 0, 5]));
    assert.equal(badCollection?.tokenStandard, null);
    assert.equal(badCollection?.collection, null);
  });

  await t.step("other accounts and truncated heads are not metadata", () => {
    const bytes = metadataBytes({ mint, name: "N" });
    assert.equal(decodeMetadata(new Uint8Array([6, ...bytes.slice(1)])), null);
    assert.equal(decodeMetadata(bytes.slice(0, 80)), null);
    assert.equal(decodeMetadata(new Uint8Array()), null);
  });
});

Deno.test("findMetadataAddress() derives the metadata PDA of a mint", async () => {
  // The metadata account of the wrapped SOL mint, as listed by explorers.
  const pda = await findMetadataAddress(address("So11111111111111111111111111111111111111112"));
  assert.equal(pda, "6dM4TqWyWJsbx7obrdLcviBkTafD5E8av61zfU6jq57X");
});

Deno.test("dasInterface() labels token standards as the DAS reference indexer does", () => {
  assert.equal(dasInterface("NonFungible"), "V1_NFT");
  assert.equal(dasInterface("NonFungibleEdition"), "V1_NFT");
  assert.equal(dasInterface("ProgrammableNonFungible"), "ProgrammableNFT");
  assert.equal(dasInterface("ProgrammableNonFungibleEdition"), "ProgrammableNFT");
  assert.equal(dasInterface("Fungible"), "FungibleToken");
  assert.equal(dasInterface("FungibleAsset"), "FungibleAsset");
  assert.equal(dasInterface(null), "Custom");
});

Deno.test("decodeMint() accepts initialized mints of both token programs only", () => {
  const mint = address("Mint111111111111111111111111111111111111111");
  const mintData = (length: number) => {
    const data = new Uint8Array(length);
    new DataView(data.buffer).setBigUint64(36, 1_000_000n, true);
    data[44] = 6;
    data[45] = 1;
    return data;
  };
  assert.deepEqual(decodeMint(mint, TOKEN_PROGRAM, mintData(82)), {
    address: mint,
    programAddress: TOKEN_PROGRAM,
    decimals: 6,
    supply: 1_000_000n,
    mintAuthority: null,
  });
  const withAuthority = mintData(82);
  withAuthority[0] = 1;
  withAuthority.set(getAddressEncoder().encode(TOKEN_2022_PROGRAM), 4);
  assert.equal(decodeMint(mint, TOKEN_PROGRAM, withAuthority)?.mintAuthority, TOKEN_2022_PROGRAM);
  assert.equal(decodeMint(mint, TOKEN_2022_PROGRAM, mintData(82))?.decimals, 6);
  const extended = mintData(200);
  extended[165] = 1;
  assert.equal(decodeMint(mint, TOKEN_2022_PROGRAM, extended)?.programAddress, TOKEN_2022_PROGRAM);
  const tokenAccount = mintData(200);
  tokenAccount[165] = 2;
  assert.equal(decodeMint(mint, TOKEN_2022_PROGRAM, tokenAccount), null);
  assert.equal(decodeMint(mint, TOKEN_PROGRAM, mintData(165)), null);
  assert.equal(decodeMint(mint, TOKEN_PROGRAM, extended), null);
  const uninitialized = mintData(82);
  uninitialized[45] = 0;
  assert.equal(decodeMint(mint, TOKEN_PROGRAM, uninitialized), null);
  assert.equal(decodeMint(mint, address("11111111111111111111111111111111"), mintData(82)), null);
});

Deno.test("transactionErrorJson() writes the node's error JSON, bigints as numbers", () => {
  assert.equal(
    transactionErrorJson({ InstructionError: [0n, { Custom: 1n }] }),
    '{"InstructionError":[0,{"Custom":1}]}',
  );
  assert.equal(transactionErrorJson("AccountNotFound"), '"AccountNotFound"');
});

Deno.test("TtlCache", async (t) => {
  await t.step("serves a value for 10 s, then loads again", async () => {
    const clock = new ManualClock(1_000);
    const cache = new TtlCache(clock);
    let loads = 0;
    const load = () => Promise.resolve(++loads);
    assert.equal(await cache.get("k", load), 1);
    clock.advance(9_999);
    assert.equal(await cache.get("k", load), 1);
    clock.advance(1);
    assert.equal(await cache.get("k", load), 2);
    assert.equal(await cache.get("other", load), 3);
  });

  await t.step("identical concurrent misses share one load", async () => {
    const cache = new TtlCache(new ManualClock());
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => release = resolve);
    const load = async () => {
      loads++;
      await gate;
      return "value";
    };
    const pending = [cache.get("k", load), cache.get("k", load), cache.get("k", load)];
    release();
    assert.deepEqual(await Promise.all(pending), ["value", "value", "value"]);
    assert.equal(loads, 1);
  });

  await t.step("a failure reaches every waiter and is not kept", async () => {
    const cache = new TtlCache(new ManualClock());
    let loads = 0;
    const failing = () => {
      loads++;
      return Promise.reject(new Error("rpc down"));
    };
    const results = await Promise.allSettled([cache.get("k", failing), cache.get("k", failing)]);
    assert.deepEqual(results.map((r) => r.status), ["rejected", "rejected"]);
    assert.equal(loads, 1);
    assert.equal(await cache.get("k", () => Promise.resolve("ok")), "ok");
    assert.equal(cache.size, 1);
  });

  await t.step(
    "deleteWhere() drops matching entries, and a load begun before it is not kept",
    async () => {
      const cache = new TtlCache<{ project: string; n: number }>(new ManualClock());
      let n = 0;
      const load = (project: string) => () => Promise.resolve({ project, n: ++n });
      assert.deepEqual(await cache.get("a", load("p1")), { project: "p1", n: 1 });
      assert.deepEqual(await cache.get("b", load("p2")), { project: "p2", n: 2 });
      // Given a load under way when the project changes
      let release!: () => void;
      const gate = new Promise<void>((resolve) => release = resolve);
      const stale = cache.get("c", async () => {
        await gate;
        return { project: "p1", n: ++n };
      });
      // When the project's entries are dropped
      cache.deleteWhere((v) => v.project === "p1");
      release();
      await stale;
      // Then its entries load afresh, the other project's stay, and the stale load was not kept
      assert.deepEqual(await cache.get("a", load("p1")), { project: "p1", n: 4 });
      assert.deepEqual(await cache.get("b", load("p2")), { project: "p2", n: 2 });
      assert.deepEqual(await cache.get("c", load("p1")), { project: "p1", n: 5 });
    },
  );
});
