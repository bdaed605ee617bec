/** Projects: the tenant record every other entity hangs off. */
import { commitWithRetry, RETRY } from "../core/commit_retry.ts";
import type { Cluster } from "../core/cluster.ts";
import { ulid } from "../core/ids.ts";
import { getManyAtOnce } from "./get_many.ts";
import { wasWrittenBy } from "./lost_answer.ts";
import { guardSealedWrite } from "./secret_check.ts";
import type { KvReader } from "./read_batches.ts";
import { addAuditEntry, type AuditInput } from "./audit_log.ts";
import {
  addFounder,
  listMemberProjectIds,
  MAX_PROJECTS_PER_DEVELOPER,
  ownedCountKey,
} from "./members.ts";
import { addTeamClosure } from "./team.ts";

/** The MessagingService topic a project's events go to until it sets one. */
export const DEFAULT_EVENT_TOPIC = "svc";

/** Per-project settings edited in the dashboard; secrets are stored encrypted. */
export interface ProjectSettings {
  oauthClientId: string | null;
  oauthClientSecretEnc: string | null;
  universeId: string | null;
  publishingKeyEnc: string | null;
  topic: string;
  /** SOL balance below which the dashboard warns (decimal text); absent or null: estimated. */
  lowSolBalance?: string | null;
  /** The project's Open Cloud OAuth app (connecting the game); absent or null: none saved. */
  connectClientId?: string | null;
  connectClientSecretEnc?: string | null;
  /** The game connected through Roblox OAuth (`roblox_tokens.ts` holds its tokens); absent or null: none. */
  robloxConnection?: RobloxConnection | null;
  /** Several events per message (`lib/events/pack.ts`, an extension of the spec); absent: off. */
  packEvents?: boolean;
  /** Most messages published in any 60 clock seconds (`lib/events/publisher.ts`); absent or null: no cap. */
  messagesPerMinute?: number | null;
}

/**
 * A game connected through Roblox OAuth 2.0, as the settings page shows it; its tokens live in
 * their own record (`roblox_tokens.ts`), written with it when it is made, lost or ended.
 */
export interface RobloxConnection {
  /** Names this grant: tokens of an earlier grant never pass for this one's. */
  grantId: string;
  /** The OAuth app the grant belongs to: the project's own, or the service's. */
  app: "project" | "service";
  clientId: string;
  /** The member who connected it (wallet address) and the Roblox account that authorized. */
  connectedBy: string;
  robloxUser: { id: number; name: string } | null;
  connectedAt: number;
  scopes: string[];
  /** The experiences the grant covers (`token/resources`). */
  universeIds: string[];
  /** The one the project uses; null until the member picks one of several. */
  universeId: string | null;
  /** `lost`: Roblox refused the refresh token (revoked, expired, reused): reconnect. */
  status: "active" | "lost";
  lostAt: number | null;
  /** The API key installed in the game's secrets (`lib/projects/game_key.ts`); null: none yet. */
  gameKey: InstalledGameKey | null;
}

/** The API key the dashboard installed into the game's secrets, and a rotation of it under way. */
export interface InstalledGameKey {
  keyId: string;
  /** The key's first characters, as the keys page shows them. */
  preview: string;
  secretId: string;
  installedAt: number;
  installedBy: string;
  /** The key this one replaced, revoked once the servers' bleed-off ends (the `revoke_game_key` job). */
  replacing: { keyId: string; restartedAt: number | null; revokeAt: number | null } | null;
}

/** A project as stored. */
export interface Project {
  id: string;
  name: string;
  /** Derived from the name at creation; never changes, and stays reserved after deletion. */
  slug: string;
  cluster: Cluster;
  /** Wallet address of the developer who created it (its owner is in its team: `members.ts`). */
  createdBy: string;
  createdAt: number;
  deletedAt: number | null;
  walletAddress: string | null;
  settings: ProjectSettings;
}

/** Key of a project record. */
export function projectKey(id: string): Deno.KvKey {
  return ["projects", id];
}
/** Key of the slug index (value: project id). */
export function projectSlugKey(slug: string): Deno.KvKey {
  return ["projects_by_slug", slug];
}
/** Thrown by `createProject` when the developer already owns the maximum of active projects. */
export class ProjectLimitError extends Error {}

/** Turns a name into a URL slug: lowercase letters, digits and single dashes. */
export function slugify(name: string): string {
  const slug = name.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "").slice(0, 40).replace(/-+$/, "");
  return slug || "game";
}

/**
 * Creates a project with a unique slug derived from its name, its creator as its owner, within
 * the limit of projects they own; `audit` names the action to record with it.
 */
export async function createProject(
  kv: Deno.Kv,
  input: {
    name: string;
    cluster: Cluster;
    createdBy: string;
    now: number;
    audit?: Omit<AuditInput, "projectId"> | undefined;
  },
): Promise<Project> {
  const base = slugify(input.name);
  let slug = base;
  return await commitWithRetry("create project", async () => {
    const [slugEntry, countEntry] = await kv.getMany<[string, number]>([
      projectSlugKey(slug),
      ownedCountKey(input.createdBy),
    ]);
    if (slugEntry.value !== null) {
      // Slugs are never freed, so counting up (-2, -3, ...) could run out of tries; a random
      // suffix finds a free slug at once however many projects took the name before.
      slug = `${base}-${randomSlugSuffix()}`;
      return RETRY;
    }
    const count = countEntry.value ?? 0;
    if (count >= MAX_PROJECTS_PER_DEVELOPER) throw new ProjectLimitError();
    const project: Project = {
      id: ulid(input.now),
      name: input.name,
      slug,
      cluster: input.cluster,
      createdBy: input.createdBy,
      createdAt: input.now,
      deletedAt: null,
      walletAddress: null,
      settings: {
        oauthClientId: null,
        oauthClientSecretEnc: null,
        universeId: null,
        publishingKeyEnc: null,
        topic: DEFAULT_EVENT_TOPIC,
      },
    };
    const op = kv.atomic()
      .check(slugEntry, countEntry)
      .check({ key: projectKey(project.id), versionstamp: null })
      .set(projectKey(project.id), project)
      .set(projectSlugKey(slug), project.id)
      .set(ownedCountKey(input.createdBy), count + 1);
    addFounder(op, { projectId: project.id, owner: input.createdBy, now: input.now });
    if (input.audit) addAuditEntry(op, { ...input.audit, projectId: project.id });
    const result = await op.commit();
    if (result.ok || await wasWrittenBy(kv, projectKey(project.id))) return project;
    return RETRY;
  });
}

const SUFFIX_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** Six random lowercase letters and digits (36^6, about two billion). */
function randomSlugSuffix(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return [...bytes].map((b) => SUFFIX_ALPHABET[b % SUFFIX_ALPHABET.length]).join("");
}

/** Returns the project, deleted or not, or null. */
export async function getProject(kv: KvReader, id: string): Promise<Project | null> {
  return (await kv.get<Project>(projectKey(id))).value;
}

/** Returns the active (not deleted) project with this slug, or null. */
export async function getActiveProjectBySlug(kv: Deno.Kv, slug: string): Promise<Project | null> {
  const id = (await kv.get<string>(projectSlugKey(slug))).value;
  if (!id) return null;
  const project = await getProject(kv, id);
  return project && project.deletedAt === null ? project : null;
}

/** Lists the active projects a developer is a member of, oldest first. */
export async function listProjectsByDeveloper(kv: Deno.Kv, developer: string): Promise<Project[]> {
  const ids = await listMemberProjectIds(kv, developer);
  const projects: Project[] = [];
  for (const e of await getManyAtOnce<Project>(kv, ids.map(projectKey))) {
    if (e.value && e.value.deletedAt === null) projects.push(e.value);
  }
  return projects;
}

/**
 * Applies `change` to the project with an optimistic check; null when it does not exist. A change
 * that stores a sealed setting names the key id it is sealed under (`sealedUnder`): the commit
 * then also passes the key-check record's gate (`secret_check.ts`). `audit` builds the audit
 * entry of the change from the project before and after it (null: none), recorded with it.
 */
export async function updateProject(
  kv: Deno.Kv,
  id: string,
  change: (project: Project) => Project,
  options: {
    sealedUnder?: string | undefined;
    audit?: ((before: Project, after: Project) => AuditInput | null) | undefined;
  } = {},
): Promise<Project | null> {
  return await commitWithRetry("update project", async () => {
    const entry = await kv.get<Project>(projectKey(id));
    if (!entry.value) return null;
    const next = change(entry.value);
    const op = kv.atomic().check(entry).set(projectKey(id), next);
    const audit = options.audit?.(entry.value, next);
    if (audit) addAuditEntry(op, audit);
    if (options.sealedUnder) await guardSealedWrite(kv, op, options.sealedUnder);
    if ((await op.commit()).ok) return next;
    return RETRY;
  });
}

/**
 * Soft-deletes a project; its slug stays reserved so old links never reach another game. Its team
 * ends (`team.ts`): it leaves its members' lists and its owner's count, and `audit` is recorded.
 */
export async function deleteProject(
  kv: Deno.Kv,
  id: string,
  now: number,
  options: { audit?: AuditInput | undefined } = {},
): Promise<boolean> {
  return await commitWithRetry("delete project", async () => {
    const entry = await kv.get<Project>(projectKey(id));
    if (!entry.value || entry.value.deletedAt !== null) return false;
    const op = kv.atomic().check(entry).set(projectKey(id), { ...entry.value, deletedAt: now });
    const owner = await addTeamClosure(kv, op, id);
    if (owner !== null) {
      const countEntry = await kv.get<number>(ownedCountKey(owner));
      op.check(countEntry).set(countEntry.key, Math.max(0, (countEntry.value ?? 1) - 1));
    }
    if (options.audit) addAuditEntry(op, options.audit);
    if ((await op.commit()).ok) return true;
    return RETRY;
  });
}

/** Lists every project, deleted ones included (re-encryption after a rotation walks them). */
export async function* listAllProjects(kv: Deno.Kv): AsyncGenerator<Project> {
  for await (const entry of kv.list<Project>({ prefix: ["projects"] })) yield entry.value;
}
