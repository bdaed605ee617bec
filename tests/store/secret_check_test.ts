/**
 * SECRET cannot silently change: the real `main.ts` process, started and restarted on one store.
 */
import assert from "node:assert/strict";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const SECRET_A = "a-secret-for-tests-aaaaaaaaaaaaaaaaaaaaaa";
const SECRET_B = "b-secret-for-tests-bbbbbbbbbbbbbbbbbbbbbb";

interface Started {
  /** True when the service listened; false when the process exited first. */
  listened: boolean;
  code: number | null;
  stderr: string;
}

/** Runs main.ts in `cwd` until it listens (then stops it) or exits on its own. */
async function startMain(cwd: string, env: Record<string, string>): Promise<Started> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--unstable-cron", MAIN],
    cwd,
    env: { PORT: "0", RPC_URL_DEVNET: "http://127.0.0.1:9", ...env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const decoder = new TextDecoder();
  let listened = false;
  let out = "";
  for await (const chunk of child.stdout) {
    out += decoder.decode(chunk);
    if (out.includes('"msg":"Listening"')) {
      listened = true;
      child.kill("SIGKILL");
      break;
    }
  }
  const status = await child.status;
  return { listened, code: listened ? null : status.code, stderr: await stderr };
}

Deno.test("main.ts refuses to start when SECRET is not the one the store was first started with", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const env = { KV_PATH: `${dir}/store.kv` };
    // Given: the store was first started with SECRET_A.
    assert.equal((await startMain(dir, { ...env, SECRET: SECRET_A })).listened, true);

    // When: it restarts with another SECRET.
    const wrong = await startMain(dir, { ...env, SECRET: SECRET_B });

    // Then: it refuses, naming the cause; the right SECRET still starts.
    assert.equal(wrong.listened, false);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /SECRET does not match/);
    assert.match(wrong.stderr, /SECRET_PREVIOUS/);
    assert.equal((await startMain(dir, { ...env, SECRET: SECRET_A })).listened, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main.ts refuses to start when the generated secret file is lost next to a kept store", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // Given: a store outside ./data, first started with a generated secret in ./data/secret.
    const env = { KV_PATH: `${dir}/store.kv` };
    assert.equal((await startMain(dir, env)).listened, true);

    // When: ./data is lost and the service starts again (it generates a new secret).
    await Deno.remove(`${dir}/data`, { recursive: true });
    const restarted = await startMain(dir, env);

    // Then
    assert.equal(restarted.listened, false);
    assert.equal(restarted.code, 1);
    assert.match(restarted.stderr, /SECRET does not match/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main.ts rotates SECRET in one restart with SECRET_PREVIOUS, then needs only the new SECRET", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const env = { KV_PATH: `${dir}/store.kv` };
    assert.equal((await startMain(dir, { ...env, SECRET: SECRET_A })).listened, true);

    // When: restarted once with the new SECRET and the old one as SECRET_PREVIOUS.
    const rotated = await startMain(dir, { ...env, SECRET: SECRET_B, SECRET_PREVIOUS: SECRET_A });

    // Then: it starts; afterwards the old SECRET is refused and the new one alone is enough.
    assert.equal(rotated.listened, true, rotated.stderr);
    assert.equal((await startMain(dir, { ...env, SECRET: SECRET_B })).listened, true);
    const old = await startMain(dir, { ...env, SECRET: SECRET_A });
    assert.equal(old.listened, false);
    assert.match(old.stderr, /SECRET does not match/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
