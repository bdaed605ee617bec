/** A process that counts requests until it holds a quota lease, prints what it answered, and waits to be killed. */
import { ManualClock } from "../../core/clock.ts";
import { RequestQuota } from "../../lib/quota/request_quota.ts";
import { openKv } from "../../kv/open_kv.ts";

const [path, start, projectId] = Deno.args;
if (!path || !start || !projectId) {
  throw new Error("Usage: quota_holder.ts <kv path> <start ms> <project id>");
}

const kv = await openKv(path);
const quota = new RequestQuota(kv, new ManualClock(Number(start)));
let answered = 0;
// Bursts raise the project's rate here above the lease threshold, so later rounds take leases.
for (let burst = 0; burst < 3; burst++) {
  const verdicts = await Promise.all(Array.from({ length: 40 }, () => quota.count(projectId)));
  answered += verdicts.filter((v) => v === "ok").length;
}
console.log(JSON.stringify({ answered }));
await new Promise(() => {});
