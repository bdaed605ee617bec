/** A project with a whole team, built through the dashboard's own routes: for role and audit tests. */
import type { Hono } from "hono";
import type { Config } from "../../lib/config.ts";
import type { MemberRole, Role } from "../../kv/members.ts";
import type { AppContext } from "../../lib/context.ts";
import type { Project } from "../../kv/projects.ts";
import { answerInvitation, handOverProject, inviteToProject } from "../../lib/projects/team.ts";
import { createTestApp, type TestApp } from "./test_app.ts";
import { createTestWallet } from "./sign_in.ts";
import {
  createKeyAs,
  createProjectAs,
  postJson,
  signInDeveloper,
  type TestDeveloper,
} from "./dashboard.ts";

/** Invites `address` as `role` through the team's JSON action, as `inviter`; throws unless 201. */
export async function inviteAs(
  app: Hono,
  inviter: TestDeveloper,
  invite: { projectId: string; address: string; role: MemberRole },
): Promise<void> {
  const res = await postJson(app, `/dashboard/projects/${invite.projectId}/members`, {
    address: invite.address,
    role: invite.role,
  }, { jar: inviter.jar });
  if (res.status !== 201) throw new Error(`Invite failed: ${await res.text()}`);
}

/** The invited `member`'s acceptance of their invitation to `projectId`, whatever its answer. */
export function acceptAs(app: Hono, member: TestDeveloper, projectId: string): Promise<Response> {
  return postJson(app, `/dashboard/invitations/${projectId}`, { accept: true }, {
    jar: member.jar,
  });
}

/** Invites a new wallet as `role` (by `inviter`), signs it in and accepts; returns its developer. */
export async function joinTeam(
  app: Hono,
  inviter: TestDeveloper,
  projectId: string,
  role: MemberRole,
): Promise<TestDeveloper> {
  const wallet = createTestWallet();
  await inviteAs(app, inviter, { projectId, address: wallet.address, role });
  const member = await signInDeveloper(app, wallet);
  const accepted = await acceptAs(app, member, projectId);
  if (accepted.status !== 200) throw new Error(`Accept failed: ${await accepted.text()}`);
  return member;
}

/** A project with an owner, an admin, a developer and a viewer, one outsider, a key and an invitation. */
export interface TeamWorld extends AsyncDisposable {
  t: TestApp;
  app: Hono;
  projectId: string;
  /** The project's name (a deletion names it). */
  projectName: string;
  keyId: string;
  /** A member of each role, and someone on no team. */
  as: Record<Role | "outsider", TestDeveloper>;
  /** An address invited as a viewer that has not answered. */
  invited: string;
}

/** Builds the team world on a fresh app. */
export async function startTeam(options: { config?: Partial<Config> } = {}): Promise<TeamWorld> {
  const t = await createTestApp(options);
  const owner = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, owner);
  const key = await createKeyAs(t.app, owner, project.id);
  const admin = await joinTeam(t.app, owner, project.id, "admin");
  const developer = await joinTeam(t.app, owner, project.id, "developer");
  const viewer = await joinTeam(t.app, admin, project.id, "viewer");
  const outsider = await signInDeveloper(t.app);
  const invited = createTestWallet().address;
  const res = await postJson(t.app, `/dashboard/projects/${project.id}/members`, {
    address: invited,
    role: "viewer",
  }, { jar: owner.jar });
  if (res.status !== 201) throw new Error(`Invite failed: ${await res.text()}`);
  return {
    t,
    app: t.app,
    projectId: project.id,
    projectName: project.name,
    keyId: key.id,
    as: { owner, admin, developer, viewer, outsider },
    invited,
    [Symbol.asyncDispose]: () => t.close(),
  };
}

/**
 * Hands `project` over from its creator to `to` through the team's own functions: invited as an
 * admin, accepting, then made the owner.
 */
export async function handOverTo(ctx: AppContext, project: Project, to: string): Promise<void> {
  const owner = { project, developer: project.createdBy, role: "owner" as const };
  await inviteToProject(ctx, owner, { address: to, role: "admin" });
  await answerInvitation(ctx, { developer: to, projectId: project.id, accept: true });
  await handOverProject(ctx, owner, to);
}
