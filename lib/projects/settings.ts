/**
 * Project settings saved from the dashboard: name, the Roblox OAuth app (client ID, secret), the
 * app connecting the game (client ID, secret: `lib/roblox/connect_app.ts`) and the event settings
 * (universe ID, publishing key, topic, packing, messages a minute). Every field is optional and an omitted one keeps its
 * value, so each form of the settings page can post only its own fields.
 */
import { type Project, updateProject } from "../../kv/projects.ts";
import { encryptOauthClientSecret, oauthRedirectUri } from "../auth/oauth_app.ts";
import { connectRedirectUri, encryptConnectClientSecret } from "../roblox/connect_app.ts";
import type { AppContext } from "../context.ts";
import {
  type EventSettingsInput,
  type EventSettingsView,
  eventSettingsView,
  forgetEventSettings,
  prepareEventSettings,
  validateEventSettings,
} from "../events/settings.ts";
import { projectNotFound } from "../../core/api_error.ts";
import { log } from "../../core/log.ts";
import type { ActionFields } from "./fields.ts";
import { NOT_TEXT, problemsOf, readFlag, readText, unknownFields } from "./fields.ts";
import { invalidSettings } from "../issue_text.ts";
import { validateProjectName } from "./ownership.ts";
import { parseUnits } from "../chain/amounts.ts";
import { SOL_DECIMALS } from "../chain/sol_balance.ts";

const MAX_CLIENT_ID_LENGTH = 200;
const MAX_SECRET_LENGTH = 4_096;
const ONE_TOKEN = /^[\x21-\x7e]+$/;

/** The settings as the dashboard shows and answers them; secrets only as "set" or not. */
export interface SettingsView {
  name: string;
  oauth: { clientId: string | null; clientSecretSet: boolean; redirectUri: string };
  /** The app connecting the game; `serviceApp`: the service's own is used without one. */
  connectApp: {
    clientId: string | null;
    clientSecretSet: boolean;
    redirectUri: string;
    serviceApp: boolean;
  };
  events: EventSettingsView;
  /** SOL balance below which the dashboard warns; null: estimated from the policy. */
  lowSolBalance: string | null;
}

/** Builds the settings view of a project. */
export function settingsView(
  project: Project,
  config: { baseUrl: string; robloxConnectApp?: unknown },
): SettingsView {
  const { baseUrl } = config;
  return {
    name: project.name,
    oauth: {
      clientId: project.settings.oauthClientId,
      clientSecretSet: project.settings.oauthClientSecretEnc !== null,
      redirectUri: oauthRedirectUri(baseUrl),
    },
    connectApp: {
      clientId: project.settings.connectClientId ?? null,
      clientSecretSet: Boolean(project.settings.connectClientSecretEnc),
      redirectUri: connectRedirectUri(baseUrl),
      serviceApp: Boolean(config.robloxConnectApp),
    },
    events: eventSettingsView(project),
    lowSolBalance: project.settings.lowSolBalance ?? null,
  };
}

/** Names of the text fields a refused settings form may be filled with again (no secrets). */
export const SETTINGS_DRAFT_FIELDS = [
  "name",
  "oauthClientId",
  "connectClientId",
  "universeId",
  "topic",
  "messagesPerMinute",
  "lowSolBalance",
] as const;
const SETTINGS_FIELDS: readonly string[] = [
  ...SETTINGS_DRAFT_FIELDS,
  "oauthClientSecret",
  "clearOauthClientSecret",
  "connectClientSecret",
  "clearConnectClientSecret",
  "publishingKey",
  "clearPublishingKey",
  "packEvents",
];

/** A change of one OAuth app's credentials. */
interface AppChange {
  clientId?: string | null;
  /** Plaintext to encrypt, or null to clear. */
  clientSecret?: string | null;
}

interface OauthChange extends AppChange {
  name?: string | undefined;
  lowSolBalance?: string | null;
  connect: AppChange;
}

/** The fields that change the app connecting the game: only a role that may connect saves them. */
export function changesConnectApp(fields: ActionFields): boolean {
  return ["connectClientId", "connectClientSecret", "clearConnectClientSecret"]
    .some((name) => fields[name] !== undefined);
}

// Validates one app's `<prefix>ClientId`, `<prefix>ClientSecret` and `clear<Prefix>ClientSecret`.
function validateApp(
  fields: ActionFields,
  names: { id: string; secret: string; clear: string },
  problems: string[],
): AppChange {
  const change: AppChange = {};
  const clientId = readText(fields[names.id]);
  if (clientId === NOT_TEXT) problems.push(`${names.id}: must be text`);
  else if (clientId === "" || clientId === null) change.clientId = null;
  else if (clientId !== undefined) {
    if (clientId.length > MAX_CLIENT_ID_LENGTH) {
      problems.push(`${names.id}: must be at most ${MAX_CLIENT_ID_LENGTH} characters`);
    } else if (!ONE_TOKEN.test(clientId)) {
      problems.push(`${names.id}: must be one word of printable characters`);
    } else change.clientId = clientId;
  }

  const secret = readText(fields[names.secret]);
  const clear = readFlag(fields[names.clear]);
  if (secret === NOT_TEXT) problems.push(`${names.secret}: must be text`);
  else if (clear === null) problems.push(`${names.clear}: must be true or false`);
  else if (clear && secret) problems.push(`${names.secret}: cannot be both given and cleared`);
  else if (clear) change.clientSecret = null;
  else if (secret) {
    if (secret.length > MAX_SECRET_LENGTH) {
      problems.push(`${names.secret}: must be at most ${MAX_SECRET_LENGTH} characters`);
    } else if (!ONE_TOKEN.test(secret)) {
      problems.push(`${names.secret}: must be one line of printable characters without spaces`);
    } else change.clientSecret = secret;
  }
  return change;
}

function validateGeneral(fields: ActionFields, problems: string[]): OauthChange {
  const name = fields.name !== undefined ? validateProjectName(fields.name, problems) : undefined;
  const change: OauthChange = {
    ...(name !== undefined ? { name } : {}),
    ...validateApp(fields, {
      id: "oauthClientId",
      secret: "oauthClientSecret",
      clear: "clearOauthClientSecret",
    }, problems),
    connect: validateApp(fields, {
      id: "connectClientId",
      secret: "connectClientSecret",
      clear: "clearConnectClientSecret",
    }, problems),
  };

  const low = readText(fields.lowSolBalance);
  if (low === NOT_TEXT) problems.push("lowSolBalance: must be text");
  else if (low === "" || low === null) change.lowSolBalance = null;
  else if (low !== undefined) {
    if (parseUnits(low, SOL_DECIMALS) === null) {
      problems.push(
        `lowSolBalance: must be an amount of SOL such as 0.5 (at most ${SOL_DECIMALS} decimals)`,
      );
    } else change.lowSolBalance = low;
  }
  return change;
}

function eventInput(fields: ActionFields): EventSettingsInput | null {
  const last = (v: unknown) => Array.isArray(v) ? v[v.length - 1] : v;
  const input: Record<string, unknown> = {};
  // The form sends `packEvents=false` before its checkbox's `true`: the last value is the choice.
  for (
    const name of [
      "universeId",
      "publishingKey",
      "topic",
      "packEvents",
      "messagesPerMinute",
    ] as const
  ) {
    if (fields[name] !== undefined) input[name] = last(fields[name]);
  }
  if (fields.clearPublishingKey !== undefined) {
    const flag = readFlag(fields.clearPublishingKey);
    input.clearPublishingKey = flag === null ? last(fields.clearPublishingKey) : flag;
  }
  return Object.keys(input).length > 0 ? input as EventSettingsInput : null;
}

/**
 * Validates every field first (400 `invalid_settings` naming each bad one, nothing saved), then
 * saves them all in one commit with the audit entry of `actor`; returns the new settings view.
 */
export async function saveProjectSettings(
  ctx: AppContext,
  project: Project,
  fields: ActionFields,
  options: { actor?: string } = {},
): Promise<SettingsView> {
  const problems = unknownFields(fields, (name) => SETTINGS_FIELDS.includes(name));
  const general = validateGeneral(fields, problems);
  const events = eventInput(fields);
  if (events) {
    try {
      validateEventSettings(events);
    } catch (error) {
      const found = problemsOf(error);
      if (!found) throw error;
      problems.push(...found);
    }
  }
  if (problems.length > 0) throw invalidSettings(problems);

  const secretEnc = general.clientSecret
    ? await encryptOauthClientSecret(ctx, project.id, general.clientSecret)
    : general.clientSecret;
  const connectSecretEnc = general.connect.clientSecret
    ? await encryptConnectClientSecret(ctx, project.id, general.connect.clientSecret)
    : general.connect.clientSecret;
  const prepared = events ? await prepareEventSettings(ctx, project.id, events) : null;
  const { actor } = options;
  const now = ctx.clock.now();
  const saved = await updateProject(ctx.kv, project.id, (p) => {
    const settings = {
      ...p.settings,
      ...(general.clientId !== undefined ? { oauthClientId: general.clientId } : {}),
      ...(secretEnc !== undefined ? { oauthClientSecretEnc: secretEnc } : {}),
      ...(general.lowSolBalance !== undefined ? { lowSolBalance: general.lowSolBalance } : {}),
      ...(general.connect.clientId !== undefined
        ? { connectClientId: general.connect.clientId }
        : {}),
      ...(connectSecretEnc !== undefined ? { connectClientSecretEnc: connectSecretEnc } : {}),
    };
    return {
      ...p,
      name: general.name ?? p.name,
      settings: prepared ? prepared.apply(settings) : settings,
    };
  }, {
    sealedUnder: secretEnc || connectSecretEnc ? ctx.keys.current.id : prepared?.sealedUnder,
    audit: actor === undefined ? undefined : (before, after) => {
      const changes = settingsChanges(before, after);
      if (Object.keys(changes).length === 0) return null;
      return {
        projectId: project.id,
        actor,
        action: "settings_saved",
        details: { changes },
        at: now,
      };
    },
  });
  if (!saved || saved.deletedAt !== null) throw projectNotFound();
  forgetEventSettings(ctx, project.id);
  log("info", "Project settings saved", {
    projectId: project.id,
    fields: Object.keys(fields).sort(),
  });
  return settingsView(saved, ctx.config);
}

/** The settings a save changed, for the audit log: plain values before and after, secrets only as set, replaced or cleared. */
function settingsChanges(before: Project, after: Project): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  if (before.name !== after.name) changes.name = { before: before.name, after: after.name };
  for (const field of SETTINGS_DRAFT_FIELDS) {
    if (field === "name") continue;
    const [was, now] = [before.settings[field] ?? null, after.settings[field] ?? null];
    if (was !== now) changes[field] = { before: was, after: now };
  }
  const [packed, packs] = [before.settings.packEvents === true, after.settings.packEvents === true];
  if (packed !== packs) changes.packEvents = { before: packed, after: packs };
  const secrets = {
    oauthClientSecret: "oauthClientSecretEnc",
    connectClientSecret: "connectClientSecretEnc",
    publishingKey: "publishingKeyEnc",
  };
  for (const [name, field] of Object.entries(secrets) as [string, "connectClientSecretEnc"][]) {
    const [was, now] = [before.settings[field] ?? null, after.settings[field] ?? null];
    if (was === now) continue;
    changes[name] = now === null ? "cleared" : was === null ? "set" : "replaced";
  }
  return changes;
}
