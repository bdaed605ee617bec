/** What one store migration is, for the steps of `lib/migrations/`. */
import type { Clock } from "../../core/clock.ts";
import type { SecretKeys } from "../crypto/secret_keys.ts";

/** What a step may use: the store, the clock, and the SECRETs of this instance. */
export interface MigrationDeps {
  kv: Deno.Kv;
  clock: Clock;
  keys: SecretKeys;
}

/**
 * What a step did: how many records it changed, and whether none is left in the old shape (a
 * value sealed under a SECRET this instance lacks stays until an instance that has it starts).
 */
export interface StepResult {
  changed: number;
  complete: boolean;
}

/**
 * One migration: turns every record of one old shape into the current one. It must be idempotent
 * and safe while other instances run it at once (each change a commit checked on what it read).
 */
export type MigrationStep = (deps: MigrationDeps) => Promise<StepResult>;
