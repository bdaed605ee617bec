/** A project's team: members and their roles, pending invitations, inviting, handing ownership over. */
import type { VNode } from "preact";
import { DashboardConfirmSubmit } from "../../islands/dashboard_confirm.tsx";
import type { Invitation } from "../../kv/invitations.ts";
import type { Holding } from "../../kv/member_holdings.ts";
import { holdingRef } from "../../lib/projects/withdrawals.ts";
import type { Member, MemberRole } from "../../kv/members.ts";
import { MAX_TEAM_SIZE } from "../../kv/team.ts";
import type { Project } from "../../kv/projects.ts";
import { roleAllows } from "../../lib/auth/roles.ts";
import { Island } from "../islands.tsx";
import { FlashFor, type FrameData, ProjectFrame } from "./frame.tsx";
import { formatTime, shortAddress } from "./format.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { Cell, ListHead } from "./cell.tsx";
import { AddressField } from "./address_field.tsx";

/** What the team page shows. */
interface TeamPageData extends FrameData {
  project: Project;
  members: Member[];
  invitations: Invitation[];
  /** What each member made that they hold only while their role allows, by address. */
  holdings: Map<string, Holding[]>;
}

const ROLE_TEXT: Record<MemberRole | "owner", string> = {
  owner: "everything, and only the owner exports the key, deletes or hands over the project",
  admin: "everything but exporting the key, deleting and handing over",
  developer: "API keys, settings, watches, test events; policy changes that tighten a limit",
  viewer: "reads every page, changes nothing",
};
const MEMBER_ROLES: readonly MemberRole[] = ["viewer", "developer", "admin"];

/** The team page body. */
export function TeamPage(data: TeamPageData): VNode {
  const { project, flash } = data;
  const base = projectPath(project.id);
  const role = data.role ?? "viewer";
  const manages = roleAllows(role, "team");
  const owns = roleAllows(role, "transfer");
  const draft = flash?.form === "invite" && flash.kind === "error" ? flash.draft ?? {} : {};
  const others = data.members.filter((m) => m.role !== "owner");
  return (
    <ProjectFrame data={data} project={project} tab="team">
      <section class="card" aria-labelledby="members-heading">
        <h2 id="members-heading">Members</h2>
        <p class="muted">
          Your role: <strong data-testid="my-role">{role}</strong> ({ROLE_TEXT[role]}).
        </p>
        <FlashFor flash={flash} form="members" />
        <table class="list stack members" data-testid="member-list">
          <ListHead columns={["Wallet", "Role", "Since", "Made"]} />
          <tbody>
            {data.members.map((member) => {
              const changed = manages && member.role !== "owner";
              const formId = `member-${member.address}`;
              return (
                <tr key={member.address} data-member={member.address}>
                  <Cell label="Wallet" mono>
                    {member.address}
                    {member.address === data.developer ? " (you)" : ""}
                  </Cell>
                  <Cell label="Role">
                    {changed
                      ? (
                        <form
                          id={formId}
                          method="post"
                          action={`${base}/members/${member.address}/role`}
                          class="inline"
                        >
                          <select name="role" aria-label={`Role of ${member.address}`}>
                            {MEMBER_ROLES.map((r) => (
                              <option key={r} value={r} selected={r === member.role}>{r}</option>
                            ))}
                          </select>{" "}
                          <button type="submit" class="secondary">Change</button>
                        </form>
                      )
                      : member.role}
                  </Cell>
                  <Cell label="Since">{formatTime(member.addedAt)}</Cell>
                  <Cell label="Made">
                    <MadeList
                      holdings={data.holdings.get(member.address) ?? []}
                      form={changed && member.address !== data.developer ? formId : null}
                    />
                  </Cell>
                  <Cell label="">
                    {changed && member.address !== data.developer && (
                      <Island
                        component={DashboardConfirmSubmit}
                        props={{
                          label: "Remove",
                          question: `Remove ${member.address} from ${project.name}? ` +
                            "What they made is revoked unless ticked to keep.",
                          className: "secondary",
                          testId: "remove-member",
                          form: formId,
                          formAction: `${base}/members/${member.address}/remove`,
                        }}
                      />
                    )}
                    {member.role !== "owner" && member.address === data.developer && (
                      <form method="post" action={`${base}/leave`} class="inline">
                        <Island
                          component={DashboardConfirmSubmit}
                          props={{
                            label: "Leave",
                            question: `Leave ${project.name}? Only an admin can invite you back.`,
                            className: "secondary",
                            testId: "leave-project",
                          }}
                        />
                      </form>
                    )}
                  </Cell>
                </tr>
              );
            })}
          </tbody>
        </table>
        <p class="hint">
          A member holds what they made only while their role could make it: removing them, or a
          role without API keys or webhooks, revokes their keys and endpoints unless ticked to keep,
          and withdraws the invitations they may no longer send.
        </p>
      </section>

      <section class="card" aria-labelledby="invitations-heading">
        <h2 id="invitations-heading">Pending invitations</h2>
        {data.invitations.length === 0
          ? <p class="empty">No pending invitations.</p>
          : (
            <table class="list stack" data-testid="invitation-list">
              <ListHead columns={["Wallet", "Role", "Invited by", "Expires"]} />
              <tbody>
                {data.invitations.map((invitation) => (
                  <tr key={invitation.address}>
                    <Cell label="Wallet" mono>{invitation.address}</Cell>
                    <Cell label="Role">{invitation.role}</Cell>
                    <Cell label="Invited by" mono>{shortAddress(invitation.invitedBy)}</Cell>
                    <Cell label="Expires">{formatTime(invitation.expiresAt)}</Cell>
                    <Cell label="">
                      {manages && (
                        <form
                          method="post"
                          action={`${base}/invitations/${invitation.address}/revoke`}
                          class="inline"
                        >
                          <button type="submit" class="secondary">Cancel invitation</button>
                        </form>
                      )}
                    </Cell>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </section>

      {manages && (
        <section class="card" aria-labelledby="invite-heading">
          <h2 id="invite-heading">Invite a member</h2>
          <p class="muted">
            {data.members.length + data.invitations.length} of {MAX_TEAM_SIZE}{" "}
            members and invitations. The invited wallet accepts by signing in to this dashboard; an
            invitation waits 7 days.
          </p>
          <FlashFor flash={flash} form="invite" />
          <form method="post" action={`${base}/members`} data-testid="invite-member">
            <div class="grid">
              <div>
                <AddressField
                  id="invite-address"
                  name="address"
                  label="Wallet address"
                  value={String(draft.address ?? "")}
                  refused={{ flash, form: "invite" }}
                />
              </div>
              <div>
                <label for="invite-role">Role</label>
                <select id="invite-role" name="role">
                  {MEMBER_ROLES.map((r) => (
                    <option key={r} value={r} selected={r === (draft.role ?? "developer")}>
                      {r}: {ROLE_TEXT[r]}
                    </option>
                  ))}
                </select>
              </div>
            </div>
            <div class="actions">
              <button type="submit">Invite</button>
            </div>
          </form>
        </section>
      )}

      {owns && (
        <section class="card" aria-labelledby="transfer-heading">
          <h2 id="transfer-heading">Hand the project over</h2>
          <p>
            The new owner must be a member and own fewer than 5 projects. You stay on as an admin.
          </p>
          <FlashFor flash={flash} form="transfer" />
          {others.length === 0
            ? <p class="empty">Invite the new owner first.</p>
            : (
              <form method="post" action={`${base}/transfer`} data-testid="transfer-project">
                <label for="transfer-to">New owner</label>
                <select id="transfer-to" name="address">
                  {others.map((m) => (
                    <option key={m.address} value={m.address}>{m.address} ({m.role})</option>
                  ))}
                </select>
                <div class="actions">
                  <Island
                    component={DashboardConfirmSubmit}
                    props={{
                      label: "Hand over",
                      question: `Hand ${project.name} over? Only the new owner can give it back.`,
                      className: "danger",
                      testId: "confirm-transfer",
                    }}
                  />
                </div>
              </form>
            )}
        </section>
      )}
    </ProjectFrame>
  );
}

// What a member made; with the id of their change form, each key and endpoint can be kept.
function MadeList({ holdings, form }: { holdings: Holding[]; form: string | null }): VNode {
  if (holdings.length === 0) return <span class="muted">Nothing</span>;
  return (
    <ul class="made-list" data-testid="member-made">
      {holdings.map((holding) => {
        const ref = holdingRef(holding);
        const keepable = form !== null && holding.kind !== "invitation";
        return (
          <li key={ref}>
            {keepable
              ? (
                <label class="check">
                  <input type="checkbox" name="keep" value={ref} form={form} />
                  <span>
                    Keep <HoldingText holding={holding} />
                  </span>
                </label>
              )
              : <HoldingText holding={holding} />}
          </li>
        );
      })}
    </ul>
  );
}

function HoldingText({ holding }: { holding: Holding }): VNode {
  switch (holding.kind) {
    case "key":
      return (
        <span>
          API key <span class="mono">{holding.key.preview}…</span>
        </span>
      );
    case "endpoint":
      return (
        <span>
          Webhook <span class="mono">{holding.endpoint.url}</span>
        </span>
      );
    case "invitation":
      return (
        <span>
          Invitation of <span class="mono">{shortAddress(holding.invitation.address)}</span> as{" "}
          {holding.invitation.role}
        </span>
      );
  }
}
