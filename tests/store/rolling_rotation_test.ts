// SECRET rotation through a rolling deploy (issue 22): instances with the old SECRET keep running
// and creating wallets beside instances with the new one, and every wallet still signs a payout
// on the sandbox chain once the old SECRET is gone.
import assert from "node:assert/strict";
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { deriveSecretKeys } from "../../lib/crypto/secret_keys.ts";
import { openKv } from "../../kv/open_kv.ts";
import type { Project } from "../../kv/projects.ts";
import { getWalletKey } from "../../kv/wallet_keys.ts";
import { startChain } from "../../sandbox/chain/mod.ts";
import { CookieJar, createTestWallet } from "../support/sign_in.ts";
import {
  callProcess,
  createPayingGame,
  type ServiceProcess,
  ServiceStartError,
  signInOnProcess,
  startProcessFleet,
} from "../support/service_runner.ts";

const OLD = "old-secret-of-the-rolling-deploy-aaaaaaaaaa";
const NEW = "new-secret-of-the-rolling-deploy-bbbbbbbbbb";

interface Game {
  projectId: string;
  wallet: Address;
  apiKey: string;
  /** The instance that created the wallet. */
  on: string;
}

async function json(res: Response, status: number): Promise<Record<string, unknown>> {
  const body = await res.json();
  assert.deepEqual(res.status, status, JSON.stringify(body));
  return body;
}

Deno.test("SECRET rotation through a rolling deploy: old and new instances create wallets, all stay usable", async (t) => {
  const chain = await startChain({ slotMs: 10 });
  await using _chain = { [Symbol.asyncDispose]: () => chain.close() };
  await using fleet = await startProcessFleet(chain.rpcUrl);
  const { kvPath, start, stop } = fleet;
  const oldKeyId = (await deriveSecretKeys(OLD)).current.id;
  const newKeyId = (await deriveSecretKeys(NEW)).current.id;
  /** Values in the store sealed under each key id (`v2.<key id>.<purpose>...`), read as stored. */
  const sealedBy = async () => {
    const kv = await openKv(kvPath);
    try {
      const sealed: string[] = [];
      for await (
        const { value } of kv.list<{ secretKeyEnc: string }>({ prefix: ["wallet_keys"] })
      ) {
        sealed.push(value.secretKeyEnc);
      }
      for await (const { value } of kv.list<Project>({ prefix: ["projects"] })) {
        const { publishingKeyEnc, oauthClientSecretEnc } = value.settings;
        for (const one of [publishingKeyEnc, oauthClientSecretEnc]) if (one) sealed.push(one);
      }
      const counts: Record<string, number> = {};
      for (const one of sealed) counts[one.split(".")[1]!] = (counts[one.split(".")[1]!] ?? 0) + 1;
      return counts;
    } finally {
      kv.close();
    }
  };

  // Developers sign in once, on an old instance: their sessions hold on instances with both.
  const old = await start({ SECRET: OLD });
  const developers = [new CookieJar(), new CookieJar()];
  for (const jar of developers) {
    assert.deepEqual((await signInOnProcess(old, createTestWallet(), { jar })).status, 200);
  }
  const games: Game[] = [];
  let created = 0;
  /** Creates a project, its managed wallet (funded), a policy and an API key on `service`. */
  const createGame = async (service: ServiceProcess, name: string): Promise<Game> => {
    // Five projects per developer.
    const jar = developers[Math.floor(created++ / 5)]!;
    const game = { ...await createPayingGame(service, jar, chain, name), on: name };
    games.push(game);
    return game;
  };
  /** Pays 0.001 SOL from the game's wallet through `service`; returns the status. */
  const pay = async (service: ServiceProcess, game: Game, key: string) => {
    const to = (await generateKeyPairSigner()).address;
    const res = await callProcess(service, "/v1/tx/transfer-sol", {
      json: { to: { address: to }, amount: "0.001", idempotencyKey: key },
      headers: { "x-api-key": game.apiKey },
    });
    const body = await res.json();
    return `${res.status} ${body.status ?? body.error?.code}`;
  };

  await t.step("the old instance creates wallets before the rotation", async () => {
    await createGame(old, "old-before-1");
    await createGame(old, "old-before-2");
  });

  let rotating: ServiceProcess;
  await t.step("a new instance starts while the old one creates wallets", async () => {
    const racing = [createGame(old, "old-racing-1"), createGame(old, "old-racing-2")];
    rotating = await start({ SECRET: NEW, SECRET_PREVIOUS: OLD });
    await Promise.all(racing);
  });

  await t.step("both create wallets side by side; both SECRETs open values", async () => {
    const made = await Promise.all([
      createGame(old, "old-overlap-1"),
      createGame(rotating, "new-overlap-1"),
      createGame(old, "old-overlap-2"),
      createGame(rotating, "new-overlap-2"),
    ]);
    // A publishing key saved on the old instance is sealed under the old SECRET too.
    const jar = developers[0]!;
    await json(
      await callProcess(old, `/dashboard/projects/${games[0]!.projectId}/settings`, {
        jar,
        json: { universeId: "4242", publishingKey: "old-instance-publishing-key" },
      }),
      200,
    );
    // The new instance signs with a wallet the old one sealed after the rotation began.
    assert.deepEqual(await pay(rotating, made[0]!, "overlap-old-wallet"), "200 confirmed");
    assert.deepEqual(await pay(old, made[2]!, "overlap-old-on-old"), "200 confirmed");
  });

  await t.step(
    "a start without SECRET_PREVIOUS is refused while values need it, naming how many",
    async () => {
      const left = (await sealedBy())[oldKeyId] ?? 0;
      // At least the two wallets and the publishing key the old instance sealed after the start.
      assert.ok(left >= 3, `${left} values under the old SECRET`);
      const refused = await start({ SECRET: NEW }).then(
        () => assert.fail("started without SECRET_PREVIOUS"),
        (error) => error,
      );
      assert.ok(refused instanceof ServiceStartError, String(refused));
      assert.match(
        refused.output,
        new RegExp(
          `Cannot start: ${left} stored secrets \\(.*\\) are still sealed under key id ${oldKeyId}`,
        ),
      );
    },
  );

  let sweeping: ServiceProcess;
  await t.step(
    "an instance with SECRET_PREVIOUS re-encrypts what the old one seals, at start and periodically",
    async () => {
      await stop(rotating);
      sweeping = await start({ SECRET: NEW, SECRET_PREVIOUS: OLD, SWEEP_EVERY_MS: "300" });
      assert.deepEqual((await sealedBy())[oldKeyId], undefined, "re-encrypted at its start");
      // The old instance still runs, and seals one more wallet under the old SECRET.
      const late = await createGame(old, "old-late");
      let found = false;
      for (let i = 0; i < 200 && !found; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        found = sweeping.logs.some((line) =>
          line.includes('"msg":"Stored secret re-encrypted"') && line.includes(late.projectId)
        );
      }
      assert.ok(found, "the sweep re-encrypted the late wallet");
      assert.deepEqual((await sealedBy())[oldKeyId], undefined);
    },
  );

  let final: ServiceProcess;
  await t.step(
    "the old SECRET is dropped: a start without SECRET_PREVIOUS closes the rotation",
    async () => {
      final = await start({ SECRET: NEW });
      // The old instance, still running, can no longer seal anything: no wallet is stranded.
      const jar = developers[1]!;
      const project = await json(
        await callProcess(old, "/dashboard/projects", {
          jar,
          json: { name: "too-late", cluster: "devnet" },
        }),
        201,
      );
      const refused = await callProcess(old, `/dashboard/projects/${project.id}/wallet`, {
        jar,
        method: "POST",
      });
      await refused.body?.cancel();
      assert.ok(refused.status >= 500, `${refused.status}`);
      const kv = await openKv(kvPath);
      assert.deepEqual(await getWalletKey(kv, String(project.id)), null);
      kv.close();
      await stop(old);
      await stop(sweeping);
      await assert.rejects(start({ SECRET: OLD }), /SECRET does not match the store/);
    },
  );

  await t.step("every wallet signs a payout under the new SECRET alone", async () => {
    const paid = [];
    for (const [i, game] of games.entries()) {
      paid.push(`${game.on}: ${await pay(final, game, `after-${i}`)}`);
    }
    assert.deepEqual(paid, games.map((game) => `${game.on}: 200 confirmed`));
    // Every wallet key (and the publishing key) is sealed under the new SECRET.
    assert.deepEqual(await sealedBy(), { [newKeyId]: games.length + 1 });
  });
});
