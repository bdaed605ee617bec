import assert from "node:assert/strict";
import {
  type Address,
  createSolanaRpc,
  generateKeyPairSigner,
  getAddressDecoder,
  getAddressEncoder,
  type KeyPairSigner,
} from "@solana/kit";
import { base64 } from "@scure/base";
import {
  createFundedSigner,
  createMint,
  createNft,
  decodeMetadata,
  encodeMetadata,
  findMetadataPda,
  mintTo,
  type SandboxChain,
  startChain,
  TOKEN_METADATA_PROGRAM,
  writeTokenMetadata,
} from "../../sandbox/chain/mod.ts";
import { compareAddressBytes } from "../../lib/chain/assets_onchain.ts";
import { TOKEN_PROGRAM } from "../../lib/chain/mints.ts";
import { assertErrorCode } from "../support/assertions.ts";
import { call, createTestApp, createTestProject } from "../support/test_app.ts";

type Asset = {
  id: string;
  name: string | null;
  collection: string | null;
  image: string | null;
  interface: string | null;
};

/** Two apps on one cluster: one reads assets through DAS, the other straight from the chain. */
async function startBothPaths(chain: SandboxChain) {
  const rpcUrls = { devnet: chain.rpcUrl, mainnet: chain.rpcUrl };
  const das = await createTestApp({
    config: { rpcUrls, dasUrls: { devnet: chain.dasUrl, mainnet: chain.dasUrl } },
  });
  const direct = await createTestApp({ config: { rpcUrls } });
  const keys = {
    das: (await createTestProject(das)).apiKey,
    direct: (await createTestProject(direct)).apiKey,
  };
  const get = (path: "das" | "direct", url: string) =>
    call(path === "das" ? das.app : direct.app, url, { apiKey: keys[path] });
  return { das, direct, get };
}

async function assets(res: Response): Promise<Asset[]> {
  assert.equal(res.status, 200);
  const body = await res.json();
  return (body.assets as Asset[]).toSorted((a, b) => (a.id < b.id ? -1 : 1));
}

/** A 0-decimal mint with metadata of `standard`, 1 held by `owner` and 1 by the payer. */
async function heldTokenWithMetadata(
  chain: SandboxChain,
  payer: KeyPairSigner,
  owner: Address,
  standard: "Fungible" | null,
): Promise<Address> {
  const mint = await createMint(chain, { payer, decimals: 0 });
  for (const holder of [owner, payer.address]) {
    await mintTo(chain, { payer, mint, authority: payer, owner: holder, amount: 1n, decimals: 0 });
  }
  await writeTokenMetadata(chain, mint, {
    updateAuthority: payer.address,
    name: "Gold",
    symbol: "GLD",
    tokenStandard: standard,
  });
  return mint;
}

/** Overwrites an NFT's metadata as an account from before token standards (no standard). */
async function makeLegacy(chain: SandboxChain, mint: Address) {
  const rpc = createSolanaRpc(chain.rpcUrl);
  const key = await findMetadataPda(mint);
  const { value } = await rpc.getAccountInfo(key, { encoding: "base64" }).send();
  const metadata = decodeMetadata(base64.decode(value!.data[0]))!;
  chain.setAccount(key, {
    lamports: value!.lamports,
    owner: TOKEN_METADATA_PROGRAM,
    data: encodeMetadata({ ...metadata, tokenStandard: null }),
  });
}

Deno.test("GET /v1/wallets/:address/assets reads every NFT kind through DAS and from the chain", async (t) => {
  const chain = await startChain({ autoAdvance: false });
  const apps = await startBothPaths(chain);
  try {
    // Given a wallet holding NFTs of every classic kind, in and out of a collection
    const payer = await createFundedSigner(chain);
    const { address: owner } = await generateKeyPairSigner();
    const collection = await createNft(chain, {
      payer,
      owner: payer.address,
      name: "Heroes",
      kind: "collection",
    });
    const verified = await createNft(chain, {
      payer,
      owner,
      name: "Hero #1",
      image: "https://example.com/hero1.png",
      collection: { mint: collection.mint, verified: true },
    });
    const unverified = await createNft(chain, {
      payer,
      owner,
      name: "Hero #2",
      image: "https://example.com/hero2.png",
      collection: { mint: collection.mint, verified: false },
    });
    const programmable = await createNft(chain, {
      payer,
      owner,
      name: "Sword",
      kind: "programmable",
      collection: { mint: collection.mint, verified: true },
    });
    const master = await createNft(chain, { payer, owner, name: "Map", maxSupply: null });
    const print = await createNft(chain, {
      payer,
      owner,
      name: "Map",
      kind: "edition",
      master: { mint: master.mint, edition: 1n },
    });
    const legacy = await createNft(chain, { payer, owner, name: "Old Coin" });
    await makeLegacy(chain, legacy.mint);
    // And 0-decimal tokens of which the wallet holds 1 that are not NFTs: one marked Fungible,
    // one without a token standard whose mint has a supply of 2
    const fungible = await heldTokenWithMetadata(chain, payer, owner, "Fungible");
    const shared = await heldTokenWithMetadata(chain, payer, owner, null);
    chain.advanceSlots(1);

    const common = [
      { id: verified.mint, name: "Hero #1", collection: collection.mint, interface: "V1_NFT" },
      { id: unverified.mint, name: "Hero #2", collection: null, interface: "V1_NFT" },
      {
        id: programmable.mint,
        name: "Sword",
        collection: collection.mint,
        interface: "ProgrammableNFT",
      },
      { id: master.mint, name: "Map", collection: null, interface: "V1_NFT" },
      { id: legacy.mint, name: "Old Coin", collection: null, interface: "Custom" },
    ];
    const images: Record<string, string> = {
      [verified.mint]: "https://example.com/hero1.png",
      [unverified.mint]: "https://example.com/hero2.png",
    };

    await t.step("direct path: classic NFTs, verified collections only, no images", async () => {
      const list = await assets(await apps.get("direct", `/v1/wallets/${owner}/assets`));
      const expected = [
        ...common,
        // The reference DAS indexer files NonFungibleEdition as an NFT: V1_NFT.
        { id: print.mint, name: "Map", collection: null, interface: "V1_NFT" },
      ].map((a) => ({ ...a, image: null }));
      assert.deepEqual(list, expected.toSorted((a, b) => (a.id < b.id ? -1 : 1)));
    });

    await t.step("DAS path: the same assets with images and the DAS labels", async () => {
      const list = await assets(await apps.get("das", `/v1/wallets/${owner}/assets`));
      const byId = new Map(list.map((a) => [a.id, a]));
      for (const want of common) {
        assert.deepEqual(byId.get(want.id), { ...want, image: images[want.id] ?? null });
      }
      // Both paths label the print edition as the reference indexer does.
      const printAsset = byId.get(print.mint);
      assert.deepEqual(printAsset, {
        id: print.mint,
        name: "Map",
        collection: null,
        interface: "V1_NFT",
        image: null,
      });
      assert.ok(!byId.has(fungible));
      // The sandbox's DAS lists the supply-2 legacy token as Custom; only the chain path knows
      // to leave it out, so it is not counted here.
      assert.equal(list.filter((a) => a.id !== shared).length, common.length + 1);
    });

    for (const path of ["direct", "das"] as const) {
      await t.step(`${path} path: by collection, only verified members`, async () => {
        const res = await apps.get(
          path,
          `/v1/wallets/${owner}/assets?collection=${collection.mint}`,
        );
        const list = await assets(res);
        assert.deepEqual(
          list.map((a) => a.id),
          [verified.mint, programmable.mint].toSorted(),
        );
        assert.ok(list.every((a) => a.collection === collection.mint));
      });

      await t.step(`${path} path: a wallet without NFTs has none`, async () => {
        const { address: empty } = await generateKeyPairSigner();
        const res = await apps.get(path, `/v1/wallets/${empty}/assets`);
        assert.deepEqual(await res.json(), { address: empty, assets: [] });
      });

      await t.step(`${path} path: invalid_address for the wallet or the collection`, async () => {
        await assertErrorCode(
          await apps.get(path, `/v1/wallets/123/assets`),
          400,
          "invalid_address",
        );
        await assertErrorCode(
          await apps.get(path, `/v1/wallets/${owner}/assets?collection=123`),
          400,
          "invalid_address",
        );
      });
    }

    await t.step("internal when the DAS endpoint or the RPC fails", async () => {
      const { address: other } = await generateKeyPairSigner();
      chain.faults.failHttp(1, { scope: "das" });
      const dasFail = await apps.get("das", `/v1/wallets/${other}/assets`);
      const body = await assertErrorCode(dasFail, 500, "internal");
      assert.ok(!body.error.message.includes(chain.dasUrl));
      chain.faults.closeConnections(1, { scope: "rpc" });
      await assertErrorCode(
        await apps.get("direct", `/v1/wallets/${other}/assets`),
        500,
        "internal",
      );
    });
  } finally {
    await apps.das.close();
    await apps.direct.close();
    await chain.close();
  }
});

/** Writes an NFT held by `owner` straight into the bank: mint, token account and metadata. */
async function writeNft(chain: SandboxChain, owner: Address, index: number): Promise<Address> {
  const encoder = getAddressEncoder();
  const decoder = getAddressDecoder();
  const bytes = new Uint8Array(32).fill(9);
  new DataView(bytes.buffer).setUint32(0, index + 1);
  const mint = decoder.decode(bytes);
  const mintData = new Uint8Array(82);
  new DataView(mintData.buffer).setBigUint64(36, 1n, true);
  mintData[45] = 1;
  chain.setAccount(mint, { lamports: 1_461_600n, owner: TOKEN_PROGRAM, data: mintData });
  const account = new Uint8Array(165);
  account.set(encoder.encode(mint), 0);
  account.set(encoder.encode(owner), 32);
  new DataView(account.buffer).setBigUint64(64, 1n, true);
  account[108] = 1;
  const tokenBytes = new Uint8Array(32).fill(10);
  new DataView(tokenBytes.buffer).setUint32(0, index + 1);
  chain.setAccount(decoder.decode(tokenBytes), {
    lamports: 2_039_280n,
    owner: TOKEN_PROGRAM,
    data: account,
  });
  chain.setAccount(await findMetadataPda(mint), {
    lamports: 5_616_720n,
    owner: TOKEN_METADATA_PROGRAM,
    data: encodeMetadata({
      updateAuthority: owner,
      mint,
      name: `Item ${index}`,
      symbol: "",
      uri: "",
      sellerFeeBasisPoints: 0,
      creators: null,
      primarySaleHappened: false,
      isMutable: true,
      editionNonce: null,
      tokenStandard: "NonFungible",
      collection: null,
      collectionSize: null,
    }),
  });
  return mint;
}

Deno.test("GET /v1/wallets/:address/assets reads at most the first 1,000 assets", async (t) => {
  const chain = await startChain({ autoAdvance: false });
  const apps = await startBothPaths(chain);
  try {
    // Given a wallet with 1,001 NFTs
    const { address: owner } = await generateKeyPairSigner();
    const mints: Address[] = [];
    for (let i = 0; i < 1_001; i++) mints.push(await writeNft(chain, owner, i));

    await t.step("direct path: the first 1,000 by id", async () => {
      const res = await apps.get("direct", `/v1/wallets/${owner}/assets`);
      const body = await res.json();
      assert.equal(body.assets.length, 1_000);
      const expected = mints.toSorted(compareAddressBytes).slice(0, 1_000);
      assert.deepEqual(body.assets.map((a: Asset) => a.id), expected);
    });

    await t.step("DAS path: one page of 1,000", async () => {
      const res = await apps.get("das", `/v1/wallets/${owner}/assets`);
      const body = await res.json();
      assert.equal(body.assets.length, 1_000);
      assert.equal(new Set(body.assets.map((a: Asset) => a.id)).size, 1_000);
      assert.ok(body.assets.every((a: Asset) => mints.includes(a.id as Address)));
    });
  } finally {
    await apps.das.close();
    await apps.direct.close();
    await chain.close();
  }
});
