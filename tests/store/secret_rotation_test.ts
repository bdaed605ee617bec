/** Sealed secrets: purposes that cannot be swapped, and rotation with SECRET_PREVIOUS. */
import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { type Address, getAddressEncoder } from "@solana/kit";
import { encryptOauthClientSecret, getOauthApp } from "../../lib/auth/oauth_app.ts";
import { decryptSecretText, sealedKeyId } from "../../lib/crypto/encryption.ts";
import { listStoredSecrets, resealSecrets } from "../../lib/crypto/reseal.ts";
import {
  checkSecret,
  SecretMismatchError,
  SecretStillNeededError,
} from "../../lib/crypto/key_check.ts";
import { deriveSecretKeys } from "../../lib/crypto/secret_keys.ts";
import { signToken, verifyToken } from "../../lib/crypto/signed_token.ts";
import { saveEventSettings } from "../../lib/events/settings.ts";
import { createProjectWallet } from "../../lib/projects/wallet.ts";
import { getProject, type Project, updateProject } from "../../kv/projects.ts";
import {
  getSecretCheckEntry,
  RetiredSecretError,
  SECRET_CHECK_KEY,
  setSecretCheck,
} from "../../kv/secret_check.ts";
import { getWalletKey } from "../../kv/wallet_keys.ts";
import { getRobloxTokensEntry, updateRobloxConnection } from "../../kv/roblox_tokens.ts";
import { sealTokens, tokenBinding } from "../../lib/roblox/access_token.ts";
import { connectAppFor, encryptConnectClientSecret } from "../../lib/roblox/connect_app.ts";
import {
  createTestApp,
  createTestProject,
  startOnStore,
  type TestApp,
} from "../support/test_app.ts";

const SECRET_A = "first-secret-aaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const SECRET_B = "second-secret-bbbbbbbbbbbbbbbbbbbbbbbbbbb";
const SECRET_C = "third-secret-ccccccccccccccccccccccccccccc";

/** A project with a managed wallet, a publishing key and an OAuth client secret. */
async function projectWithSecrets(app: TestApp): Promise<Project> {
  const { project } = await createTestProject(app);
  await createProjectWallet(app.ctx, project.id);
  await saveEventSettings(app.ctx, project.id, { universeId: "42", publishingKey: "pub-key-1" });
  const sealed = await encryptOauthClientSecret(app.ctx, project.id, "oauth-secret-1");
  await updateProject(app.kv, project.id, (p) => ({
    ...p,
    settings: { ...p.settings, oauthClientId: "123", oauthClientSecretEnc: sealed },
  }));
  return (await getProject(app.kv, project.id))!;
}

async function sealedValues(app: TestApp, projectId: string): Promise<string[]> {
  const { settings } = (await getProject(app.kv, projectId))!;
  const wallet = (await getWalletKey(app.kv, projectId))!;
  return [wallet.secretKeyEnc, settings.publishingKeyEnc!, settings.oauthClientSecretEnc!];
}

async function signsAsItsWallet(app: TestApp, projectId: string): Promise<boolean> {
  const message = new TextEncoder().encode("hello");
  const signature = await app.ctx.wallets.signMessage(projectId, message);
  const address = (await getWalletKey(app.kv, projectId))!.address as Address;
  return ed25519.verify(signature, message, new Uint8Array(getAddressEncoder().encode(address)));
}

Deno.test("A sealed secret cannot be passed off as a secret of another purpose", async () => {
  await using app = await createTestApp();
  const project = await projectWithSecrets(app);

  // When: the publishing key's ciphertext is copied into the OAuth client secret field.
  const swapped = await updateProject(app.kv, project.id, (p) => ({
    ...p,
    settings: { ...p.settings, oauthClientSecretEnc: p.settings.publishingKeyEnc },
  }));

  // Then: it does not decrypt as an OAuth client secret.
  await assert.rejects(getOauthApp(app.ctx, swapped!));
  assert.deepEqual(await getOauthApp(app.ctx, project), {
    clientId: "123",
    clientSecret: "oauth-secret-1",
  });
});

Deno.test("checkSecret() rotates SECRET with SECRET_PREVIOUS: every stored secret is re-encrypted", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  // Given: a store run under SECRET_A with a project holding all three kinds of secrets.
  const first = await startOnStore(path, SECRET_A);
  const project = await projectWithSecrets(first);
  const before = await sealedValues(first, project.id);
  const oldKeyId = first.ctx.keys.current.id;
  await first.close();
  await assert.rejects(startOnStore(path, SECRET_B), SecretMismatchError);

  // When: one start with the new SECRET and the old one as SECRET_PREVIOUS.
  await (await startOnStore(path, SECRET_B, SECRET_A)).close();

  // Then: the new SECRET alone opens everything, and nothing is sealed under the old one.
  await using after = await startOnStore(path, SECRET_B);
  const sealed = await sealedValues(after, project.id);
  for (const [i, value] of sealed.entries()) {
    assert.notEqual(value, before[i]);
    assert.ok(value.startsWith(`v2.${after.ctx.keys.current.id}.`), value);
    assert.ok(!value.includes(oldKeyId));
  }
  assert.equal(await signsAsItsWallet(after, project.id), true);
  const reread = (await getProject(after.kv, project.id))!;
  assert.equal((await getOauthApp(after.ctx, reread))?.clientSecret, "oauth-secret-1");
  assert.equal(
    await decryptSecretText(after.ctx.keys, reread.settings.publishingKeyEnc!, {
      purpose: "publishing_key",
      context: project.id,
    }),
    "pub-key-1",
  );
  await assert.rejects(startOnStore(path, SECRET_A), SecretMismatchError);
});

Deno.test("checkSecret(): instances starting at once on a new store agree on one SECRET", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const apps = await Promise.all(
    [SECRET_A, SECRET_A, SECRET_B, SECRET_B].map((secret) =>
      createTestApp({ kvPath: path, config: { secret } })
    ),
  );
  try {
    // When: all four check at once.
    const results = await Promise.allSettled(apps.map((app) => checkSecret(app.ctx)));

    // Then: the two with the SECRET that was stored first start; the other two are refused.
    const started = results.map((r) => r.status === "fulfilled");
    assert.ok(
      started.join() === "true,true,false,false" || started.join() === "false,false,true,true",
      started.join(),
    );
    for (const result of results) {
      if (result.status === "rejected") assert.ok(result.reason instanceof SecretMismatchError);
    }
  } finally {
    for (const app of apps) await app.close();
  }
});

Deno.test("verifyToken() accepts a cookie signed under SECRET_PREVIOUS only while it is set", async () => {
  const token = await signToken(await deriveSecretKeys(SECRET_A), "session", { who: "dev" });
  const rotating = await deriveSecretKeys(SECRET_B, { previous: SECRET_A });
  const rotated = await deriveSecretKeys(SECRET_B);
  assert.deepEqual(await verifyToken(rotating, "session", token), { who: "dev" });
  assert.equal(await verifyToken(rotating, "other-purpose", token), null);
  assert.equal(await verifyToken(rotated, "session", token), null);
});

Deno.test("checkSecret(): an instance of the old SECRET may start during the rotation, and seals nothing once it is closed", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await (await startOnStore(path, SECRET_A)).close();
  await using rotating = await startOnStore(path, SECRET_B, SECRET_A);

  // When: an instance with the old SECRET alone starts during the overlap and creates a wallet.
  const old = await startOnStore(path, SECRET_A);
  const { project } = await createTestProject(old);
  await createProjectWallet(old.ctx, project.id);
  const sealed = (await getWalletKey(old.kv, project.id))!.secretKeyEnc;
  assert.ok(sealed.startsWith(`v2.${old.ctx.keys.current.id}.`));

  // Then: the instance with both opens it, a start with the new SECRET alone is refused, and once
  // the value is re-encrypted the rotation closes and the old instance can seal nothing more.
  assert.equal(await signsAsItsWallet(rotating, project.id), true);
  await assert.rejects(startOnStore(path, SECRET_B), SecretStillNeededError);
  await (await startOnStore(path, SECRET_B, SECRET_A)).close();
  await using closed = await startOnStore(path, SECRET_B);
  assert.equal(await signsAsItsWallet(closed, project.id), true);
  const { project: late } = await createTestProject(old);
  await assert.rejects(createProjectWallet(old.ctx, late.id), RetiredSecretError);
  assert.equal(await getWalletKey(old.kv, late.id), null);
  await old.close();
  await assert.rejects(startOnStore(path, SECRET_A), SecretMismatchError);
});

Deno.test("checkSecret(): a second rotation waits until no value is sealed under the SECRET before", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await (await startOnStore(path, SECRET_A)).close();
  await (await startOnStore(path, SECRET_B, SECRET_A)).close();
  // Given: a wallet an instance still on SECRET_A sealed during the first rotation.
  const old = await startOnStore(path, SECRET_A);
  const { project } = await createTestProject(old);
  await createProjectWallet(old.ctx, project.id);
  await old.close();

  // When: a start rotates on to SECRET_C, which would drop SECRET_A.
  const refused = await startOnStore(path, SECRET_C, SECRET_B).then(() => null, (error) => error);

  // Then: it is refused, naming the value; after the first rotation finishes, it goes on.
  assert.ok(refused instanceof SecretStillNeededError, String(refused));
  assert.match(refused.message, /1 stored secret \(1 wallet key\) is still sealed under key id/);
  await (await startOnStore(path, SECRET_B, SECRET_A)).close();
  await (await startOnStore(path, SECRET_C, SECRET_B)).close();
  await using rotated = await startOnStore(path, SECRET_C);
  assert.equal(await signsAsItsWallet(rotated, project.id), true);
});

Deno.test("A start completes a check record of an earlier version by the values the store holds", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const first = await startOnStore(path, SECRET_A);
  const { project } = await createTestProject(first);
  await createProjectWallet(first.ctx, project.id);
  const keyB = (await deriveSecretKeys(SECRET_B)).current;
  // Given: a record as earlier versions wrote it after a rotation to SECRET_B, which let an
  // instance still on SECRET_A seal this wallet key afterwards (and a store those versions left
  // without a version or migration records).
  await first.kv.set(SECRET_CHECK_KEY, {
    keyId: keyB.id,
    check: keyB.check,
    resealed: true,
    updatedAt: 0,
  });
  await first.kv.delete(["store_version"]);
  await first.kv.delete(["migrations_applied", "secret_check_record"]);
  await first.close();

  // Then: SECRET_B alone is refused while the key needs SECRET_A; with both, it is re-encrypted.
  await assert.rejects(startOnStore(path, SECRET_B), SecretStillNeededError);
  await (await startOnStore(path, SECRET_B, SECRET_A)).close();
  await using after = await startOnStore(path, SECRET_B);
  assert.equal(await signsAsItsWallet(after, project.id), true);
});

const WALLETS_PER_CREATOR = 25;

Deno.test("guardSealedWrite(): a value sealed under the previous SECRET changes the check record", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await (await startOnStore(path, SECRET_A)).close();
  await (await startOnStore(path, SECRET_B, SECRET_A)).close();
  await using old = await startOnStore(path, SECRET_A);
  const { project } = await createTestProject(old);
  // Given: the record as a start closing the rotation reads it before counting the values.
  const before = await getSecretCheckEntry(old.kv);

  // When: an instance on the old SECRET seals a wallet key meanwhile.
  await createProjectWallet(old.ctx, project.id);

  // Then: that start's commit fails (it counts again), and a value under the new one would not.
  assert.equal(await setSecretCheck(old.kv, before, { ...before.value!, previous: null }), false);
  const after = await getSecretCheckEntry(old.kv);
  assert.equal(after.value?.staleWrites, 1);
});

Deno.test("checkSecret(): a start closing the rotation while old instances seal new values never strands one", async () => {
  for (let run = 0; run < 6; run++) {
    const path = await Deno.makeTempFile({ suffix: ".kv" });
    await (await startOnStore(path, SECRET_A)).close();
    await (await startOnStore(path, SECRET_B, SECRET_A)).close();
    const old = await startOnStore(path, SECRET_A);
    await using resealer = await startOnStore(path, SECRET_B, SECRET_A);
    const keyIdA = old.ctx.keys.current.id;

    // When: an old instance creates wallets while one with both SECRETs re-encrypts and starts
    // without SECRET_PREVIOUS are tried until one closes the rotation.
    let closed = false;
    const creating = Array.from({ length: 4 }, async () => {
      for (let i = 0; i < WALLETS_PER_CREATOR; i++) {
        const developer = `Dev${crypto.randomUUID()}`;
        const { project } = await createTestProject(old, { developer });
        try {
          await createProjectWallet(old.ctx, project.id);
        } catch (error) {
          // Refused once the rotation is closed: nothing stored.
          if (!(error instanceof RetiredSecretError)) throw error;
          assert.equal(await getWalletKey(old.kv, project.id), null);
          return;
        }
      }
    });
    const resealing = (async () => {
      while (!closed) await resealSecrets(resealer.kv, resealer.ctx.keys);
    })();
    while (!closed) {
      try {
        await (await startOnStore(path, SECRET_B)).close();
        closed = true;
      } catch (error) {
        if (!(error instanceof SecretStillNeededError)) throw error;
      }
    }
    await Promise.all([...creating, resealing]);

    // Then: no stored value is sealed under SECRET_A.
    for await (const found of listStoredSecrets(old.kv)) {
      assert.notEqual(sealedKeyId(found.sealed), keyIdA, `run ${run}: ${found.projectId}`);
    }
    await old.close();
  }
});

Deno.test("checkSecret() rotates a connected game's tokens and its connecting app's secret too", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  // Given: under SECRET_A, a project with a connecting app and a game connected through it.
  const first = await startOnStore(path, SECRET_A);
  const { project } = await createTestProject(first);
  const appSecretEnc = await encryptConnectClientSecret(first.ctx, project.id, "app-secret-1");
  const tokens = await sealTokens(first.ctx, project.id, {
    grantId: "grant-1",
    accessToken: "access-1",
    refreshToken: "refresh-1",
    expiresIn: 899,
    now: first.clock.now(),
  });
  await updateRobloxConnection(first.kv, project.id, (p) => ({
    ...p,
    settings: { ...p.settings, connectClientId: "777", connectClientSecretEnc: appSecretEnc },
  }), { tokens, sealedUnder: first.ctx.keys.current.id });
  await first.close();

  // When
  await (await startOnStore(path, SECRET_B, SECRET_A)).close();

  // Then: the new SECRET alone opens each of them
  await using after = await startOnStore(path, SECRET_B);
  const reread = (await getProject(after.kv, project.id))!;
  assert.equal((await connectAppFor(after.ctx, reread))?.app.clientSecret, "app-secret-1");
  const stored = (await getRobloxTokensEntry(after.kv, project.id)).value!;
  const open = (sealed: string, kind: "access" | "refresh") =>
    decryptSecretText(after.ctx.keys, sealed, tokenBinding(project.id, kind));
  assert.equal(await open(stored.accessTokenEnc, "access"), "access-1");
  assert.equal(await open(stored.refreshTokenEnc, "refresh"), "refresh-1");
  for (
    const value of [
      stored.accessTokenEnc,
      stored.refreshTokenEnc,
      reread.settings.connectClientSecretEnc!,
    ]
  ) {
    assert.ok(value.startsWith(`v2.${after.ctx.keys.current.id}.`), value);
  }
});
