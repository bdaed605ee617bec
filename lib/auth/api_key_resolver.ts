/** Resolves `x-api-key` to its project, with a short cache so the hot path makes no store read. */
import {
  apiKeyKey,
  type ApiKeyRecord,
  type ApiKeyRef,
  type ApiKeyScope,
  getApiKeyRef,
  isApiKeyShape,
  scopesOf,
} from "../../kv/api_keys.ts";
import { type Project, projectKey } from "../../kv/projects.ts";
import type { Clock } from "../../core/clock.ts";
import { sha256Hex } from "../../core/hash.ts";
import { TtlCache } from "../../core/ttl_cache.ts";
import type { KvReader } from "../../kv/read_batches.ts";

/** A resolved, usable key. */
interface ResolvedKey {
  keyId: string;
  project: Project;
  /** What it may call; a key's scopes never change. */
  scopes: readonly ApiKeyScope[];
}

// A revoked key or deleted project must stop working within 30 s; 10 s leaves a wide margin.
const CACHE_TTL_MS = 10_000;
// A key in steady use is read again behind its requests after 5 s, so none of them waits for it.
const REFRESH_AFTER_MS = 5_000;
// Keys whose place this instance remembers; only keys found in the store are remembered.
const MAX_REFS = 10_000;

/** Looks API keys up by hash; caches hits and misses for at most 10 seconds. */
export class ApiKeyResolver {
  #cache: TtlCache<ResolvedKey | null>;
  // Where each key found here points, which never changes for a key: one whose cached answer
  // expired (a project calling every few seconds) is read again in one round trip, its record
  // and project together, not three one after another (the index, the record, the project).
  #refs = new Map<string, ApiKeyRef>();

  constructor(private kv: KvReader, clock: Clock) {
    this.#cache = new TtlCache(clock, { ttlMs: CACHE_TTL_MS, refreshAfterMs: REFRESH_AFTER_MS });
  }

  /** Returns the key's project, or null for a missing, malformed, unknown, revoked or deleted-project key. */
  resolve(key: string | undefined): Promise<ResolvedKey | null> {
    // The shape check comes first so garbage never reaches the store.
    if (!key || !isApiKeyShape(key)) return Promise.resolve(null);
    const hash = sha256Hex(key);
    return this.#cache.get(hash, () => this.#load(hash));
  }

  /** Drops cached entries for one project, so changes made by this instance apply at once. */
  forgetProject(projectId: string): void {
    this.#cache.deleteWhere((resolved) => resolved?.project.id === projectId);
  }

  async #load(hash: string): Promise<ResolvedKey | null> {
    const ref = this.#refs.get(hash) ?? await getApiKeyRef(this.kv, hash);
    if (!ref) return null;
    const [{ value: record }, { value: project }] = await this.kv.getMany<[ApiKeyRecord, Project]>([
      apiKeyKey(ref.projectId, ref.keyId),
      projectKey(ref.projectId),
    ]);
    if (!record || record.hash !== hash) {
      this.#refs.delete(hash);
      return null;
    }
    this.#remember(hash, ref);
    if (record.revokedAt !== null) return null;
    return project && project.deletedAt === null
      ? { keyId: record.id, project, scopes: scopesOf(record) }
      : null;
  }

  #remember(hash: string, ref: ApiKeyRef): void {
    if (this.#refs.has(hash)) return;
    if (this.#refs.size >= MAX_REFS) this.#refs.delete(this.#refs.keys().next().value!);
    this.#refs.set(hash, ref);
  }
}
