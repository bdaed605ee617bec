/** The event pipeline under test: the real app and worker on a KV, with the Open Cloud messaging stand-in. */
import type { Project } from "../../kv/projects.ts";
import { JobWorker, type JobWorkerOptions } from "../../jobs/worker.ts";
import type { ManualClock } from "../../core/clock.ts";
import type { Config } from "../../lib/config.ts";
import { saveEventSettings } from "../../lib/events/settings.ts";
import { type MessagingStandIn, startMessagingStandIn } from "../../sandbox/roblox/mod.ts";
import { createTestApp, createTestProject, type TestApp } from "./test_app.ts";

/** Universe and publishing key the stand-in accepts. */
export const UNIVERSE = "4242";
export const PUBLISH_KEY = "test-publishing-key-0123456789";

/** One service instance with its worker. */
export interface EventsInstance extends TestApp {
  worker: JobWorker;
}

/** A running harness; `close()` stops everything it started. */
export interface EventsHarness extends AsyncDisposable {
  standIn: MessagingStandIn;
  a: EventsInstance;
  project: Project;
  apiKey: string;
  /** Opens another instance on the same KV file (needs `kvPath`). */
  instance(options?: { owner?: string; clock?: ManualClock }): Promise<EventsInstance>;
  /** Stops an instance as a crash would leave it: its worker and store handle are gone. */
  kill(instance: EventsInstance): Promise<void>;
  close(): Promise<void>;
}

/** Starts the stand-in and one instance with a project whose events are on (unless `eventsOn: false`). */
export async function startEventsHarness(options: {
  kvPath?: string;
  config?: Partial<Config>;
  eventsOn?: boolean;
  worker?: JobWorkerOptions;
} = {}): Promise<EventsHarness> {
  const standIn = await startMessagingStandIn({
    keys: [{ apiKey: PUBLISH_KEY, universeId: UNIVERSE }],
  });
  const opened: EventsInstance[] = [];
  const open = async (extra: { owner?: string; clock?: ManualClock } = {}) => {
    const app = await createTestApp({
      kvPath: options.kvPath,
      clock: extra.clock,
      config: { publishUrl: standIn.url, ...options.config },
    });
    // Hung publishes end after 200 ms instead of 5 s, so timeouts stay quick.
    app.ctx.events.attemptTimeoutMs = 200;
    const worker = new JobWorker(app.ctx, { owner: extra.owner ?? "a", ...options.worker });
    const instance = { ...app, worker };
    opened.push(instance);
    return instance;
  };
  const a = await open();
  const { project, apiKey } = await createTestProject(a);
  if (options.eventsOn !== false) {
    await saveEventSettings(a.ctx, project.id, {
      universeId: UNIVERSE,
      publishingKey: PUBLISH_KEY,
    });
  }
  const kill = async (instance: EventsInstance) => {
    if (!opened.includes(instance)) return;
    opened.splice(opened.indexOf(instance), 1);
    await instance.worker.stop();
    await instance.close();
  };
  const close = async () => {
    for (const instance of [...opened]) await kill(instance);
    await standIn.close();
  };
  return {
    standIn,
    a,
    project,
    apiKey,
    instance: (extra) => open({ clock: a.clock, ...extra }),
    kill,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Runs worker passes until none has anything due at the current clock time. */
export async function drain(...workers: JobWorker[]): Promise<number> {
  let total = 0;
  for (let round = 0; round < 1_000; round++) {
    const ran = (await Promise.all(workers.map((w) => w.runDue()))).reduce((x, y) => x + y, 0);
    if (ran === 0) return total;
    total += ran;
  }
  throw new Error("Cannot drain: jobs keep coming");
}
