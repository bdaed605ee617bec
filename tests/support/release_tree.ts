/**
 * A past release's own code, for tests of what its instances do to this version's store: its tree
 * taken from the repository's history and run under Deno, with this version's helper scripts
 * copied beside its tests.
 */
import { fileURLToPath as fromFileUrl } from "node:url";

const REPO = fromFileUrl(new URL("../..", import.meta.url));

/** Runs a command in `cwd`; its standard output, or an error with its standard error. */
export async function run(command: string, args: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command(command, { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder();
  if (!out.success) {
    throw new Error(`${command} ${args.join(" ")} failed: ${text.decode(out.stderr)}`);
  }
  return text.decode(out.stdout);
}

/**
 * The tree of `commit` in a new directory, with each of `scripts` (paths in this repository) copied
 * to the same path in it; the caller removes the directory.
 */
export async function checkOutRelease(commit: string, scripts: string[]): Promise<string> {
  await run("git", ["cat-file", "-e", `${commit}^{commit}`], REPO).catch((error) => {
    throw new Error(
      `This test needs a past release from the repository's history (a full clone; in a shallow one: git fetch --unshallow): ${error.message}`,
    );
  });
  const dir = await Deno.makeTempDir({ prefix: "previous-release-" });
  const tar = `${dir}.tar`;
  await run("git", ["archive", "--format=tar", "-o", tar, commit], REPO);
  await run("tar", ["-xf", tar, "-C", dir], dir);
  await Deno.remove(tar);
  for (const script of scripts) await Deno.copyFile(`${REPO}/${script}`, `${dir}/${script}`);
  return dir;
}
