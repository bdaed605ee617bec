// Reading JSON-RPC params the way the node's serde does, with its error texts.
import { base58 } from "@scure/base";
import { commitmentSlot } from "./clock.ts";
import { invalidParam, invalidParams, minContextSlotNotReached } from "./rpc_errors.ts";
import type { Commitment, LedgerState } from "./state.ts";

export type Config = Record<string, unknown>;

/** The node's context object of wrapped answers. */
export const API_VERSION = "2.3.13";

export function context(slot: number) {
  return { apiVersion: API_VERSION, slot };
}

export function param<T = unknown>(params: unknown[], index: number, what: string): T {
  if (params.length <= index || params[index] === undefined) {
    throw invalidParams(`Invalid params: invalid length ${params.length}, expected ${what}.`);
  }
  return params[index] as T;
}

export function configParam(params: unknown[], index: number): Config {
  const value = params[index];
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw invalidParams(
      `Invalid params: invalid type: ${typeName(value)}, expected a config object.`,
    );
  }
  return value as Config;
}

function typeName(value: unknown): string {
  if (typeof value === "string") return `string "${value}"`;
  if (typeof value === "number" || typeof value === "bigint") return `integer \`${value}\``;
  if (Array.isArray(value)) return "sequence";
  return typeof value === "object" ? "map" : typeof value;
}

/** A base58 public key; the node answers "Invalid param: Invalid" or "WrongSize". */
export function pubkeyParam(value: unknown): string {
  if (typeof value !== "string") {
    throw invalidParams(`Invalid params: invalid type: ${typeName(value)}, expected a string.`);
  }
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(value);
  } catch {
    throw invalidParam("Invalid");
  }
  if (bytes.length !== 32) throw invalidParam("WrongSize");
  return value;
}

export function signatureParam(value: unknown): string {
  if (typeof value !== "string") {
    throw invalidParams(`Invalid params: invalid type: ${typeName(value)}, expected a string.`);
  }
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(value);
  } catch {
    throw invalidParam("Invalid");
  }
  if (bytes.length !== 64) throw invalidParam("WrongSize");
  return value;
}

export function commitmentOf(config: Config, key = "commitment"): Commitment | undefined {
  const value = config[key];
  if (value === undefined || value === null) return undefined;
  switch (value) {
    case "processed":
    case "recent":
      return "processed";
    case "confirmed":
    case "single":
    case "singleGossip":
      return "confirmed";
    case "finalized":
    case "max":
    case "root":
      return "finalized";
  }
  throw invalidParams(
    `Invalid params: unknown variant \`${value}\`, expected one of \`processed\`, \`confirmed\`, \`finalized\`.`,
  );
}

/** The slot of the bank a request reads, checking minContextSlot. */
export function bankSlot(state: LedgerState, config: Config): number {
  return reachedMinContextSlot(commitmentSlot(state, commitmentOf(config)), config);
}

/** `slot`, or the node's -32016 answer when the request asks for a later minContextSlot. */
export function reachedMinContextSlot(slot: number, config: Config): number {
  const min = config.minContextSlot;
  if (min !== undefined && min !== null && Number(min) > slot) {
    throw minContextSlotNotReached(slot);
  }
  return slot;
}

export function atLeastConfirmed(config: Config): Commitment {
  const commitment = commitmentOf(config) ?? "finalized";
  if (commitment === "processed") {
    throw invalidParams("Method does not support commitment below `confirmed`");
  }
  return commitment;
}

export function integerParam(value: unknown, what: string): number {
  if (typeof value === "bigint") return Number(value);
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw invalidParams(`Invalid params: invalid type: ${typeName(value)}, expected ${what}.`);
  }
  return value;
}
