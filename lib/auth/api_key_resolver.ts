/** Resolves `x-api-key` to its project, with a short cache so the hot path makes no store read. */
import { getApiKeyByHash, isApiKeyShape } from "../../kv/api_keys.ts";
import { getProject, type Project } from "../../kv/projects.ts";
import type { Clock } from "../clock.ts";
import { sha256Hex } from "../crypto/hash.ts";

/** A resolved, usable key. */
export interface ResolvedKey {
  keyId: string;
  project: Project;
}

// A revoked key or deleted project must stop working within 30 s; 10 s leaves a wide margin.
const CACHE_TTL_MS = 10_000;
const CACHE_MAX_ENTRIES = 10_000;

interface CacheEntry {
  value: ResolvedKey | null;
  fetchedAt: number;
}

/** Looks API keys up by hash; caches hits and misses for at most 10 seconds. */
export class ApiKeyResolver {
  #cache = new Map<string, CacheEntry>();
  #loading = new Map<string, Promise<ResolvedKey | null>>();

  constructor(private kv: Deno.Kv, private clock: Clock) {}

  /** Returns the key's project, or null for a missing, malformed, unknown, revoked or deleted-project key. */
  async resolve(key: string | undefined): Promise<ResolvedKey | null> {
    // The shape check comes first so garbage never reaches the store.
    if (!key || !isApiKeyShape(key)) return null;
    const hash = await sha256Hex(key);
    const cached = this.#cache.get(hash);
    if (cached && this.clock.now() - cached.fetchedAt < CACHE_TTL_MS) return cached.value;
    let loading = this.#loading.get(hash);
    if (!loading) {
      loading = this.#load(hash).finally(() => this.#loading.delete(hash));
      this.#loading.set(hash, loading);
    }
    return await loading;
  }

  /** Drops cached entries for one project, so changes made by this instance apply at once. */
  forgetProject(projectId: string): void {
    for (const [hash, entry] of this.#cache) {
      if (entry.value?.project.id === projectId) this.#cache.delete(hash);
    }
  }

  async #load(hash: string): Promise<ResolvedKey | null> {
    const fetchedAt = this.clock.now();
    const record = await getApiKeyByHash(this.kv, hash);
    let value: ResolvedKey | null = null;
    if (record && record.revokedAt === null) {
      const project = await getProject(this.kv, record.projectId);
      if (project && project.deletedAt === null) value = { keyId: record.id, project };
    }
    if (this.#cache.size >= CACHE_MAX_ENTRIES) {
      this.#cache.delete(this.#cache.keys().next().value!);
    }
    this.#cache.delete(hash);
    this.#cache.set(hash, { value, fetchedAt });
    return value;
  }
}
