/** How the audit log page names each action and sums an entry up in one line. */
import type { AuditAction, AuditEntry } from "../../kv/audit_log.ts";
import { shortAddress } from "./format.ts";

/** A short label of each action, for the filter and the table. */
export const AUDIT_LABELS: Record<AuditAction, string> = {
  signed_in: "Signed in",
  project_created: "Project created",
  project_deleted: "Project deleted",
  key_created: "API key created",
  key_revoked: "API key revoked",
  wallet_created: "Managed wallet created",
  settings_saved: "Settings saved",
  policy_saved: "Policy saved",
  watch_added: "Watch added",
  watch_removed: "Watch removed",
  ping_sent: "Test event sent",
  member_invited: "Member invited",
  invitation_revoked: "Invitation withdrawn",
  invitation_accepted: "Invitation accepted",
  invitation_declined: "Invitation declined",
  member_role_changed: "Role changed",
  member_removed: "Member removed",
  member_left: "Member left",
  ownership_transferred: "Ownership handed over",
  withdrawal_requested: "Withdrawal",
  reward_cancelled: "Reward cancelled",
  key_exported: "Wallet key exported",
  webhook_endpoint_added: "Webhook endpoint added",
  webhook_endpoint_removed: "Webhook endpoint removed",
  webhook_secret_rotated: "Webhook secret rotated",
  webhook_test_sent: "Webhook test sent",
  webhook_delivery_replayed: "Webhook delivery replayed",
  roblox_connected: "Game connected with Roblox",
  roblox_universe_chosen: "Experience chosen",
  roblox_disconnected: "Game disconnected",
  roblox_connection_lost: "Roblox connection lost",
  game_key_installed: "API key installed in the game",
  servers_restarted: "Game servers restarted",
  game_key_retired: "Replaced game key revoked",
};

/**
 * One line saying what the entry changed (the details themselves are shown beside it), and whose
 * it was when it went with its maker's role.
 */
export function describeAuditEntry(entry: AuditEntry): string {
  const madeBy = entry.details.madeBy;
  const what = summaryOf(entry);
  return typeof madeBy === "string" ? `${what}, made by ${shortAddress(madeBy)}` : what;
}

function summaryOf(entry: AuditEntry): string {
  const d = entry.details as Record<string, unknown>;
  const text = (name: string) => String(d[name] ?? "");
  const who = (name: string) => shortAddress(text(name));
  switch (entry.action) {
    case "project_created":
      return `Created ${text("name")} on ${text("cluster")}`;
    case "key_created":
      return `${text("preview")}… with ${(d.scopes as string[] | undefined)?.join(" and ")}`;
    case "key_revoked":
      return `${text("preview")}…`;
    case "wallet_created":
      return text("address");
    case "settings_saved":
      return Object.keys((d.changes as object | undefined) ?? {}).join(", ");
    case "watch_added":
    case "watch_removed":
      return `${text("name")}: ${text("address")}`;
    case "member_invited":
      return `${who("address")} as ${text("role")}`;
    case "invitation_revoked":
    case "member_removed":
      return `${who("address")} (${text("role")})`;
    case "invitation_accepted":
    case "invitation_declined":
    case "member_left":
      return `as ${text("role")}`;
    case "member_role_changed":
      return `${who("address")}: ${text("before")} to ${text("after")}`;
    case "ownership_transferred":
      return `to ${who("to")}`;
    case "withdrawal_requested":
      return `${text("summary")} to ${who("recipient")}`;
    case "reward_cancelled":
      return `${text("key")}: ${text("amount")} for player ${text("userId")}`;
    case "webhook_endpoint_added":
    case "webhook_endpoint_removed":
    case "webhook_test_sent":
      return text("url");
    case "webhook_secret_rotated":
      return `${text("url")}${d.droppedPrevious ? ", the old secret stopped at once" : ""}`;
    case "webhook_delivery_replayed":
      return `${text("replayOf")} to ${text("url")}`;
    case "roblox_connected":
    case "roblox_universe_chosen":
    case "roblox_disconnected":
    case "roblox_connection_lost":
      return d.universeId ? `universe ${text("universeId")}` : "";
    case "game_key_installed":
    case "game_key_retired":
      return `${text("preview")}… as secret ${text("secretId")}`;
    case "servers_restarted":
      return `universe ${text("universeId")}, ${text("bleedOffMinutes")} minutes to move players`;
    default:
      return "";
  }
}
