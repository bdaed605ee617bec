import { luauTools, runLuau, startLuauWorld } from "../tests/support/luau_world.ts";
const dir = await Deno.makeTempDir();
let out = Deno.env.get("RBXM") ?? "";
if (!out) {
  out = `${dir}/Blocklink.rbxm`;
  const built = await luauTools(["lune", "run", "sdk/luau/build.luau", out]);
  if (built.code) throw new Error(built.output);
}
await using world = await startLuauWorld();
const r = await runLuau(world, out, Deno.args);
console.log(r.output.split("\n").filter((l) => !l.startsWith("{")).join("\n"));
console.log("usage", JSON.stringify(world.memoryStore.usage()));
