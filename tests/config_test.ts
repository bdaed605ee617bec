import { assertEquals } from "./support/assertions.ts";
import { throws } from "node:assert/strict";
import { ConfigError, loadConfig } from "../lib/config.ts";

const SECRET = "s".repeat(32);

Deno.test("loadConfig() applies the documented defaults", () => {
  const config = loadConfig({ SECRET });
  assertEquals(config.port, 8000);
  assertEquals(config.baseUrl, "http://localhost:8000");
  assertEquals(config.kvPath, "./data/blocklink.kv");
  assertEquals(config.walletProvider, "managed");
  assertEquals(config.rpcUrls, {
    devnet: "https://api.devnet.solana.com",
    mainnet: "https://api.mainnet-beta.solana.com",
  });
  assertEquals(config.dasUrls, { devnet: undefined, mainnet: undefined });
  assertEquals(config.idpUrl, "https://apis.roblox.com/oauth");
  assertEquals(config.publishUrl, "https://apis.roblox.com");
  assertEquals(config.serviceName, "Blocklink");
  assertEquals(loadConfig({ SECRET, PORT: "9000" }).baseUrl, "http://localhost:9000");
  assertEquals(loadConfig({ SECRET, BASE_URL: "https://x.example/" }).baseUrl, "https://x.example");
  assertEquals(loadConfig({ SECRET, KV_PATH: ":memory:" }).kvPath, ":memory:");
  assertEquals(loadConfig({ SECRET }, { onDeploy: true }).kvPath, undefined);
});

Deno.test("loadConfig() names every bad variable", () => {
  throws(
    () =>
      loadConfig({ PORT: "x", WALLET_PROVIDER: "hsm", RPC_URL_DEVNET: "ftp://a", SECRET: "short" }),
    (e: Error) => {
      assertEquals(e instanceof ConfigError, true);
      for (const name of ["PORT", "WALLET_PROVIDER", "RPC_URL_DEVNET", "SECRET"]) {
        assertEquals(e.message.includes(`${name}:`), true, e.message);
      }
      return true;
    },
  );
  throws(() => loadConfig({}, { onDeploy: true }), /SECRET: required/);
});

Deno.test("loadConfig() generates a SECRET once and keeps it", async () => {
  const dataDir = await Deno.makeTempDir();
  const first = loadConfig({}, { dataDir });
  const second = loadConfig({}, { dataDir });
  assertEquals(first.secret.length >= 43, true);
  assertEquals(second.secret, first.secret);
  assertEquals((await Deno.stat(`${dataDir}/secret`)).mode! & 0o777, 0o600);
  await Deno.remove(dataDir, { recursive: true });
});

Deno.test("loadConfig() refuses a generated secret file that is too short, naming the file", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dataDir}/secret`, "short\n");
    throws(() => loadConfig({}, { dataDir }), (e: Error) => {
      assertEquals(e instanceof ConfigError, true);
      assertEquals(e.message.includes(`${dataDir}/secret`), true, e.message);
      assertEquals(e.message.includes("at least 32 characters"), true, e.message);
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
    assertEquals(loadConfig({}, { dataDir }).secret, "k".repeat(43));
    assertEquals((await Deno.stat(`${dataDir}/secret`)).mode! & 0o777, 0o600);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("loadConfig(): first starts of several processes at once agree on one generated SECRET", async () => {
  const dataDir = await Deno.makeTempDir();
  const config = new URL("../lib/config.ts", import.meta.url).href;
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
    for (const run of runs) assertEquals(run.code, 0, decoder.decode(run.stderr));
    const secrets = runs.map((run) => JSON.parse(decoder.decode(run.stdout)).secret as string);
    const kept = (await Deno.readTextFile(`${dataDir}/secret`)).trim();
    assertEquals(kept.length >= 43, true);
    assertEquals(secrets, secrets.map(() => kept));
    assertEquals([...Deno.readDirSync(dataDir)].map((e) => e.name), ["secret"]);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("loadConfig() refuses a remote store without SECRET or without an access token", () => {
  const KV_PATH = "https://kv.example:4512";
  const DENO_KV_ACCESS_TOKEN = "t".repeat(24);
  throws(() => loadConfig({ KV_PATH, DENO_KV_ACCESS_TOKEN }), (e: Error) => {
    assertEquals(e instanceof ConfigError, true);
    assertEquals(e.message.includes("SECRET: required with a remote store"), true, e.message);
    assertEquals(e.message.includes("DENO_KV_ACCESS_TOKEN"), false, e.message);
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
  assertEquals(loadConfig({ KV_PATH, SECRET, DENO_KV_ACCESS_TOKEN }).kvPath, KV_PATH);
});
