/**
 * Stores written by earlier versions keep working after an upgrade: what they hold is moved to
 * the current layout by the instances that start on them, several at once, without loss or double
 * work.
 */
import assert from "node:assert/strict";
import { openKv } from "../../kv/open_kv.ts";
import type { JobRecord } from "../../kv/jobs.ts";
import {
  txAttemptByTimeKey,
  txRequestKey,
  type TxRequestRecord,
  type TxStatus,
} from "../../kv/tx_requests.ts";
import { ulid } from "../../core/ids.ts";
import {
  apiKeyHashKey,
  apiKeyKey,
  type ApiKeyRecord,
  createApiKey,
  listApiKeys,
} from "../../kv/api_keys.ts";
import { saveEventSettings } from "../../lib/events/settings.ts";
import { startService } from "../../service.ts";
import { startMessagingStandIn } from "../../sandbox/roblox/mod.ts";
import { createTestApp, createTestProject, testConfig } from "../support/test_app.ts";
import { PUBLISH_KEY, UNIVERSE } from "../support/events_harness.ts";

/** Starts `count` service instances on the store at `kvPath` at the same time; returns their ports and a closer. */
async function startInstances(
  kvPath: string,
  count: number,
  config: Parameters<typeof testConfig>[0],
): Promise<{ ports: number[]; close: () => Promise<void> }> {
  const started = await Promise.all(
    Array.from({ length: count }, async () => {
      const kv = await openKv(kvPath);
      const service = await startService({
        kv,
        hostname: "127.0.0.1",
        config: testConfig({ ...config, port: 0, kvPath }),
      });
      return { kv, service };
    }),
  );
  return {
    ports: started.map(({ service }) => service.server.addr.port),
    async close() {
      for (const { kv, service } of started) {
        await service.close();
        kv.close();
      }
    },
  };
}

Deno.test("Deliveries queued by earlier versions run once after the upgrade, with two instances starting together", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const standIn = await startMessagingStandIn({
    keys: [{ apiKey: PUBLISH_KEY, universeId: UNIVERSE }],
  });
  try {
    // Given: a project with events on, and one delivery queued in each due index of earlier
    // versions: `["job_queue", lane, runAt, id]` (lanes) and `["jobs_due", runAt, id]` (before).
    const runAt = Date.now() - 1_000;
    {
      await using app = await createTestApp({ kvPath });
      const { project } = await createTestProject(app);
      await saveEventSettings(app.ctx, project.id, {
        universeId: UNIVERSE,
        publishingKey: PUBLISH_KEY,
      });
      const old = (id: string, at: number, lane?: "events"): JobRecord => ({
        id,
        payload: {
          type: "deliver_event",
          projectId: project.id,
          event: { type: "ping", at, id: String(at), createdAt: runAt },
        },
        ...(lane ? { lane } : {}),
        status: "pending",
        runAt,
        attempts: 0,
        lease: null,
        unique: false,
        createdAt: runAt,
        lastError: null,
        doneAt: null,
      });
      await app.kv.atomic()
        .set(["jobs", "01OLDLANES0000000000000000"], old("01OLDLANES0000000000000000", 1, "events"))
        .set(["job_queue", "events", runAt, "01OLDLANES0000000000000000"], project.id)
        .set(["jobs", "01OLDER0000000000000000000"], old("01OLDER0000000000000000000", 2))
        .set(["jobs_due", runAt, "01OLDER0000000000000000000"], project.id)
        .commit();
    }

    // When: two instances of this version start on the store at once.
    const { close } = await startInstances(kvPath, 2, { publishUrl: standIn.url });
    try {
      // Then: each delivery reaches the game, once.
      await standIn.waitForMessages(2, 10_000);
      await new Promise((r) => setTimeout(r, 1_500));
      const pings = standIn.inbox().map((m) => (m.data as { at: number }).at).sort();
      assert.deepEqual(pings, [1, 2]);
    } finally {
      await close();
    }
  } finally {
    await standIn.close();
    await Deno.remove(kvPath).catch(() => {});
  }
});

Deno.test("Requests stored before the status index are listed by status after the upgrade, with two instances starting together", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    // Given: three settled requests as the previous version stored them: the record and its time
    // index.
    let apiKey = "";
    const statuses: Array<[string, TxStatus]> = [
      ["paid-1", "confirmed"],
      ["lost", "failed"],
      ["paid-2", "confirmed"],
    ];
    {
      await using app = await createTestApp({ kvPath });
      const created = await createTestProject(app);
      apiKey = created.apiKey;
      const op = app.kv.atomic();
      for (const [i, [key, status]] of statuses.entries()) {
        const record = oldRequest(created.project.id, key, status, Date.now() - 60_000 + i);
        op.set(txRequestKey(record.projectId, key), record)
          .set(txAttemptByTimeKey(record.projectId, record.attemptId), key);
      }
      assert.ok((await op.commit()).ok);
    }

    // When: two instances of this version start on the store at once.
    const { ports, close } = await startInstances(kvPath, 2, {});
    try {
      // Then: every status lists its requests, newest first, on either instance.
      const list = async (port: number, status: TxStatus) => {
        const res = await fetch(`http://127.0.0.1:${port}/v1/tx?status=${status}`, {
          headers: { "x-api-key": apiKey },
        });
        assert.equal(res.status, 200);
        const page = await res.json() as { transactions: Array<{ idempotencyKey: string }> };
        return page.transactions.map((t) => t.idempotencyKey);
      };
      for (const port of ports) {
        assert.deepEqual(await list(port, "confirmed"), ["paid-2", "paid-1"]);
        assert.deepEqual(await list(port, "failed"), ["lost"]);
        assert.deepEqual(await list(port, "submitted"), []);
      }
    } finally {
      await close();
    }
  } finally {
    await Deno.remove(kvPath).catch(() => {});
  }
});

/** A request record as the previous version stored it. */
function oldRequest(projectId: string, key: string, status: TxStatus, at: number): TxRequestRecord {
  const recipient = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
  return {
    projectId,
    key,
    kind: "transfer-sol",
    cluster: "devnet",
    body: { to: { address: recipient }, mint: null, amount: "1" },
    attempt: 1,
    attemptId: ulid(at),
    status,
    recipient,
    recipientUserId: null,
    signature: null,
    error: status === "failed" ? "Abandoned before sending" : null,
    usage: { at, asset: "SOL", amount: 1_000_000_000n, recipient, userId: null },
    signed: null,
    checkJobId: null,
    createdAt: at,
    updatedAt: at,
  };
}

Deno.test("Keys revoked by earlier versions are deleted 30 days after their revocation, with two instances starting together", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const day = 24 * 3_600_000;
  try {
    // Given: an active key, and two keys revoked the previous version's way (record kept, hash
    // entry kept), 31 days and 1 day ago.
    const now = Date.now();
    const { projectId, active, old, recent } = await (async () => {
      await using app = await createTestApp({ kvPath });
      const { project, apiKey } = await createTestProject(app);
      const revokeOldWay = async (ago: number) => {
        const { record } = await createApiKey(app.kv, project.id, now - ago - 1);
        const revoked: ApiKeyRecord = { ...record, revokedAt: now - ago };
        await app.kv.set(apiKeyKey(project.id, record.id), revoked);
        return revoked;
      };
      return {
        projectId: project.id,
        active: apiKey,
        old: await revokeOldWay(31 * day),
        recent: await revokeOldWay(day),
      };
    })();

    // When: two instances of this version start on the store at once.
    const { ports, close } = await startInstances(kvPath, 2, {});
    try {
      // Then: the old one is gone, the recent one listed until its 30 days are up, neither
      // findable by its hash; the active key still works.
      using kv = await openKv(kvPath);
      assert.equal((await kv.get(apiKeyKey(projectId, old.id))).value, null);
      const listed = await listApiKeys(kv, projectId, Date.now());
      assert.deepEqual(
        listed.map((k) => k.revokedAt === null ? "active" : k.id).sort(),
        [
          "active",
          recent.id,
        ].sort(),
      );
      for (const key of [old, recent]) {
        assert.equal((await kv.get(apiKeyHashKey(key.hash))).value, null);
      }
      const res = await fetch(`http://127.0.0.1:${ports[0]}/v1/project`, {
        headers: { "x-api-key": active },
      });
      assert.equal(res.status, 200);
      await res.body?.cancel();
    } finally {
      await close();
    }
  } finally {
    await Deno.remove(kvPath).catch(() => {});
  }
});
