// The layout rule of ARCHITECTURE.md: every file imports only from its own floor or the floors
// below it, so reading the folders bottom-up never meets a name defined higher up.
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);

/**
 * Floors from the bottom. Folders sharing a floor do not import each other (`routes/` and `jobs/`),
 * except that pages render islands (`components/` imports `islands/`). `sandbox/` and `tasks/` sit
 * above the service only so that `dev.ts` may start the stand-ins and seed the demo project.
 */
const FLOORS: [folder: string, floor: number][] = [
  ["core/", 0],
  ["kv/", 1],
  ["lib/", 2],
  ["http/", 3],
  ["islands/", 4],
  ["components/", 4],
  ["routes/", 5],
  ["jobs/", 5],
  ["service.ts", 6],
  ["sandbox/", 7],
  ["tasks/", 7],
  ["main.ts", 8],
  ["dev.ts", 8],
];

/**
 * The sub-floors of `lib/`, from the bottom (ARCHITECTURE.md): each folder or file imports only
 * from itself and from the sub-floors below; entries sharing a sub-floor do not import each other.
 * A new folder of `lib/` gets its place here.
 */
const LIB_FLOORS: [entry: string, floor: number][] = [
  ["lib/names.ts", 1],
  ["lib/api_fields.ts", 1],
  ["lib/quota/", 1],
  ["lib/job_handler.ts", 1],
  ["lib/user_id.ts", 1],
  ["lib/issue_text.ts", 1],
  ["lib/migrations/previous_windows.ts", 1],
  ["lib/config.ts", 2],
  ["lib/chain/", 3],
  ["lib/crypto/", 3],
  ["lib/auth/", 4],
  ["lib/wallets/", 4],
  ["lib/base_context.ts", 5],
  ["lib/webhooks/", 6],
  ["lib/roblox/", 6],
  ["lib/events/", 7],
  ["lib/link/", 8],
  ["lib/tx/", 8],
  ["lib/watches/", 8],
  ["lib/context.ts", 9],
  ["lib/migrations/", 9],
  ["lib/rewards/", 9],
  ["lib/projects/", 10],
];

/** npm packages a floor must not use: the store knows nothing of HTTP or validation. */
const FORBIDDEN_PACKAGES: Record<string, string[]> = {
  "core/": ["hono", "zod", "preact"],
  "kv/": ["hono", "zod", "preact"],
  "lib/": ["hono", "preact"],
};

const SPECIFIER =
  /(?:^|[\s;])(?:import|export)(?:\s+type)?(?:[\s\w{},*$]*?from\s*)?\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

function floorOf(path: string): [string, number] | null {
  return FLOORS.find(([folder]) => path === folder || path.startsWith(folder)) ?? null;
}

function libFloorOf(path: string): [string, number] | null {
  return LIB_FLOORS.find(([entry]) => path === entry || path.startsWith(entry)) ?? null;
}

// The rule inside `lib/`, for an import of `target` (a file of `lib/`) by `path` (one too).
function libViolation(path: string, target: string): string | null {
  const own = libFloorOf(path);
  if (!own) return null; // Reported once, by `violationsOf`.
  const other = libFloorOf(target);
  if (!other) return `${path} -> ${target} (not on a sub-floor of lib/)`;
  if (own[0] === other[0] || other[1] < own[1]) return null;
  return `${path} -> ${target} (up inside lib/ from ${own[0]})`;
}

async function sourceFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(new URL(dir, ROOT))) {
    const path = `${dir}${entry.name}`;
    if (entry.isDirectory) files.push(...await sourceFiles(`${path}/`));
    else if (/\.tsx?$/.test(entry.name)) files.push(path);
  }
  return files;
}

function importsOf(path: string, source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(SPECIFIER)) {
    const specifier = match[1] ?? match[2]!;
    if (!specifier.startsWith(".")) {
      found.push(specifier);
      continue;
    }
    const url = new URL(specifier, new URL(path, ROOT));
    found.push(url.href.slice(ROOT.href.length));
  }
  return found;
}

/** Every broken rule of one file, as `file -> import (why)`. */
function violationsOf(path: string, imports: string[]): string[] {
  const broken: string[] = [];
  const own = floorOf(path);
  if (path.startsWith("lib/") && !libFloorOf(path)) {
    broken.push(`${path} (not on a sub-floor of lib/)`);
  }
  for (const target of imports) {
    const isFile = /\.(tsx?|json)$/.test(target) && !target.includes(":");
    if (path.startsWith("sandbox/")) {
      if (isFile && !target.startsWith("sandbox/")) broken.push(`${path} -> ${target} (sandbox)`);
      continue;
    }
    if (path.startsWith("sdk/ts/")) {
      // The TypeScript SDK is its own package: nothing of the service goes into it.
      if (isFile && !target.startsWith("sdk/ts/")) broken.push(`${path} -> ${target} (sdk)`);
      continue;
    }
    if (path.startsWith("islands/")) {
      if (isFile && !target.startsWith("islands/")) broken.push(`${path} -> ${target} (browser)`);
      continue;
    }
    if (!own) continue;
    const [folder, floor] = own;
    if (!isFile) {
      const name = target.replace(/^npm:/, "").split("/")[0];
      if (FORBIDDEN_PACKAGES[folder]?.some((p) => name === p || target.startsWith(`${p}/`))) {
        broken.push(`${path} -> ${target} (package)`);
      }
      continue;
    }
    const other = floorOf(target);
    if (!other) {
      broken.push(`${path} -> ${target} (outside the floors)`);
      continue;
    }
    const [otherFolder, otherFloor] = other;
    const rendersIsland = folder === "components/" && otherFolder === "islands/";
    if (otherFloor > floor || (otherFloor === floor && otherFolder !== folder && !rendersIsland)) {
      broken.push(`${path} -> ${target} (up from ${folder})`);
    } else if (folder === "lib/" && otherFolder === "lib/") {
      const inside = libViolation(path, target);
      if (inside) broken.push(inside);
    }
  }
  return broken;
}

Deno.test("every service file imports only from its own floor or below", async () => {
  const roots = ["core/", "kv/", "lib/", "http/", "components/", "routes/", "jobs/", "islands/"];
  const files = [
    ...(await Promise.all(roots.map(sourceFiles))).flat(),
    "service.ts",
    "main.ts",
    "dev.ts",
    ...await sourceFiles("sandbox/"),
    ...await sourceFiles("sdk/ts/src/"),
    ...await sourceFiles("sdk/ts/tests/"),
  ];
  const broken: string[] = [];
  for (const path of files) {
    broken.push(
      ...violationsOf(path, importsOf(path, await Deno.readTextFile(new URL(path, ROOT)))),
    );
  }
  assert.deepEqual(broken, []);
});

/** The house's size for one module (style.md: about 300 lines at most). */
const MAX_MODULE_LINES = 300;

Deno.test("no service module is over 300 lines", async () => {
  const roots = ["core/", "kv/", "lib/", "http/", "components/", "routes/", "jobs/", "islands/"];
  const files = [...(await Promise.all(roots.map(sourceFiles))).flat(), "service.ts", "main.ts"];
  const long: string[] = [];
  for (const path of files) {
    const lines = (await Deno.readTextFile(new URL(path, ROOT))).split("\n").length - 1;
    if (lines > MAX_MODULE_LINES) long.push(`${path}: ${lines} lines`);
  }
  assert.deepEqual(long, []);
});

/**
 * The stages of `lib/tx/` (its README): each sub-folder, and each file at its root, is one node;
 * an import from one node into another is an edge, and no path of edges comes back to its start.
 */
function stageOf(path: string): string | null {
  if (!path.startsWith("lib/tx/")) return null;
  const rest = path.slice("lib/tx/".length);
  const slash = rest.indexOf("/");
  return slash === -1 ? path : `lib/tx/${rest.slice(0, slash)}/`;
}

/** A circle between the stages of `lib/tx/`, as `a -> b -> a`, or null when there is none. */
function stageCircle(imports: Map<string, string[]>): string | null {
  const edges = new Map<string, Set<string>>();
  for (const [path, targets] of imports) {
    const from = stageOf(path);
    if (!from) continue;
    for (const target of targets) {
      const to = stageOf(target);
      if (!to || to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
    }
  }
  // Depth first; a stage met again while still on the path closes a circle.
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (stage: string): string | null => {
    const at = path.indexOf(stage);
    if (at !== -1) return [...path.slice(at), stage].join(" -> ");
    if (done.has(stage)) return null;
    path.push(stage);
    for (const next of edges.get(stage) ?? []) {
      const circle = visit(next);
      if (circle) return circle;
    }
    path.pop();
    done.add(stage);
    return null;
  };
  for (const stage of edges.keys()) {
    const circle = visit(stage);
    if (circle) return circle;
  }
  return null;
}

Deno.test("the stages of lib/tx/ import each other without a circle", async () => {
  const imports = new Map<string, string[]>();
  for (const path of await sourceFiles("lib/tx/")) {
    imports.set(path, importsOf(path, await Deno.readTextFile(new URL(path, ROOT))));
  }
  assert.equal(stageCircle(imports), null);
});

Deno.test("the stage check sees a circle through lib/tx/'s sub-folders and root files", () => {
  const imports = new Map([
    ["lib/tx/a/x.ts", ["lib/tx/b/y.ts", "lib/tx/a/z.ts"]],
    ["lib/tx/b/y.ts", ["lib/tx/mod.ts"]],
    ["lib/tx/mod.ts", ["lib/tx/a/z.ts"]],
    ["lib/tx/a/z.ts", []],
  ]);
  assert.equal(stageCircle(imports), "lib/tx/a/ -> lib/tx/b/ -> lib/tx/mod.ts -> lib/tx/a/");
  imports.set("lib/tx/mod.ts", []);
  assert.equal(stageCircle(imports), null);
});

Deno.test("the floor check sees an upward import, also between the sub-floors of lib/", () => {
  const cases: [path: string, source: string, broken: string][] = [
    ["kv/x.ts", 'import { a } from "../lib/a.ts";', "kv/x.ts -> lib/a.ts (up from kv/)"],
    ["lib/tx/x.ts", 'import type { C } from "hono";', "lib/tx/x.ts -> hono (package)"],
    ["routes/x.ts", 'import "../jobs/a.ts";', "routes/x.ts -> jobs/a.ts (up from routes/)"],
    ["sandbox/x.ts", 'export * from "../kv/a.ts";', "sandbox/x.ts -> kv/a.ts (sandbox)"],
    [
      "lib/events/x.ts",
      'import { a } from "../projects/a.ts";',
      "lib/events/x.ts -> lib/projects/a.ts (up inside lib/ from lib/events/)",
    ],
    [
      "lib/watches/x.ts",
      'import type { A } from "../tx/a.ts";',
      "lib/watches/x.ts -> lib/tx/a.ts (up inside lib/ from lib/watches/)",
    ],
    [
      "lib/chain/x.ts",
      'import { a } from "../context.ts";',
      "lib/chain/x.ts -> lib/context.ts (up inside lib/ from lib/chain/)",
    ],
    [
      "lib/shiny/x.ts",
      'import { a } from "../names.ts";',
      "lib/shiny/x.ts (not on a sub-floor of lib/)",
    ],
    ["sdk/ts/src/x.ts", 'import "../../../lib/a.ts";', "sdk/ts/src/x.ts -> lib/a.ts (sdk)"],
  ];
  for (const [path, source, broken] of cases) {
    assert.deepEqual(violationsOf(path, importsOf(path, source)), [broken]);
  }
});
