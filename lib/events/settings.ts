/**
 * Event settings of a project (universe ID, publishing key, topic, and the two extensions of the
 * spec: packing and a cap on messages a minute, `publisher.ts`): the rule that turns events on,
 * and validation and saving for the dashboard.
 */
import {
  DEFAULT_EVENT_TOPIC,
  getProject,
  type Project,
  type ProjectSettings,
  updateProject,
} from "../../kv/projects.ts";
import type { EventContext } from "./runtime.ts";
import { createPublisher } from "../../kv/event_publishers.ts";
import { encryptSecret } from "../crypto/encryption.ts";
import { ApiError, projectNotFound } from "../../core/api_error.ts";
import { log } from "../../core/log.ts";
import type { PublishTarget } from "./runtime.ts";

const MAX_KEY_LENGTH = 4_096;
/** The highest cap: Open Cloud takes 5,000 publishes a minute per API key owner (platforms.md). */
export const MAX_MESSAGES_PER_MINUTE = 5_000;

// Events are on while the game is connected with Roblox (its grant working and its experience
// chosen), or, without a connection, while both the universe ID and the publishing key are
// saved: the target they go to, or null while one is missing. A lost grant turns them off until
// it is reconnected (or the connection removed).
function targetOf(settings: ProjectSettings): PublishTarget | null {
  const { universeId, publishingKeyEnc, topic, robloxConnection: connection } = settings;
  const pacing = {
    pack: settings.packEvents === true,
    messagesPerMinute: settings.messagesPerMinute ?? null,
  };
  if (connection) {
    return connection.status === "active" && connection.universeId
      ? {
        auth: "grant",
        universeId: connection.universeId,
        grantId: connection.grantId,
        topic,
        ...pacing,
      }
      : null;
  }
  return universeId && publishingKeyEnc
    ? { auth: "key", universeId, publishingKeyEnc, topic, ...pacing }
    : null;
}

/** True when the project's events go through its publisher (`publisher.ts`), not one job each. */
export function publishesThroughPublisher(target: PublishTarget): boolean {
  return target.pack || target.messagesPerMinute !== null;
}

/** True when events are published (a working connection, or both event settings saved). */
export function eventsEnabled(project: Project): boolean {
  return targetOf(project.settings) !== null;
}

/** The publish target of a project, or null when events are off (a setting missing) or it is deleted. */
export function publishTargetOf(project: Project | null): PublishTarget | null {
  return project && project.deletedAt === null ? targetOf(project.settings) : null;
}

/** The project's publish target (null when events are off), from this instance's cache: at most 10 s old. */
export function publishTargetFor(
  ctx: EventContext,
  projectId: string,
): Promise<PublishTarget | null> {
  return ctx.events.targets.get(
    projectId,
    async () => publishTargetOf(await getProject(ctx.kv, projectId)),
  );
}

/**
 * What the dashboard sends. Omitted fields keep their value. `universeId: ""` clears it;
 * `publishingKey: ""` keeps the saved key (it is never shown again); `clearPublishingKey: true`
 * removes it; `topic: ""` resets it to `svc`.
 */
export interface EventSettingsInput {
  universeId?: string | null;
  publishingKey?: string | null;
  clearPublishingKey?: boolean;
  topic?: string | null;
  /** Pack several events into one message (`true`/`false`, or the form's `"true"`/`"false"`). */
  packEvents?: boolean | string | null;
  /** Whole messages a minute, 1 to 5,000 (a number or digits); `""` or null: no cap. */
  messagesPerMinute?: number | string | null;
}

/** A validated change: `undefined` means "keep". */
interface EventSettingsChange {
  universeId?: string | null;
  /** Plaintext key to save, or null to clear. */
  publishingKey?: string | null;
  topic?: string;
  packEvents?: boolean;
  messagesPerMinute?: number | null;
}

/** What the dashboard may show: the key only as "set" or not. */
export interface EventSettingsView {
  universeId: string | null;
  topic: string;
  publishingKeySet: boolean;
  /** True when both settings exist, so events are published. */
  events: boolean;
  packEvents: boolean;
  /** Null: no cap. */
  messagesPerMinute: number | null;
}

/** Validates dashboard input; throws 400 `invalid_settings` listing each bad field as `field: problem; ...`. */
export function validateEventSettings(input: EventSettingsInput): EventSettingsChange {
  const problems: string[] = [];
  const change: EventSettingsChange = {};
  const text = (field: keyof EventSettingsInput): string | null | undefined => {
    const value = input[field];
    if (value === undefined || value === null) return value;
    if (typeof value !== "string") {
      problems.push(`${field}: must be text`);
      return undefined;
    }
    return value.trim();
  };

  const universeId = text("universeId");
  if (universeId === "" || universeId === null) change.universeId = null;
  else if (universeId !== undefined) {
    if (!/^\d+$/.test(universeId)) {
      problems.push("universeId: must contain digits only (the universe ID, not a place ID)");
    } else if (universeId.length > 20) problems.push("universeId: must be at most 20 digits");
    else change.universeId = universeId;
  }

  const key = text("publishingKey");
  const clear = input.clearPublishingKey;
  if (clear !== undefined && typeof clear !== "boolean") {
    problems.push("clearPublishingKey: must be true or false");
  } else if (clear && key) {
    problems.push("publishingKey: cannot be both given and cleared");
  } else if (clear) change.publishingKey = null;
  else if (key) {
    if (key.length > MAX_KEY_LENGTH) {
      problems.push(`publishingKey: must be at most ${MAX_KEY_LENGTH} characters`);
    } else if (!/^[\x21-\x7e]+$/.test(key)) {
      problems.push("publishingKey: must be one line of printable characters without spaces");
    } else change.publishingKey = key;
  }

  const topic = text("topic");
  if (topic === "" || topic === null) change.topic = DEFAULT_EVENT_TOPIC;
  else if (topic !== undefined) {
    if (!/^[A-Za-z0-9_-]{1,80}$/.test(topic)) {
      problems.push("topic: must be 1 to 80 letters, digits, - or _");
    } else change.topic = topic;
  }

  const pack = input.packEvents;
  if (pack === true || pack === "true") change.packEvents = true;
  else if (pack === false || pack === "false") change.packEvents = false;
  else if (pack !== undefined && pack !== null) problems.push("packEvents: must be true or false");

  const cap = input.messagesPerMinute;
  const capText = typeof cap === "string" ? cap.trim() : cap;
  if (capText === "" || capText === null) change.messagesPerMinute = null;
  else if (capText !== undefined) {
    const value = typeof capText === "string" && /^\d{1,9}$/.test(capText)
      ? Number(capText)
      : capText;
    if (
      typeof value !== "number" || !Number.isInteger(value) || value < 1 ||
      value > MAX_MESSAGES_PER_MINUTE
    ) {
      problems.push(
        `messagesPerMinute: must be a whole number from 1 to ${MAX_MESSAGES_PER_MINUTE}, or empty for no cap`,
      );
    } else change.messagesPerMinute = value;
  }

  if (problems.length > 0) throw new ApiError("invalid_settings", problems.join("; "));
  return change;
}

/** The settings as the dashboard shows them. */
export function eventSettingsView(project: Project): EventSettingsView {
  return {
    universeId: project.settings.universeId,
    topic: project.settings.topic,
    publishingKeySet: project.settings.publishingKeyEnc !== null,
    events: eventsEnabled(project),
    packEvents: project.settings.packEvents === true,
    messagesPerMinute: project.settings.messagesPerMinute ?? null,
  };
}

/** A validated change of the event settings, its key sealed, to apply to a project's settings. */
interface PreparedEventSettings {
  apply(settings: ProjectSettings): ProjectSettings;
  /** The key id a new publishing key is sealed under; undefined when none is saved. */
  sealedUnder: string | undefined;
  /** True when the publishing key is replaced or cleared. */
  keyChanged: boolean;
}

/**
 * Validates event settings (400 `invalid_settings`) and seals a new publishing key, as a
 * publishing key of this project, for a save that may change other settings in the same commit.
 * A change turning packing or the cap on makes the project's publisher record first
 * (`createPublisher`), before the save commits: the minute sweep restarts the loop of every project
 * with a record, so the loop runs even if no instance starts it after the first marked commit.
 */
export async function prepareEventSettings(
  ctx: EventContext,
  projectId: string,
  input: EventSettingsInput,
): Promise<PreparedEventSettings> {
  const change = validateEventSettings(input);
  const keyEnc = change.publishingKey
    ? await encryptSecret(ctx.keys, change.publishingKey, {
      purpose: "publishing_key",
      context: projectId,
    })
    : change.publishingKey;
  if (change.packEvents === true || typeof change.messagesPerMinute === "number") {
    await createPublisher(ctx.kv, projectId);
  }
  return {
    apply: (settings) => ({
      ...settings,
      ...(change.universeId !== undefined ? { universeId: change.universeId } : {}),
      ...(keyEnc !== undefined ? { publishingKeyEnc: keyEnc } : {}),
      ...(change.topic !== undefined ? { topic: change.topic } : {}),
      ...(change.packEvents !== undefined ? { packEvents: change.packEvents } : {}),
      ...(change.messagesPerMinute !== undefined
        ? { messagesPerMinute: change.messagesPerMinute }
        : {}),
    }),
    sealedUnder: keyEnc ? ctx.keys.current.id : undefined,
    keyChanged: keyEnc !== undefined,
  };
}

/** Makes a save of the event settings apply at once on this instance (within 10 s on the others). */
export function forgetEventSettings(ctx: EventContext, projectId: string): void {
  ctx.events.targets.delete(projectId);
  ctx.apiKeys.forgetProject(projectId);
}

/** Validates and saves a project's event settings alone (the dashboard saves them with the rest). */
export async function saveEventSettings(
  ctx: EventContext,
  projectId: string,
  input: EventSettingsInput,
): Promise<EventSettingsView> {
  const current = await getProject(ctx.kv, projectId);
  if (!current || current.deletedAt !== null) {
    throw projectNotFound();
  }
  const prepared = await prepareEventSettings(ctx, projectId, input);
  const saved = await updateProject(ctx.kv, projectId, (project) => ({
    ...project,
    settings: prepared.apply(project.settings),
  }), { sealedUnder: prepared.sealedUnder });
  if (!saved) throw projectNotFound();
  forgetEventSettings(ctx, projectId);
  const view = eventSettingsView(saved);
  log("info", "Event settings saved", {
    projectId,
    universeId: view.universeId,
    topic: view.topic,
    events: view.events,
    packEvents: view.packEvents,
    messagesPerMinute: view.messagesPerMinute,
    keyChanged: prepared.keyChanged,
  });
  return view;
}
