/**
 * A project whose game connects with Roblox through the stand-ins: the OAuth server with the
 * project's connecting app registered, Open Cloud (publish, secrets, restartServers) taking its
 * tokens, the real app on a shared ManualClock, and the member's browser walking the flow.
 */
import { ManualClock } from "../../core/clock.ts";
import {
  type MessagingStandIn,
  type OauthStandIn,
  startMessagingStandIn,
  startOauthStandIn,
} from "../../sandbox/roblox/mod.ts";
import { JobWorker } from "../../jobs/worker.ts";
import { createTestApp, TEST_BASE_URL, type TestApp } from "./test_app.ts";
import {
  createProjectAs,
  getPage,
  postJson,
  signInDeveloper,
  type TestDeveloper,
} from "./dashboard.ts";

export const CONNECT_APP = {
  clientId: "7770001",
  clientSecret: "connect-app-secret",
  redirectUris: [`${TEST_BASE_URL}/dashboard/roblox/callback`],
  name: "Blocklink connect",
};

/** The test world; dispose to close everything. */
export interface ConnectWorld extends AsyncDisposable {
  t: TestApp;
  oauth: OauthStandIn;
  cloud: MessagingStandIn;
  clock: ManualClock;
  owner: TestDeveloper;
  projectId: string;
  worker: JobWorker;
  /** Another instance on the same store (a file), opened on demand. */
  openInstance(): Promise<TestApp>;
}

/** Starts the world with a project whose owner saved the connecting app. */
export async function startConnectWorld(): Promise<ConnectWorld> {
  const clock = new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0));
  const oauth = await startOauthStandIn({ now: () => clock.now(), clients: [CONNECT_APP] });
  const cloud = await startMessagingStandIn({
    now: () => clock.now(),
    checkAccessToken: oauth.checkAccessToken,
  });
  const dir = await Deno.makeTempDir({ prefix: "roblox-connect-" });
  const kvPath = `${dir}/store.kv`;
  const config = { idpUrl: oauth.idpUrl, publishUrl: cloud.url };
  const t = await createTestApp({ kvPath, clock, config });
  const owner = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, owner);
  const saved = await postJson(t.app, `/dashboard/projects/${project.id}/settings`, {
    connectClientId: CONNECT_APP.clientId,
    connectClientSecret: CONNECT_APP.clientSecret,
  }, { jar: owner.jar });
  if (saved.status !== 200) throw new Error(`Cannot save the app: ${await saved.text()}`);
  const worker = new JobWorker(t.ctx, { owner: "w" });
  const others: TestApp[] = [];
  const close = async () => {
    for (const other of others) await other.close();
    await t.close();
    await cloud.close();
    await oauth.close();
    await Deno.remove(dir, { recursive: true });
  };
  return {
    t,
    oauth,
    cloud,
    clock,
    owner,
    projectId: project.id,
    worker,
    async openInstance() {
      const other = await createTestApp({ kvPath, clock, config });
      others.push(other);
      return other;
    },
    [Symbol.asyncDispose]: close,
  };
}

/**
 * Walks the connect flow as the member's browser: the settings action, Roblox's consent page
 * (player 1001 ticking `universeIds`), the callback. Returns the callback's answer.
 */
export async function connectGame(
  world: ConnectWorld,
  options: { dev?: TestDeveloper; universeIds?: string[] } = {},
): Promise<Response> {
  const dev = options.dev ?? world.owner;
  const start = await getPage(
    world.t.app,
    `/dashboard/projects/${world.projectId}/roblox/connect`,
    dev.jar,
  );
  const authorizeUrl = start.headers.get("location") ?? "";
  if (start.status !== 303 || !authorizeUrl.startsWith(world.oauth.idpUrl)) {
    throw new Error(`Cannot start connecting: ${start.status} ${authorizeUrl}`);
  }
  const location = new URL(
    await world.oauth.authorizeAutomatically(authorizeUrl, 1001, {
      universeIds: options.universeIds ?? ["5550001"],
    }),
  );
  return await getPage(world.t.app, `${location.pathname}${location.search}`, dev.jar);
}
