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

Deno.test("the floor check sees an upward import", () => {
  const cases: [path: string, source: string, broken: string][] = [
    ["kv/x.ts", 'import { a } from "../lib/a.ts";', "kv/x.ts -> lib/a.ts (up from kv/)"],
    ["lib/x.ts", 'import type { C } from "hono";', "lib/x.ts -> hono (package)"],
    ["routes/x.ts", 'import "../jobs/a.ts";', "routes/x.ts -> jobs/a.ts (up from routes/)"],
    ["sandbox/x.ts", 'export * from "../kv/a.ts";', "sandbox/x.ts -> kv/a.ts (sandbox)"],
    ["sdk/ts/src/x.ts", 'import "../../../lib/a.ts";', "sdk/ts/src/x.ts -> lib/a.ts (sdk)"],
  ];
  for (const [path, source, broken] of cases) {
    assert.deepEqual(violationsOf(path, importsOf(path, source)), [broken]);
  }
});
