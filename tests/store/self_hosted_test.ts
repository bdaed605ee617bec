// Self-hosting several instances on one store over KV Connect, exactly as README.md documents it.
import assert from "node:assert/strict";
import { startRemoteStore, TEST_KV_ACCESS_TOKEN } from "../support/remote_store.ts";
import { openKv } from "../../kv/open_kv.ts";
import { createProject } from "../../kv/projects.ts";
import { createApiKey } from "../../kv/api_keys.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

/** The variables of README.md's "Each instance's environment" block, in order. */
async function documentedEnvironment(): Promise<string[]> {
  const readme = await Deno.readTextFile(new URL("../../README.md", import.meta.url));
  const block = readme.split("```sh\n# Each instance's environment")[1]?.split("```")[0];
  assert.ok(block, "README.md documents each instance's environment");
  return block.split("\n").filter((l) => /^[A-Z_]+=/.test(l)).map((l) =>
    l.slice(0, l.indexOf("="))
  );
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Runs main.ts with exactly `env` (plus what the Deno binary itself needs). */
function startInstance(env: Record<string, string>): Deno.ChildProcess {
  const own = Object.fromEntries(
    ["PATH", "HOME", "DENO_DIR"].flatMap((k) => Deno.env.get(k) ? [[k, Deno.env.get(k)!]] : []),
  );
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--unstable-cron", MAIN],
    env: { ...own, ...env },
    clearEnv: true,
    stdout: "null",
    stderr: "piped",
  }).spawn();
}

async function waitForHealth(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      const res = await fetch(`${url}/health`);
      await res.body?.cancel();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not start`);
}

Deno.test("Two instances started with the documented self-hosted environment serve from one remote store", async () => {
  await using store = await startRemoteStore();
  // Given exactly the variables README.md lists, with this test's values
  const values = (port: number): Record<string, string> => ({
    KV_PATH: store.url,
    DENO_KV_ACCESS_TOKEN: TEST_KV_ACCESS_TOKEN,
    SECRET: "self-hosted-secret-self-hosted-secret-0123",
    BASE_URL: "http://127.0.0.1:8000",
    PORT: String(port),
    RPC_URL_MAINNET: "http://127.0.0.1:9",
    RPC_URL_DEVNET: "http://127.0.0.1:9",
  });
  const documented = await documentedEnvironment();
  assert.deepEqual(documented, Object.keys(values(0)));
  const ports = [freePort(), freePort()];
  const instances = ports.map((port) => startInstance(values(port)));
  try {
    await Promise.all(ports.map((port) => waitForHealth(`http://127.0.0.1:${port}`)));
    // When a project's key, written to the store, is used on both instances
    const kv = await openKv(store.url);
    const project = await createProject(kv, {
      name: "Hosted",
      cluster: "devnet",
      createdBy: "Dev1111111111111111111111111111111111111111",
      now: Date.now(),
    });
    const { plaintext } = await createApiKey(kv, project.id, Date.now());
    kv.close();
    // Then both answer from it
    for (const port of ports) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/project`, {
        headers: { "x-api-key": plaintext },
      });
      assert.equal(res.status, 200);
      assert.equal((await res.json()).id, project.id);
    }
  } finally {
    for (const child of instances) {
      child.kill("SIGTERM");
      await child.status;
      await child.stderr.cancel();
    }
  }
});

Deno.test("main.ts refuses a remote store without SECRET or without an access token, naming the variable", async () => {
  await using store = await startRemoteStore();
  const env = {
    KV_PATH: store.url,
    DENO_KV_ACCESS_TOKEN: TEST_KV_ACCESS_TOKEN,
    SECRET: "self-hosted-secret-self-hosted-secret-0123",
    PORT: String(freePort()),
  };
  for (const missing of ["SECRET", "DENO_KV_ACCESS_TOKEN"] as const) {
    const { [missing]: _, ...rest } = env;
    const child = startInstance(rest);
    const [status, stderr] = await Promise.all([
      child.status,
      new Response(child.stderr).text(),
    ]);
    assert.equal(status.code, 1);
    assert.match(stderr, new RegExp(`${missing}: required with a remote store`));
  }
});
