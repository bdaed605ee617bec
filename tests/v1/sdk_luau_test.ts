/**
 * The Luau SDK (sdk/luau) under Lune, the Luau runtime, against the real service: the suites in
 * sdk/luau/tests load the SDK from the Blocklink.rbxm that `deno task sdk:build` writes, with only
 * HttpService and MessagingService stood in (sdk/luau/tests/Engine.luau). Lune and StyLua come from
 * npm through scripts/luau_tools.sh. The last suite is the contract check: every answer and event
 * recorded from the service during the others, against the SDK's types.
 */
import assert from "node:assert/strict";
import { luauTools, type LuauWorld, runLuau, startLuauWorld } from "../support/luau_world.ts";
import { ERROR_CODES } from "../../routes/v1/error_codes.ts";

const ALL_SUITES = [
  "unit",
  "api",
  "retry",
  "budget",
  "cache",
  "events",
  "payout",
  "feed",
  "ordering",
  "packed",
  "directory",
  "robust",
  "bounded",
  "teardown",
  "rewards",
  "mock",
  "example",
];
// LUAU_SUITES=feed,events runs only those (while working on the SDK); the contract check needs all.
const SUITES = Deno.env.get("LUAU_SUITES")?.split(",") ?? ALL_SUITES;

/** Builds Blocklink.rbxm into a temporary folder, as `deno task sdk:build` does. */
async function buildModel(dir: string): Promise<string> {
  const out = `${dir}/Blocklink.rbxm`;
  const built = await luauTools(["lune", "run", "sdk/luau/build.luau", out]);
  assert.deepEqual(built.code, 0, built.output);
  return out;
}

async function suite(world: LuauWorld, rbxm: string, name: string, env?: Record<string, string>) {
  const result = await runLuau(world, rbxm, [name], env);
  assert.ok(result.code === 0, `Luau suite ${name} failed:\n${result.output}`);
  assert.ok(
    /cases passed/.test(result.output),
    `Luau suite ${name} ran no case:\n${result.output}`,
  );
}

Deno.test("Luau SDK under Lune: every route, retries, budget, events, payouts, the feed, robustness, the mock and the example against the real service", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "blocklink_luau_" });
  try {
    const rbxm = await buildModel(dir);
    await using world = await startLuauWorld();
    for (const name of SUITES) {
      await t.step(name, () => suite(world, rbxm, name));
    }
    if (SUITES !== ALL_SUITES) return;
    await t.step("contract: recorded answers and events fit the SDK's types", async () => {
      const fixtures = `${dir}/fixtures.json`;
      await Deno.writeTextFile(
        fixtures,
        JSON.stringify({ answers: world.answers(), messages: world.messages() }, null, 2),
      );
      await suite(world, rbxm, "contract", { BLOCKLINK_FIXTURES: fixtures });
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Every Luau file of the SDK, its tests and examples passes Luau's compiler", async () => {
  const result = await luauTools(["lune", "run", "sdk/luau/tests/parse_all.luau", "sdk/luau"]);
  assert.deepEqual(result.code, 0, result.output);
  assert.ok(/Compiled \d+ Luau files, 0 with problems/.test(result.output), result.output);
});

Deno.test("The SDK, its example, its tests and the webhook verifier pass luau-lsp analyze in strict mode", async () => {
  // Roblox's definitions for the SDK and the example, Lune's for the Lune scripts (luau_tools.sh).
  const result = await luauTools(["typecheck"]);
  assert.deepEqual(result.code, 0, result.output);
  assert.match(result.output, /sdk\/luau and sdk\/webhooks pass strict mode/);
});

Deno.test("Batch items and reward grants are typed by kind and TxBatchError.code is an ErrorCode: luau-lsp reports every wrong one", async () => {
  const file = "tests/v1/luau_batch_items.luau";
  const wrong = (await Deno.readTextFile(file)).split("\n").flatMap((line, index) =>
    line.endsWith("-- WRONG") ? [index + 1] : []
  );
  const result = await luauTools(["analyze", file]);
  const reported = [...result.output.matchAll(/luau_batch_items\.luau\((\d+),\d+\): \w+/g)].map((
    m,
  ) => Number(m[1]));
  assert.ok(wrong.length >= 3, "the file marks its wrong items");
  assert.deepEqual([...new Set(reported)], wrong, result.output);
});

Deno.test("The SDK's ServiceErrorCode union lists exactly the service's error codes", async () => {
  const types = await Deno.readTextFile("sdk/luau/src/Blocklink/Types.luau");
  const union = types.slice(types.indexOf("export type ServiceErrorCode ="));
  const listed = [...union.slice(0, union.indexOf("\n\n")).matchAll(/"(\w+)"/g)].map((m) => m[1]);
  assert.deepEqual(listed.toSorted(), Object.keys(ERROR_CODES).toSorted());
});

/** Types.luau's unions of string literals, which the run-time schemas check as strings. */
const STRING_UNIONS = new Set(["ErrorCode"]);

/** The text between the brace at `open` and its matching closing brace. */
function braced(source: string, open: number): string {
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    if (source[i] === "{") depth++;
    if (source[i] === "}" && --depth === 0) return source.slice(open + 1, i);
  }
  throw new Error(`Unbalanced braces after ${source.slice(open, open + 40)}`);
}

/** The comma- or line-separated entries of a table's body, split at depth 0. */
function entries(body: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of body) {
    if (char === "{") depth++;
    if (char === "}") depth--;
    if (depth === 0 && (char === "," || char === "\n")) {
      if (current.trim()) out.push(current.trim());
      current = "";
    } else current += char;
  }
  if (current.trim()) out.push(current.trim());
  return out.filter((entry) => !entry.startsWith("--"));
}

/** `name -> { field -> spec }` for each `<prefix><name> = {` table in `source` (specs unquoted). */
function tables(
  source: string,
  prefix: string,
  separator: string,
): Map<string, Map<string, string>> {
  const shapes = new Map<string, Map<string, string>>();
  const pattern = new RegExp(`${prefix}(\\w+) = \\{`, "gm");
  for (const match of source.matchAll(pattern)) {
    const [, name] = match;
    assert.ok(name);
    const fields = new Map<string, string>();
    for (const entry of entries(braced(source, match.index! + match[0].length - 1))) {
      const at = entry.indexOf(separator);
      fields.set(entry.slice(0, at).trim(), entry.slice(at + 1).trim().replace(/^"|"$/g, ""));
    }
    shapes.set(name, fields);
  }
  return shapes;
}

Deno.test("Types.luau and the run-time Schemas.luau describe the same fields, optional alike", async () => {
  const types = tables(
    await Deno.readTextFile("sdk/luau/src/Blocklink/Types.luau"),
    "^export type ",
    ":",
  );
  const schemaSource = await Deno.readTextFile("sdk/luau/src/Blocklink/Schemas.luau");
  const shapesAt = schemaSource.indexOf("Schemas.shapes = {");
  const schemas = tables(
    braced(schemaSource, shapesAt + "Schemas.shapes = ".length),
    "^\\t",
    "=",
  );
  assert.ok(schemas.size >= 18, `schemas parsed: ${[...schemas.keys()]}`);
  for (const [name, schema] of schemas) {
    const exported = types.get(name);
    assert.ok(exported, `Types.luau exports ${name}`);
    assert.deepEqual([...exported.keys()].sort(), [...schema.keys()].sort(), `${name}: fields`);
    for (const [field, spec] of schema) {
      const declared: string = exported.get(field)!;
      assert.deepEqual(declared.endsWith("?"), spec.endsWith("?"), `${name}.${field}: optional`);
      const base = spec.replace(/\?$/, "");
      if (["string", "number", "boolean"].includes(base)) {
        const type = declared.replace(/\?$/, "");
        assert.deepEqual(STRING_UNIONS.has(type) ? "string" : type, base, `${name}.${field}: type`);
      }
    }
  }
});
