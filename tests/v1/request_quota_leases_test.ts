import assert from "node:assert/strict";
import { ManualClock } from "../../core/clock.ts";
import { RequestQuota } from "../../lib/quota/request_quota.ts";
import { MAX_LEASE } from "../../lib/quota/lease_sizes.ts";
import { LEASE_GRACE_MS, LEASE_MS } from "../../lib/quota/quota_plan.ts";
import { type RequestCounts, requestCountsKey } from "../../kv/request_counts.ts";
import { getRequestUsage } from "../../kv/usage.ts";
import { openKv } from "../../kv/open_kv.ts";

Deno.test("RequestQuota counts 1,100 projects at once in commits within the store's limits", async () => {
  // Given 1,100 projects: one commit for all of them would pass 1,000 mutations
  await using kv = await openKv(":memory:");
  const quota = new RequestQuota(kv, new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0)));
  const ids = Array.from({ length: 1100 }, (_, i) => `p-${i}`);
  // When each counts two requests at once
  const verdicts = await Promise.all(ids.flatMap((id) => [quota.count(id), quota.count(id)]));
  // Then every request is answered and every count is exact
  assert.deepEqual(verdicts.length, 2200);
  assert.deepEqual(verdicts.filter((v) => v === "ok").length, 2200);
  const stored = [];
  for (let i = 0; i < ids.length; i += 10) {
    const entries = await kv.getMany<RequestCounts[]>(
      ids.slice(i, i + 10).map((id) => requestCountsKey(id)),
    );
    stored.push(...entries.map((e) => [e.value?.minuteCount, e.value?.dayCount]));
  }
  assert.deepEqual(stored, ids.map(() => [2, 2]));
  await quota.close();
});

Deno.test("RequestQuota answers a busy project from leases, with far fewer commits than requests", async () => {
  await using kv = await openKv(":memory:");
  let commits = 0;
  const counted = new Proxy(kv, {
    get(target, prop) {
      if (prop === "atomic") {
        return () => {
          commits++;
          return target.atomic();
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const quota = new RequestQuota(counted, new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0)));
  // When one project sends 500 requests one after another (group commit cannot share them)
  let ok = 0;
  for (let i = 0; i < 500; i++) if (await quota.count("busy") === "ok") ok++;
  // Then all pass, most from leases
  assert.deepEqual(ok, 500);
  assert.ok(commits < 50, `${commits} commits for 500 requests`);
  // And once the last lease is settled, the store holds exactly what was used
  await quota.close();
  const counts = (await kv.get<RequestCounts>(requestCountsKey("busy"))).value!;
  assert.deepEqual([counts.minuteCount, counts.dayCount, counts.leased ?? 0], [500, 500, 0]);
  const usage = await getRequestUsage(kv, "busy", Date.UTC(2026, 10, 21, 12, 0, 0));
  assert.deepEqual([usage.perMinute.at(-1)?.count, usage.today], [500, 500]);
});

Deno.test("RequestQuota loses at most a lease's unused allowance when its instance is killed", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const start = Date.UTC(2026, 10, 21, 12, 0, 0);
  // Given an instance that answered requests from leases and was then killed with SIGKILL
  const holder = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--unstable-kv",
      new URL("../support/quota_holder.ts", import.meta.url).pathname,
      path,
      String(start),
      "p",
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const line = await holder.stdout.pipeThrough(new TextDecoderStream()).getReader().read();
  const { answered } = JSON.parse(line.value!);
  holder.kill("SIGKILL");
  await holder.status;
  await using kv = await openKv(path);
  const left = (await kv.get<RequestCounts>(requestCountsKey("p"))).value!;
  assert.ok((left.leased ?? 0) > 0, "the killed instance held a lease");
  // When another instance counts 600 more requests in the same minute, past the lease and its grace
  const clock = new ManualClock(start);
  const quota = new RequestQuota(kv, clock);
  const pending = Promise.all(Array.from({ length: 600 }, () => quota.count("p")));
  setTimeout(() => clock.advance(LEASE_MS + LEASE_GRACE_MS + 1), 100);
  const ok = (await pending).filter((v) => v === "ok").length;
  await quota.close();
  // Then the minute's limit was never passed, and what was lost is at most one lease's unused part
  assert.deepEqual(answered, 120);
  assert.ok(answered + ok <= 600, `${answered} + ${ok} passed`);
  assert.ok(answered + ok >= 600 - MAX_LEASE, `${answered} + ${ok} passed`);
  await Deno.remove(path);
});
