/** zod schemas of `ServiceEvent` and `RecordedEvent`, so events stored inside job payloads are validated when read back. */
import { z } from "zod";
import {
  type RecordedEvent,
  type ServiceEvent,
  TX_KINDS,
  TX_ROUTE_KINDS,
} from "../../core/events.ts";

const userId = z.number().int().positive();
const reward = {
  key: z.string().min(1),
  userId,
  kind: z.enum(TX_ROUTE_KINDS),
  mint: z.string().nullable(),
  amount: z.string().min(1),
};

/** Validates one `ServiceEvent`. */
const serviceEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("wallet_linked"), userId, address: z.string().min(1) }),
  z.object({ type: z.literal("wallet_unlinked"), userId, address: z.string().min(1) }),
  z.object({
    type: z.literal("tx"),
    key: z.string().min(1),
    kind: z.enum(TX_KINDS),
    status: z.enum(["confirmed", "failed"]),
    signature: z.string().nullable(),
    userId: userId.nullable(),
    error: z.string().nullable(),
  }),
  z.object({
    type: z.literal("watch"),
    name: z.string().min(1).max(32),
    address: z.string().min(1),
    signature: z.string().min(1),
    slot: z.number().int().nonnegative(),
    failed: z.boolean(),
  }),
  z.object({ type: z.literal("ping"), at: z.number().int() }),
  z.object({ type: z.literal("reward_held"), ...reward, expiresAt: z.number().int() }),
  z.object({
    type: z.literal("reward_paid"),
    ...reward,
    address: z.string().min(1),
    signature: z.string().min(1),
  }),
  z.object({ type: z.literal("reward_expired"), ...reward }),
  z.object({ type: z.literal("reward_cancelled"), ...reward }),
]);

/** Validates a `RecordedEvent`: an event with its feed id and creation time. */
export const recordedEventSchema = z.intersection(
  serviceEventSchema,
  z.object({ id: z.string().regex(/^[1-9][0-9]*$/), createdAt: z.number().int() }),
);

// Compile-time guard: the schema and the shared type must describe the same events.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _sameAsServiceEvent: Same<z.infer<typeof serviceEventSchema>, ServiceEvent> = true;
void _sameAsServiceEvent;
const _sameAsRecordedEvent: Same<z.infer<typeof recordedEventSchema>, RecordedEvent> = true;
void _sameAsRecordedEvent;
