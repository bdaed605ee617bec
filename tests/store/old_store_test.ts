/**
 * The store migration (`lib/migrations/`): a store holding what earlier versions wrote, written
 * here by their shapes, is brought to the current one by the instances that start on it, several
 * at once, without loss or double work; then the service reads one shape.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../core/clock.ts";
import { encodeBase64Url, ulid } from "../../core/ids.ts";
import { getJobEntry, type JobRecord, listJobs } from "../../kv/jobs.ts";
import { apiKeyHashKey, apiKeyKey, createApiKey, listApiKeys } from "../../kv/api_keys.ts";
import { createProject, getProject, updateProject } from "../../kv/projects.ts";
import { getMemberEntry, memberKey } from "../../kv/members.ts";
import { getStoreVersionEntry, listAppliedMigrations } from "../../kv/store_version.ts";
import { type AllowanceScope, getBucketUsage } from "../../kv/tx_allowance.ts";
import type { UsageWindow } from "../../kv/tx_usage.ts";
import { MAX_TX_PER_DAY } from "../../lib/tx/request/limits.ts";
import { isFenced, previousVersionUsage } from "../../lib/migrations/previous_windows.ts";
import { getWalletKey, getWalletKeyEntry } from "../../kv/wallet_keys.ts";
import { getSecretCheckEntry } from "../../kv/secret_check.ts";
import {
  getTxRequest,
  listTxRequests,
  txAttemptByTimeKey,
  txRequestKey,
  type TxRequestRecord,
  type TxStatus,
} from "../../kv/tx_requests.ts";
import { decryptSecret, decryptSecretText } from "../../lib/crypto/encryption.ts";
import type { SecretKeySet } from "../../lib/crypto/secret_keys.ts";
import {
  migratePreviousVersionWrites,
  migrateStore,
  MIGRATION_NAMES,
} from "../../lib/migrations/mod.ts";
import { createProjectWallet } from "../../lib/projects/wallet.ts";
import { startMessagingStandIn } from "../../sandbox/roblox/mod.ts";
import { PUBLISH_KEY, UNIVERSE } from "../support/events_harness.ts";
import { startServiceProcess } from "../support/service_runner.ts";
import { createTestApp, createTestProject, startOnStore } from "../support/test_app.ts";

const SECRET = "old-store-secret-aaaaaaaaaaaaaaaaaaaaaaaaaa";
const OTHER_SECRET = "old-store-other-secret-bbbbbbbbbbbbbbbbbbb";
const DAY_MS = 24 * 3_600_000;
const RECIPIENT = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";

/** Seals as the v1 format did: `v1.<iv>.<ciphertext>`, bound to `aad` alone. */
async function sealV1(keySet: SecretKeySet, plain: Uint8Array | string, aad: string) {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = typeof plain === "string" ? new TextEncoder().encode(plain) : plain;
  const body = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(aad) },
    keySet.aes,
    data as Uint8Array<ArrayBuffer>,
  );
  return `v1.${encodeBase64Url(iv)}.${encodeBase64Url(new Uint8Array(body))}`;
}

/** A job record as versions before lanes stored it (no `lane`). */
function oldJob(
  id: string,
  payload: JobRecord["payload"],
  fields: Partial<JobRecord> = {},
): Omit<JobRecord, "lane"> {
  const at = Date.now() - 1_000;
  return {
    id,
    payload,
    status: "pending",
    runAt: at,
    attempts: 0,
    lease: null,
    unique: false,
    createdAt: at,
    lastError: null,
    doneAt: null,
    ...fields,
  };
}

/**
 * A request record as versions before the sign-by time, the list of earlier attempts and the
 * blockhash's slot stored it.
 */
function oldRequest(projectId: string, key: string, status: TxStatus, at: number) {
  const record = {
    projectId,
    key,
    kind: "transfer-sol",
    cluster: "devnet",
    body: { to: { address: RECIPIENT }, mint: null, amount: "1" },
    attempt: 1,
    attemptId: ulid(at),
    status,
    recipient: RECIPIENT,
    recipientUserId: null,
    signature: status === "submitted" ? "5".repeat(88) : null,
    error: status === "failed" ? "Abandoned before sending" : null,
    usage: { at, asset: "SOL", amount: 1_000_000_000n, recipient: RECIPIENT, userId: null },
    signed: status === "submitted"
      ? {
        wire: "AA==",
        blockhash: "11111111111111111111111111111111",
        lastValidBlockHeight: 1_000n,
        signedAt: at,
        accepted: true,
      }
      : null,
    checkJobId: null as string | null,
    createdAt: at,
    updatedAt: at,
  };
  return record;
}

/** What the fixture wrote, to compare with what the migration made of it. */
interface OldStore {
  projectId: string;
  creator: string;
  apiKey: string;
  revokedLongAgo: { id: string; hash: string };
  revokedRecently: { id: string; hash: string };
  walletSeed: Uint8Array;
  submittedKey: string;
  checkJobId: string;
}

/**
 * Writes, on the store at `kvPath`, what earlier versions stored: a project whose wallet key,
 * publishing key and OAuth client secret are sealed in the v1 format (and no key-check record, as
 * before it existed); deliveries queued in the due indexes of earlier versions, by job records
 * without a lane; the done record of the sweep loop without a lane; requests without a sign-by
 * time, earlier attempts or a status index entry, one of them submitted with its `tx_check` job;
 * keys revoked the old way; the project-wide usage as lists of reservation times; and the marker
 * of an earlier one-off pass.
 */
async function writeOldStore(kvPath: string): Promise<OldStore> {
  await using app = await createTestApp({
    kvPath,
    clock: new ManualClock(Date.now()),
    config: { secret: SECRET },
  });
  const { kv, ctx } = app;
  const keys = ctx.keys.current;
  const { project, apiKey } = await createTestProject(app);
  const projectId = project.id;
  // A project from before teams: its creator owned it by `createdBy` alone.
  await kv.delete(memberKey(projectId, project.createdBy));

  // Sealed values of the v1 format.
  await createProjectWallet(ctx, projectId);
  const wallet = (await getWalletKeyEntry(kv, projectId)) as Deno.KvEntry<{ secretKeyEnc: string }>;
  const walletSeed = await decryptSecret(ctx.keys, wallet.value.secretKeyEnc, {
    purpose: "wallet_key",
    context: projectId,
  });
  await kv.set(wallet.key, {
    ...wallet.value,
    secretKeyEnc: await sealV1(keys, walletSeed, `wallet_key:${projectId}`),
  });
  const publishingKeyEnc = await sealV1(keys, PUBLISH_KEY, projectId);
  const oauthClientSecretEnc = await sealV1(keys, "oauth-secret-1", projectId);
  await updateProject(kv, projectId, (p) => ({
    ...p,
    settings: {
      ...p.settings,
      universeId: UNIVERSE,
      publishingKeyEnc,
      oauthClientId: "123",
      oauthClientSecretEnc,
    },
  }));
  await kv.delete(["secret_check"]);

  // Jobs: two deliveries in the old due indexes, the sweep loop's done record, a tx_check job.
  const delivery = (at: number) => ({
    type: "deliver_event",
    projectId,
    event: { type: "ping", at, id: String(at), createdAt: Date.now() - 1_000 },
  });
  const lanes = oldJob("01OLDLANES0000000000000000", delivery(1));
  const older = oldJob("01OLDER0000000000000000000", delivery(2));
  const sweepDone = oldJob("tx_sweep", { type: "tx_sweep" }, {
    status: "done",
    unique: true,
    doneAt: Date.now() - 60_000,
  });
  const submitted = oldRequest(projectId, "paid-later", "submitted", Date.now() - 90_000);
  const checkJob = oldJob(
    "01OLDCHECK0000000000000000",
    { type: "tx_check", projectId, key: submitted.key, attemptId: submitted.attemptId },
    { runAt: Date.now() + 60_000 },
  );
  submitted.checkJobId = checkJob.id;
  const jobs = kv.atomic()
    .set(["jobs", lanes.id], { ...lanes, lane: "events" })
    .set(["job_queue", "events", lanes.runAt, lanes.id], projectId)
    .set(["jobs", older.id], older)
    .set(["jobs_due", older.runAt, older.id], projectId)
    .set(["jobs", sweepDone.id], sweepDone)
    .set(["jobs", checkJob.id], checkJob)
    .set(["job_due", "tx", projectId, checkJob.runAt, checkJob.id], checkJob.id)
    .set(["job_due_projects", "tx", Math.floor(checkJob.runAt / 1000) * 1000, projectId], "");
  assert.ok((await jobs.commit()).ok);

  // Requests: settled ones without a status index entry, and the submitted one.
  const op = kv.atomic();
  const settled: Array<[string, TxStatus]> = [["paid-1", "confirmed"], ["lost", "failed"], [
    "paid-2",
    "confirmed",
  ]];
  for (const [i, [key, status]] of settled.entries()) {
    const record = oldRequest(projectId, key, status, Date.now() - 60_000 + i);
    op.set(txRequestKey(projectId, key), record)
      .set(txAttemptByTimeKey(projectId, record.attemptId), key);
  }
  op.set(txRequestKey(projectId, submitted.key), submitted)
    .set(txAttemptByTimeKey(projectId, submitted.attemptId), submitted.key)
    .set(["tx_unsettled", projectId, submitted.key], {
      attemptId: submitted.attemptId,
      since: submitted.createdAt,
    });
  assert.ok((await op.commit()).ok);

  // The day's count, the failures' cap and the SOL budget as lists: the three payouts and the
  // submitted one count in the day and the budget, the submitted one (unsettled) in the cap.
  const times = [Date.now() - 90_000, Date.now() - 60_000, Date.now() - 59_999];
  times.push(Date.now() - 59_998);
  const usage = kv.atomic()
    .set(["tx_usage_day", projectId], { times, amounts: [] })
    .set(["tx_usage_failed", projectId], { times: [times[0]], amounts: [] })
    .set(["tx_usage_asset", projectId, "SOL"], {
      times,
      amounts: times.map(() => 1_000_000_000n),
    });
  assert.ok((await usage.commit()).ok);

  // Keys revoked the old way (record and hash entry kept), 31 days and 1 day ago.
  const revokeOldWay = async (ago: number) => {
    const { record } = await createApiKey(kv, projectId, Date.now() - ago - 1);
    await kv.set(apiKeyKey(projectId, record.id), { ...record, revokedAt: Date.now() - ago });
    return { id: record.id, hash: record.hash };
  };
  const revokedLongAgo = await revokeOldWay(31 * DAY_MS);
  const revokedRecently = await revokeOldWay(DAY_MS);

  await kv.set(["store_migrations", "tx_status_index"], { doneAt: 0 });
  return {
    projectId,
    creator: project.createdBy,
    apiKey,
    revokedLongAgo,
    revokedRecently,
    walletSeed,
    submittedKey: submitted.key,
    checkJobId: checkJob.id,
  };
}

Deno.test("A store written by earlier versions is migrated once by three instances starting together, then read in one shape", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const standIn = await startMessagingStandIn({
    keys: [{ apiKey: PUBLISH_KEY, universeId: UNIVERSE }],
  });
  await using _cleanup = {
    async [Symbol.asyncDispose]() {
      await standIn.close();
      await Deno.remove(kvPath).catch(() => {});
    },
  };
  // Given: a store as earlier versions left it.
  const old = await writeOldStore(kvPath);

  // When: three instances of this version start on it at once.
  const env = {
    KV_PATH: kvPath,
    SECRET,
    PUBLISH_URL: standIn.url,
    RPC_URL_DEVNET: "http://127.0.0.1:9",
    RPC_URL_MAINNET: "http://127.0.0.1:9",
    IDP_URL: "http://127.0.0.1:9/oauth",
  };
  const instances = await Promise.all([1, 2, 3].map(() => startServiceProcess(env)));
  try {
    // Then: each queued delivery reaches the game once.
    await standIn.waitForMessages(2, 10_000);
    await new Promise((r) => setTimeout(r, 1_500));
    assert.deepEqual(standIn.inbox().map((m) => (m.data as { at: number }).at).sort(), [1, 2]);

    // The requests are listed by status, on every instance; the active key works, revoked ones
    // do not.
    for (const instance of instances) {
      const list = async (status: TxStatus) => {
        const res = await fetch(`${instance.url}/v1/tx?status=${status}`, {
          headers: { "x-api-key": old.apiKey },
        });
        assert.equal(res.status, 200);
        const page = await res.json() as { transactions: Array<{ idempotencyKey: string }> };
        return page.transactions.map((t) => t.idempotencyKey);
      };
      assert.deepEqual(await list("confirmed"), ["paid-2", "paid-1"]);
      assert.deepEqual(await list("failed"), ["lost"]);
      assert.deepEqual(await list("submitted"), [old.submittedKey]);
    }

    // Every value sealed in the v1 format was sealed again once, in all three instances together.
    const logs = instances.flatMap((i) => i.logs).filter((l) => l.startsWith("{"));
    const resealed = logs.map((l) => JSON.parse(l)).filter((l) =>
      l.msg === "Stored secret re-encrypted"
    );
    assert.deepEqual(resealed.map((l) => l.purpose).sort(), [
      "oauth_client_secret",
      "publishing_key",
      "wallet_key",
    ]);
    assert.ok(logs.some((l) => l.includes('"msg":"Store migrated"')));
  } finally {
    for (const instance of instances) await instance.stop();
  }

  // And the store holds only current shapes.
  await using app = await createTestApp({ kvPath, config: { secret: SECRET } });
  const { kv, ctx } = app;
  assert.deepEqual(await appliedNames(kv), MIGRATION_NAMES);
  assert.equal(await getStoreVersionEntry(kv), null);
  for (const prefix of [["jobs_due"], ["job_queue"], ["store_migrations"]]) {
    assert.deepEqual(await Array.fromAsync(kv.list({ prefix })), [], prefix.join());
  }
  for await (const { value } of kv.list<JobRecord>({ prefix: ["jobs"] })) {
    assert.ok(value.lane, `${value.id} has its lane`);
    assert.notEqual(value.payload.type, "tx_check");
  }
  const submitted = (await getTxRequest(kv, old.projectId, old.submittedKey))!;
  const job = (await getJobEntry(kv, submitted.checkJobId!)).value!;
  assert.deepEqual([job.id, job.payload.type, job.lane], [old.checkJobId, "tx_confirm", "tx"]);
  assert.equal(submitted.signed?.blockhashSlot, 1_000n - 150n);
  for await (const { value } of kv.list<TxRequestRecord>({ prefix: ["tx_requests"] })) {
    assert.equal(value.signBy, value.usage.at + 20_000);
    assert.deepEqual(value.previous, []);
    const indexed = await Array.fromAsync(kv.list({ prefix: ["tx_by_status", old.projectId] }));
    assert.equal(indexed.filter((e) => e.value === value.key).length, 1, value.key);
  }
  assert.equal((await kv.get(apiKeyKey(old.projectId, old.revokedLongAgo.id))).value, null);
  const listed = await listApiKeys(kv, old.projectId, Date.now());
  assert.deepEqual(listed.filter((k) => k.revokedAt !== null).map((k) => k.id), [
    old.revokedRecently.id,
  ]);
  for (const key of [old.revokedLongAgo, old.revokedRecently]) {
    assert.equal((await kv.get(apiKeyHashKey(key.hash))).value, null);
  }
  const project = (await getProject(kv, old.projectId))!;
  const keyId = ctx.keys.current.id;
  for (
    const sealed of [project.settings.publishingKeyEnc!, project.settings.oauthClientSecretEnc!]
  ) {
    assert.ok(sealed.startsWith(`v2.${keyId}.`), sealed);
  }
  const bind = (purpose: "publishing_key" | "oauth_client_secret") => ({
    purpose,
    context: old.projectId,
  });
  assert.equal(
    await decryptSecretText(ctx.keys, project.settings.publishingKeyEnc!, bind("publishing_key")),
    PUBLISH_KEY,
  );
  assert.equal(
    await decryptSecretText(
      ctx.keys,
      project.settings.oauthClientSecretEnc!,
      bind("oauth_client_secret"),
    ),
    "oauth-secret-1",
  );
  const walletKey = (await getWalletKey(kv, old.projectId))!.secretKeyEnc;
  assert.deepEqual(
    await decryptSecret(ctx.keys, walletKey, { purpose: "wallet_key", context: old.projectId }),
    old.walletSeed,
  );
  const check = (await getSecretCheckEntry(kv)).value!;
  assert.deepEqual([check.keyId, check.previous, check.staleWrites], [keyId, null, 0]);
  const owner = (await getMemberEntry(kv, old.projectId, old.creator)).value;
  assert.deepEqual([owner?.role, owner?.addedBy], ["owner", old.creator]);
});

/** The migrations the store records as applied, in the order they run. */
async function appliedNames(kv: Deno.Kv): Promise<string[]> {
  const applied = await listAppliedMigrations(kv);
  return MIGRATION_NAMES.filter((name) => applied.has(name));
}

Deno.test("migrateStore() applies each step once per store, and on a store a numbering release left runs only what its number does not prove", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const old = await writeOldStore(kvPath);
  await using app = await createTestApp({ kvPath, config: { secret: SECRET } });
  const { kv } = app;
  // Given: the store marked by a numbering release as migrated up to the step before the renaming
  // of tx_check jobs (6).
  await kv.set(["store_version"], { version: 6, updatedAt: 0 });

  // When: the migration runs, twice.
  assert.deepEqual(await migrateStore(app.ctx), []);
  const jobs = await listJobs(kv);
  assert.deepEqual(await migrateStore(app.ctx), []);

  // Then: the steps above 6 ran (the tx_check job is a tx_confirm job, the project has its
  // owner, the usage lists are ledgers counting every entry once), the earlier ones did not (the
  // old due index is still there), and the second run changed nothing.
  assert.equal((await getJobEntry(kv, old.checkJobId)).value?.payload.type, "tx_confirm");
  assert.equal((await getMemberEntry(kv, old.projectId, old.creator)).value?.role, "owner");
  const now = app.clock.now();
  const counted = async (scope: AllowanceScope) =>
    (await getBucketUsage(kv, old.projectId, scope, now)).reduce((sum, b) => sum + b.n, 0n);
  assert.deepEqual(
    [await counted("day"), await counted("failed"), await counted("asset:SOL")],
    [4n, 1n, 4_000_000_000n],
  );
  // The old lists are gone but the day's, left as the fence that makes the previous version
  // refuse (lib/migrations/previous_windows.ts): nothing in it counts here, everything in it counts there.
  assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["tx_usage_failed"] })), []);
  assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["tx_usage_asset"] })), []);
  const [day] = await Array.fromAsync(kv.list<UsageWindow>({ prefix: ["tx_usage_day"] }));
  assert.ok(isFenced(day!.value));
  assert.equal(previousVersionUsage("day", day!.value, now), 0n);
  assert.ok(day!.value.times.length >= MAX_TX_PER_DAY);
  assert.equal((await Array.fromAsync(kv.list({ prefix: ["jobs_due"] }))).length, 1);
  assert.deepEqual(await listJobs(kv), jobs);
});

Deno.test("A store a numbering release left at 8 or 9 has its project owners' step run again, as neither number proves it", async (t) => {
  for (const version of [8, 9]) {
    await t.step(`at ${version}`, async () => {
      await using app = await createTestApp();
      const { kv, clock } = app;
      // Given: a project without members, on a store a numbering release left at `version` a day
      // ago (8: the usage ledgers in the release before teams; 9: reached from there without
      // the owners' step).
      const { project } = await createTestProject(app);
      await kv.delete(memberKey(project.id, project.createdBy));
      const numberedAt = clock.now() - DAY_MS;
      await kv.set(["store_version"], { version, updatedAt: numberedAt });

      // When: the migration runs.
      assert.deepEqual(await migrateStore(app.ctx), []);

      // Then: the creator owns the project; what the number proves is recorded as of then.
      const owner = (await getMemberEntry(kv, project.id, project.createdBy)).value;
      assert.equal(owner?.role, "owner");
      const applied = await listAppliedMigrations(kv);
      assert.equal(applied.get("tx_confirm_jobs"), numberedAt);
      assert.equal(applied.get("project_owners"), clock.now());
      assert.equal(applied.get("tx_usage_ledgers"), version === 9 ? numberedAt : clock.now());
    });
  }
});

Deno.test("A v1 value that no SECRET of the instance opens keeps the store below that step until an instance with its SECRET starts", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  await writeOldStore(kvPath);

  // When: an instance with another SECRET starts: its key check refuses it, judged by the values.
  await assert.rejects(startOnStore(kvPath, OTHER_SECRET), /SECRET does not match/);
  {
    await using app = await createTestApp({ kvPath, config: { secret: OTHER_SECRET } });
    // Then: the steps before the v1 one are applied; neither it nor any after it is.
    assert.deepEqual(await appliedNames(app.kv), MIGRATION_NAMES.slice(0, 4));
    assert.equal(MIGRATION_NAMES[4], "sealed_v1");
    assert.equal((await Array.fromAsync(app.kv.list({ prefix: ["jobs_due"] }))).length, 0);
  }

  // And: with the store's SECRET the migration completes.
  await using app = await startOnStore(kvPath, SECRET);
  assert.deepEqual(await appliedNames(app.kv), MIGRATION_NAMES);
});

Deno.test("The minute sweep renames tx_check jobs that an instance of the previous version queues during a rolling deploy", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const old = await writeOldStore(kvPath);
  await using app = await startOnStore(kvPath, SECRET);
  // Given: after the migration, an instance of the previous version queues a tx_check job.
  const job = oldJob(
    "01LATECHECK000000000000000",
    { type: "tx_check", projectId: old.projectId, key: "late", attemptId: ulid() },
    { runAt: Date.now() + 60_000 },
  );
  await app.kv.atomic()
    .set(["jobs", job.id], { ...job, lane: "tx" })
    .set(["job_due", "tx", old.projectId, job.runAt, job.id], job.id)
    .commit();

  // When: the minute sweep's part runs, on two instances at once.
  await using other = await startOnStore(kvPath, SECRET);
  const moved = await Promise.all([
    migratePreviousVersionWrites(app.ctx),
    migratePreviousVersionWrites(other.ctx),
  ]);

  // Then: the job is a tx_confirm job, renamed once.
  assert.deepEqual(moved.sort(), [0, 1]);
  assert.equal((await getJobEntry(app.kv, job.id)).value?.payload.type, "tx_confirm");
});

Deno.test("The minute sweep makes the creator the owner of a project an instance of the previous version creates during a rolling deploy", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  await writeOldStore(kvPath);
  await using app = await startOnStore(kvPath, SECRET);
  // Given: after the migration, an instance of the previous version creates a project, which has
  // no members (its creator owned it by `createdBy`).
  const creator = "Late111111111111111111111111111111111111111";
  const late = await createProject(app.kv, {
    name: "Made by the old version",
    cluster: "devnet",
    createdBy: creator,
    now: Date.now(),
  });
  await app.kv.delete(memberKey(late.id, creator));

  // When: the minute sweep's part runs, on two instances at once.
  await using other = await startOnStore(kvPath, SECRET);
  const moved = await Promise.all([
    migratePreviousVersionWrites(app.ctx),
    migratePreviousVersionWrites(other.ctx),
  ]);

  // Then: the creator is the project's owner, made so once.
  assert.deepEqual(moved.sort(), [0, 1]);
  assert.equal((await getMemberEntry(app.kv, late.id, creator)).value?.role, "owner");
});

Deno.test("During a deploy's overlap the minute sweep indexes requests an instance of the previous version writes, and stops after it", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const old = await writeOldStore(kvPath);
  await using app = await startOnStore(kvPath, SECRET);
  // Given: after the migration, an instance of the previous version stores a request its way
  const write = async (key: string) => {
    const record = oldRequest(old.projectId, key, "failed", Date.now());
    await app.kv.atomic()
      .set(txRequestKey(old.projectId, key), record)
      .set(txAttemptByTimeKey(old.projectId, record.attemptId), key)
      .commit();
  };
  await write("late");

  // When: the minute sweep's part runs
  const moved = await migratePreviousVersionWrites(app.ctx);

  // Then: the request is in the current shape and listed by its status
  assert.equal(moved, 1);
  const listed = await listTxRequests(app.kv, old.projectId, {
    now: app.clock.now(),
    status: "failed",
    limit: 100,
  });
  assert.ok(listed.records.some((r) => r.key === "late"), "listed by status");
  assert.equal((await getTxRequest(app.kv, old.projectId, "late"))?.previous?.length, 0);

  // When: the overlap is over, and an old instance were still writing
  app.clock.advance(2 * 60 * 60_000);
  await write("too-late");

  // Then: the sweep no longer rereads the store for it
  assert.equal(await migratePreviousVersionWrites(app.ctx), 0);
});
