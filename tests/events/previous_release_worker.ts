/**
 * Runs inside a copy of a past release's tree (`publisher_upgrade_test.ts` puts it there), so every
 * module below is that release's own: one pass of its job worker over the store at `kvPath`, its
 * clock at `now`, as an instance of that release runs during a rolling deploy. Prints the jobs it
 * ran.
 *
 * Arguments: kvPath, now (Unix ms).
 */
import { ManualClock } from "../../core/clock.ts";
import { JobWorker } from "../../jobs/worker.ts";
import { createTestApp } from "../support/test_app.ts";

const [kvPath, now] = Deno.args;
await using app = await createTestApp({ kvPath, clock: new ManualClock(Number(now)) });
console.log(JSON.stringify({ ran: await new JobWorker(app.ctx).runDue() }));
