/**
 * Builds the browser bundle of every island (`/static/islands.js`).
 *
 * At run time the bundle is built on first use (or by `warmIslandsBundle()` at start-up) with
 * `deno bundle --platform=browser` and kept in memory, so `deno task dev` and tests need no build
 * step. Where no subprocess may run (Deno Deploy), it falls back to `static/build/islands.js`,
 * written by running this file: `deno run -A components/islands_bundle.ts` before deploying.
 */
import { log } from "../core/log.ts";

const ROOT = new URL("../", import.meta.url);
const ISLANDS_DIR = new URL("islands/", ROOT);
const BOOT_MODULE = new URL("islands/_boot.ts", ROOT);
const CONFIG = new URL("deno.json", ROOT);
/** Where the prebuilt fallback lives. */
const PREBUILT_BUNDLE = new URL("static/build/islands.js", ROOT);

/** A built bundle and its strong ETag. */
interface IslandsBundle {
  code: string;
  etag: string;
}

let cached: Promise<IslandsBundle> | null = null;

/** Returns the islands bundle, building it once per process; a failed build is retried next call. */
export function getIslandsBundle(): Promise<IslandsBundle> {
  cached ??= loadBundle().catch((error) => {
    cached = null;
    throw error;
  });
  return cached;
}

/** Starts building the bundle in the background so the first page view does not wait. */
export function warmIslandsBundle(): void {
  getIslandsBundle().catch((error) => log("error", "Cannot build the islands bundle", { error }));
}

async function loadBundle(): Promise<IslandsBundle> {
  let code: string;
  try {
    code = await buildIslandsBundle();
  } catch (error) {
    try {
      code = await Deno.readTextFile(PREBUILT_BUNDLE);
      log("warn", "Serving the prebuilt islands bundle", { error });
    } catch {
      throw error;
    }
  }
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(code));
  const hex = Array.from(
    new Uint8Array(digest).slice(0, 12),
    (b) => b.toString(16).padStart(2, "0"),
  );
  return { code, etag: `"${hex.join("")}"` };
}

/** Lists the island modules: `islands/*.tsx` and `*.ts`, except `_helpers` and tests. */
async function listIslandModules(): Promise<URL[]> {
  const modules: URL[] = [];
  for await (const entry of Deno.readDir(ISLANDS_DIR)) {
    if (!entry.isFile || entry.name.startsWith("_") || entry.name.includes("_test.")) continue;
    if (/\.tsx?$/.test(entry.name)) modules.push(new URL(entry.name, ISLANDS_DIR));
  }
  return modules.sort((a, b) => a.href.localeCompare(b.href));
}

/** Runs `deno bundle` over a generated entry that imports every island and boots them. */
async function buildIslandsBundle(options: { minify?: boolean } = {}): Promise<string> {
  const modules = await listIslandModules();
  const dir = await Deno.makeTempDir({ prefix: "islands_" });
  try {
    const entry = `${dir}/entry.ts`;
    const imports = modules.map((m, i) => `import * as island${i} from "${m.href}";`);
    const spread = modules.map((_, i) => `...island${i}`).join(", ");
    await Deno.writeTextFile(
      entry,
      [
        `import { bootIslands } from "${BOOT_MODULE.href}";`,
        ...imports,
        `bootIslands({ ${spread} });`,
      ].join("\n"),
    );
    const args = ["bundle", "--quiet", "--config", CONFIG.pathname, "--platform=browser"];
    args.push("--format=esm", ...(options.minify === false ? [] : ["--minify"]), entry);
    const output = await new Deno.Command(Deno.execPath(), {
      args,
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    if (!output.success) throw new Error(`Cannot bundle islands: ${stderr.trim()}`);
    return new TextDecoder().decode(output.stdout);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const code = await buildIslandsBundle();
  await Deno.mkdir(new URL(".", PREBUILT_BUNDLE), { recursive: true });
  await Deno.writeTextFile(PREBUILT_BUNDLE, code);
  console.log(`Wrote ${PREBUILT_BUNDLE.pathname} (${code.length} bytes)`);
}
