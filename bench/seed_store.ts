/** Seeding a bench server's store apart from the handle it serves from. */
import { openKv } from "../kv/open_kv.ts";
import { createProject, type Project } from "../kv/projects.ts";
import { createApiKey } from "../kv/api_keys.ts";

/**
 * Runs `seed` on a handle of its own, closed before the caller opens the store to serve it:
 * closing the last handle of a local file checkpoints its write-ahead log, so the app serves the
 * store as a restarted instance would, not behind the thousand frames seeding left in the log:
 * the bare KV-read server did about a quarter fewer requests a second on such a file.
 */
export async function seedStore<T>(path: string, seed: (kv: Deno.Kv) => Promise<T>): Promise<T> {
  const kv = await openKv(path);
  try {
    return await seed(kv);
  } finally {
    kv.close();
  }
}

/** Bench project number `n` (devnet, its own developer) with one API key; returns both. */
export async function createBenchProject(
  kv: Deno.Kv,
  n: number,
): Promise<{ project: Project; apiKey: string }> {
  const project = await createProject(kv, {
    name: `bench ${n}`,
    cluster: "devnet",
    createdBy: `dev-${n}`,
    now: Date.now(),
  });
  return { project, apiKey: (await createApiKey(kv, project.id, Date.now())).plaintext };
}
