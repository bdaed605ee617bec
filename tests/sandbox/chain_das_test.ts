import assert from "node:assert/strict";
import {
  type Address,
  createDefaultRpcTransport,
  createJsonRpcApi,
  createRpc,
  createSolanaRpc,
  generateKeyPairSigner,
} from "@solana/kit";
import { base64 } from "@scure/base";
import {
  connectChain,
  createFundedSigner,
  createNft,
  decodeMetadata,
  findMetadataPda,
  startChain,
} from "../../sandbox/chain/mod.ts";

type Asset = {
  id: string;
  interface: string;
  content: { json_uri: string; metadata: { name: string }; links: { image?: string } };
  grouping: { group_key: string; group_value: string; verified?: boolean }[];
  ownership: { owner: string; frozen: boolean };
  supply: Record<string, unknown> | null;
};
type Page = { total: number; limit: number; page: number; items: Asset[] };
type DasApi = {
  getAssetsByOwner(params: Record<string, unknown>): Page;
  searchAssets(params: Record<string, unknown>): Page;
};

function dasClient(url: string) {
  return createRpc({
    api: createJsonRpcApi<DasApi>({
      requestTransformer: (request) => ({ ...request, params: (request.params as unknown[])[0] }),
      responseTransformer: (response) => {
        const answer = response as { result?: unknown; error?: { message: string } };
        if (answer.error) throw new Error(answer.error.message);
        return answer.result;
      },
    }),
    transport: createDefaultRpcTransport({ url }),
  });
}

Deno.test("DAS endpoint lists NFTs by owner and by collection in the public shapes", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const das = dasClient(chain.dasUrl);
  // Given a collection, three NFTs of one owner in it (one unverified), a programmable NFT
  // and a print edition
  const payer = await createFundedSigner(chain);
  const owner = (await generateKeyPairSigner()).address;
  const collection = await createNft(chain, {
    payer,
    owner: payer.address,
    name: "Blocklink Heroes",
    kind: "collection",
  });
  const members: Address[] = [];
  for (const [i, verified] of [true, true, false].entries()) {
    const nft = await createNft(chain, {
      payer,
      owner,
      name: `Hero #${i}`,
      symbol: "HERO",
      uri: `https://example.com/hero/${i}.json`,
      image: `https://example.com/hero/${i}.png`,
      collection: { mint: collection.mint, verified },
    });
    members.push(nft.mint);
  }
  const pnft = await createNft(chain, { payer, owner, name: "Sword", kind: "programmable" });
  const master = await createNft(chain, {
    payer,
    owner: payer.address,
    name: "Map",
    maxSupply: null,
  });
  const print = await createNft(chain, {
    payer,
    owner,
    name: "Map",
    kind: "edition",
    master: { mint: master.mint, edition: 1n },
  });

  // When
  const all = await das.getAssetsByOwner({ ownerAddress: owner, page: 1, limit: 1000 }).send();
  const grouped = await das.searchAssets({
    ownerAddress: owner,
    grouping: ["collection", collection.mint],
    page: 1,
    limit: 1000,
  }).send();

  // Then
  assert.equal(all.items.length, 5);
  assert.deepEqual(all.items.map((a) => a.id), [...all.items.map((a) => a.id)].sort());
  const hero0 = all.items.find((a) => a.id === members[0])!;
  assert.equal(hero0.interface, "V1_NFT");
  assert.equal(hero0.content.metadata.name, "Hero #0");
  assert.equal(hero0.content.links.image, "https://example.com/hero/0.png");
  assert.equal(hero0.content.json_uri, "https://example.com/hero/0.json");
  assert.deepEqual(hero0.grouping, [{ group_key: "collection", group_value: collection.mint }]);
  assert.equal(hero0.ownership.owner, owner);
  const unverified = all.items.find((a) => a.id === members[2])!;
  assert.deepEqual(unverified.grouping, []);
  const sword = all.items.find((a) => a.id === pnft.mint)!;
  assert.equal(sword.interface, "ProgrammableNFT");
  assert.equal(sword.ownership.frozen, true);
  assert.equal(all.items.find((a) => a.id === print.mint)?.interface, "V1_NFT");
  assert.deepEqual(grouped.items.map((a) => a.id).sort(), members.slice(0, 2).sort());
  const withUnverified = await das.searchAssets({
    ownerAddress: owner,
    grouping: ["collection", collection.mint],
    options: { showUnverifiedCollections: true },
  }).send();
  assert.equal(withUnverified.items.length, 3);

  // Paging
  const page2 = await das.getAssetsByOwner({ ownerAddress: owner, page: 2, limit: 2 }).send();
  assert.equal(page2.page, 2);
  assert.equal(page2.limit, 2);
  assert.deepEqual(page2.items.map((a) => a.id), all.items.slice(2, 4).map((a) => a.id));
  const tooBig = await das.getAssetsByOwner({ ownerAddress: owner, limit: 1001 }).send()
    .then(() => null, (e) => e);
  assert.ok(tooBig instanceof Error);

  // The metadata account is readable over RPC in the program's layout.
  const rpc = createSolanaRpc(chain.rpcUrl);
  const [member] = members;
  assert.ok(member);
  const { value } = await rpc.getAccountInfo(await findMetadataPda(member), {
    encoding: "base64",
  }).send();
  assert.equal(value?.owner, "metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s");
  const metadata = decodeMetadata(base64.decode(value!.data[0]));
  assert.equal(metadata?.name, "Hero #0");
  assert.deepEqual(metadata?.collection, { verified: true, key: collection.mint });
});

Deno.test("connectChain() lets fixtures drive a running chain through its control API", async () => {
  await using chain = await startChain({ autoAdvance: false });
  // Given a handle that only knows the URL
  const remote = connectChain(chain.rpcUrl, { autoAdvance: false });
  const payer = await createFundedSigner(remote);
  const owner = (await generateKeyPairSigner()).address;

  // When
  const nft = await createNft(remote, {
    payer,
    owner,
    name: "Remote",
    image: "https://example.com/remote.png",
  });

  // Then
  const page = await dasClient(remote.dasUrl).getAssetsByOwner({ ownerAddress: owner }).send();
  assert.deepEqual(page.items.map((a) => [a.id, a.content.links.image]), [
    [nft.mint, "https://example.com/remote.png"],
  ]);
});
