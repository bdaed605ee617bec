/**
 * The Luau SDK (sdk/luau) under Lune, the Luau runtime, against the real service: the suites in
 * sdk/luau/tests load the SDK from the Blocklink.rbxm that `deno task sdk:build` writes, with only
 * HttpService and MessagingService stood in (sdk/luau/tests/Engine.luau). Lune and StyLua come from
 * npm through scripts/luau_tools.sh.
 */
import { assert, assertEquals } from "./support/assertions.ts";
import { type LuauWorld, runLuau, startLuauWorld } from "./support/luau_world.ts";

const LUAU_TOOLS = ["sh", "scripts/luau_tools.sh"];

async function run(args: string[]): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await new Deno.Command(LUAU_TOOLS[0], {
    args: [...LUAU_TOOLS.slice(1), ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code, output: decoder.decode(stdout) + decoder.decode(stderr) };
}

/** Builds Blocklink.rbxm into a temporary folder, as `deno task sdk:build` does. */
async function buildModel(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "blocklink_rbxm_" });
  const out = `${dir}/Blocklink.rbxm`;
  const built = await run(["lune", "run", "sdk/luau/build.luau", out]);
  assertEquals(built.code, 0, built.output);
  return out;
}

async function suite(world: LuauWorld, rbxm: string, name: string, env?: Record<string, string>) {
  const result = await runLuau(world, rbxm, [name], env);
  assert(result.code === 0, `Luau suite ${name} failed:\n${result.output}`);
  assert(/cases passed/.test(result.output), `Luau suite ${name} ran no case:\n${result.output}`);
}

Deno.test("Luau SDK under Lune: every route, retries, budget, events, payouts and the feed against the real service", async (t) => {
  const rbxm = await buildModel();
  await using world = await startLuauWorld();
  for (const name of ["unit", "api", "retry", "budget", "cache"]) {
    await t.step(name, () => suite(world, rbxm, name));
  }
});
