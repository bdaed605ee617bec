import assert from "node:assert/strict";
import { throws } from "node:assert/strict";
import { ConfigError, loadConfig } from "../../lib/config.ts";

const SECRET = "s".repeat(32);

Deno.test("loadConfig() applies the documented defaults", () => {
  const config = loadConfig({ SECRET });
  assert.deepEqual(config.port, 8000);
  assert.deepEqual(config.baseUrl, "http://localhost:8000");
  assert.deepEqual(config.kvPath, "./data/blocklink.kv");
  assert.deepEqual(config.walletProvider, "managed");
  assert.deepEqual(config.rpcUrls, {
    devnet: "https://api.devnet.solana.com",
    mainnet: "https://api.mainnet-beta.solana.com",
  });
  assert.deepEqual(config.dasUrls, { devnet: undefined, mainnet: undefined });
  assert.deepEqual(config.idpUrl, "https://apis.roblox.com/oauth");
  assert.deepEqual(config.publishUrl, "https://apis.roblox.com");
  assert.deepEqual(config.serviceName, "Blocklink");
  assert.deepEqual(loadConfig({ SECRET, PORT: "9000" }).baseUrl, "http://localhost:9000");
  assert.deepEqual(
    loadConfig({ SECRET, BASE_URL: "https://x.example/" }).baseUrl,
    "https://x.example",
  );
  assert.deepEqual(loadConfig({ SECRET, KV_PATH: ":memory:" }).kvPath, ":memory:");
  assert.deepEqual(loadConfig({ SECRET }, { onDeploy: true }).kvPath, undefined);
  // Owners may export their wallet's key unless the deployment turns it off.
  assert.deepEqual(loadConfig({ SECRET }).keyExport, true);
  assert.deepEqual(loadConfig({ SECRET, KEY_EXPORT: "off" }).keyExport, false);
});

Deno.test("loadConfig() names every bad variable", () => {
  throws(
    () =>
      loadConfig({ PORT: "x", WALLET_PROVIDER: "hsm", RPC_URL_DEVNET: "ftp://a", SECRET: "short" }),
    (e: Error) => {
      assert.deepEqual(e instanceof ConfigError, true);
      for (const name of ["PORT", "WALLET_PROVIDER", "RPC_URL_DEVNET", "SECRET"]) {
        assert.deepEqual(e.message.includes(`${name}:`), true, e.message);
      }
      return true;
    },
  );
  throws(() => loadConfig({}, { onDeploy: true }), /SECRET: required/);
  throws(() => loadConfig({ SECRET, KEY_EXPORT: "no" }), /KEY_EXPORT: /);
  // The service's name is in every message a wallet signs.
  throws(() => loadConfig({ SERVICE_NAME: "Block\u202Ekinl" }), /SERVICE_NAME: must not contain/);
  throws(() => loadConfig({ SERVICE_NAME: ".." }), /SERVICE_NAME: must not be \. or \.\./);
  // The SECRET to come cannot be the one in use, nor shorter than a SECRET.
  throws(() => loadConfig({ SECRET, SECRET_NEXT: SECRET }), /SECRET_NEXT: is SECRET itself/);
  throws(() => loadConfig({ SECRET, SECRET_NEXT: "short" }), /SECRET_NEXT: must be at least 32/);
  assert.equal(loadConfig({ SECRET, SECRET_NEXT: "n".repeat(32) }).secretNext, "n".repeat(32));
});

Deno.test("loadConfig() generates a SECRET once and keeps it", async () => {
  const dataDir = await Deno.makeTempDir();
  const first = loadConfig({}, { dataDir });
  const second = loadConfig({}, { dataDir });
  assert.deepEqual(first.secret.length >= 43, true);
  assert.deepEqual(second.secret, first.secret);
  assert.deepEqual((await Deno.stat(`${dataDir}/secret`)).mode! & 0o777, 0o600);
  await Deno.remove(dataDir, { recursive: true });
});

Deno.test("loadConfig() refuses a generated secret file that is too short, naming the file", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dataDir}/secret`, "short\n");
    throws(() => loadConfig({}, { dataDir }), (e: Error) => {
      assert.deepEqual(e instanceof ConfigError, true);
      assert.deepEqual(e.message.includes(`${dataDir}/secret`), true, e.message);
      assert.deepEqual(e.message.includes("at least 32 characters"), true, e.message);
      return true;
    });
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("loadConfig() makes a kept secret file readable by its owner only", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dataDir}/secret`, "k".repeat(43), { mode: 0o644 });
    await Deno.chmod(`${dataDir}/secret`, 0o644);
    assert.deepEqual(loadConfig({}, { dataDir }).secret, "k".repeat(43));
    assert.deepEqual((await Deno.stat(`${dataDir}/secret`)).mode! & 0o777, 0o600);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("loadConfig(): first starts of several processes at once agree on one generated SECRET", async () => {
  const dataDir = await Deno.makeTempDir();
  const config = new URL("../../lib/config.ts", import.meta.url).href;
  // Every process waits for the same instant, then loads the configuration.
  const startAt = Date.now() + 1_500;
  const script = `import { loadConfig } from "${config}";
    while (Date.now() < ${startAt});
    const { secret } = loadConfig({}, { dataDir: ${JSON.stringify(dataDir)} });
    console.log(JSON.stringify({ secret }));`;
  try {
    const runs = await Promise.all(
      Array.from({ length: 6 }, () =>
        new Deno.Command(Deno.execPath(), {
          args: ["eval", "--ext=ts", script],
          stdout: "piped",
          stderr: "piped",
        }).output()),
    );
    const decoder = new TextDecoder();
    for (const run of runs) assert.deepEqual(run.code, 0, decoder.decode(run.stderr));
    const secrets = runs.map((run) => JSON.parse(decoder.decode(run.stdout)).secret as string);
    const kept = (await Deno.readTextFile(`${dataDir}/secret`)).trim();
    assert.deepEqual(kept.length >= 43, true);
    assert.deepEqual(secrets, secrets.map(() => kept));
    assert.deepEqual([...Deno.readDirSync(dataDir)].map((e) => e.name), ["secret"]);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("loadConfig() refuses a remote store without SECRET or without an access token", () => {
  const KV_PATH = "https://kv.example:4512";
  const DENO_KV_ACCESS_TOKEN = "t".repeat(24);
  throws(() => loadConfig({ KV_PATH, DENO_KV_ACCESS_TOKEN }), (e: Error) => {
    assert.deepEqual(e instanceof ConfigError, true);
    assert.deepEqual(e.message.includes("SECRET: required with a remote store"), true, e.message);
    assert.deepEqual(e.message.includes("DENO_KV_ACCESS_TOKEN"), false, e.message);
    return true;
  });
  throws(
    () => loadConfig({ KV_PATH, SECRET }),
    /DENO_KV_ACCESS_TOKEN: required with a remote store/,
  );
  throws(
    () => loadConfig({ KV_PATH: "http://127.0.0.1:4512" }),
    /SECRET: .*DENO_KV_ACCESS_TOKEN: /,
  );
  assert.deepEqual(loadConfig({ KV_PATH, SECRET, DENO_KV_ACCESS_TOKEN }).kvPath, KV_PATH);
});
