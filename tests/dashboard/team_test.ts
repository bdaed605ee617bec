/** Teams: invitations accepted by the invited wallet, roles, leaving, handing over, limits. */
import { getProject } from "../../kv/projects.ts";
import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import {
  createProjectAs,
  getPage,
  postForm,
  postJson,
  signInDeveloper,
} from "../support/dashboard.ts";
import { createTestWallet } from "../support/sign_in.ts";
import { joinTeam, startTeam } from "../support/team.ts";
import { getMemberEntry, listMembers } from "../../kv/members.ts";
import { MAX_TEAM_SIZE } from "../../kv/team.ts";
import { createTestApp } from "../support/test_app.ts";

const path = (projectId: string, rest = "") => `/dashboard/projects/${projectId}${rest}`;

Deno.test("An invitation is answered by the invited wallet once signed in, and by no one else", async () => {
  await using t = await createTestApp();
  const owner = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, owner, { name: "Shared" });
  const wallet = createTestWallet();

  // Given: the owner invites a wallet as a developer
  const invite = await postJson(t.app, path(project.id, "/members"), {
    address: wallet.address,
    role: "developer",
  }, { jar: owner.jar });
  assert.equal(invite.status, 201);

  // When: someone else tries to accept it, then the invited wallet signs in
  const other = await signInDeveloper(t.app);
  const stolen = await postJson(t.app, `/dashboard/invitations/${project.id}`, { accept: true }, {
    jar: other.jar,
  });
  await assertErrorCode(stolen, 404, "invitation_not_found");
  const invitee = await signInDeveloper(t.app, wallet);
  const list = await (await getPage(t.app, "/dashboard", invitee.jar)).text();
  assert.ok(list.includes("Shared</strong> invites you as <strong>developer"), list);
  // The page is not theirs until they accept.
  assert.equal((await getPage(t.app, path(project.id), invitee.jar)).status, 404);
  const accepted = await postForm(t.app, `/dashboard/invitations/${project.id}`, {
    accept: "true",
  }, { jar: invitee.jar });

  // Then: they are a developer of the project, and it is in their list
  assert.deepEqual([accepted.status, accepted.headers.get("location")], [303, path(project.id)]);
  assert.equal((await getMemberEntry(t.kv, project.id, wallet.address)).value?.role, "developer");
  const now = await (await getPage(t.app, "/dashboard", invitee.jar)).text();
  assert.ok(now.includes(">Shared</a>") && now.includes(">developer</span>"));
  assert.ok(!now.includes('data-testid="invitations"'));
  await assertErrorCode(
    await postJson(t.app, `/dashboard/invitations/${project.id}`, { accept: true }, {
      jar: invitee.jar,
    }),
    404,
    "invitation_not_found",
  );
});

Deno.test("A declined or expired invitation joins nobody", async () => {
  await using t = await createTestApp();
  const owner = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, owner);
  const [declining, late] = [createTestWallet(), createTestWallet()];
  for (const wallet of [declining, late]) {
    const res = await postJson(t.app, path(project.id, "/members"), {
      address: wallet.address,
      role: "viewer",
    }, { jar: owner.jar });
    assert.equal(res.status, 201);
  }
  const decliner = await signInDeveloper(t.app, declining);
  const declined = await postJson(t.app, `/dashboard/invitations/${project.id}`, {
    accept: false,
  }, { jar: decliner.jar });
  assert.deepEqual(await declined.json(), { ok: true, accepted: false, role: "viewer" });

  // Seven days later the other invitation is gone too.
  t.clock.advance(7 * 24 * 3_600_000 + 1);
  const lateDev = await signInDeveloper(t.app, late);
  await assertErrorCode(
    await postJson(t.app, `/dashboard/invitations/${project.id}`, { accept: true }, {
      jar: lateDev.jar,
    }),
    404,
    "invitation_not_found",
  );
  assert.deepEqual((await listMembers(t.kv, project.id)).map((m) => m.role), ["owner"]);
});

Deno.test("Members and invitations stop at the team's limit, even invited all at once", async () => {
  await using t = await createTestApp();
  const owner = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, owner);
  const answers = await Promise.all(
    Array.from({ length: MAX_TEAM_SIZE + 5 }, () =>
      postJson(t.app, path(project.id, "/members"), {
        address: createTestWallet().address,
        role: "viewer",
      }, { jar: owner.jar })),
  );
  const statuses = answers.map((r) => r.status);
  // The owner takes one place.
  assert.equal(statuses.filter((s) => s === 201).length, MAX_TEAM_SIZE - 1);
  const refused = answers.find((r) => r.status !== 201)!;
  await assertErrorCode(refused, 403, "team_limit_reached");
  for (const res of answers) if (!res.bodyUsed) await res.body?.cancel();
});

Deno.test("The owner cannot be removed, demoted or leave; a member who is already one is not invited; a stranger is no member", async () => {
  await using w = await startTeam();
  const { owner, admin } = w.as;
  for (
    const [rest, body] of [
      [`/members/${owner.address}/remove`, undefined],
      [`/members/${owner.address}/role`, { role: "viewer" }],
      ["/leave", undefined],
    ] as const
  ) {
    const jar = rest === "/leave" ? owner.jar : admin.jar;
    await assertErrorCode(
      await postJson(w.app, path(w.projectId, rest), body, { jar }),
      409,
      "owner_unchanged",
    );
  }
  await assertErrorCode(
    await postJson(w.app, path(w.projectId, "/members"), {
      address: admin.address,
      role: "viewer",
    }, { jar: owner.jar }),
    409,
    "member_exists",
  );
  // An address that is not a member: its role cannot change, it cannot be removed
  const stranger = "Vote111111111111111111111111111111111111111";
  for (
    const [rest, body] of [
      [`/members/${stranger}/remove`, undefined],
      [`/members/${stranger}/role`, { role: "viewer" }],
    ] as const
  ) {
    await assertErrorCode(
      await postJson(w.app, path(w.projectId, rest), body, { jar: owner.jar }),
      404,
      "member_not_found",
    );
  }
  await assertErrorCode(
    await postJson(w.app, path(w.projectId, "/members"), { address: "nope", role: "owner" }, {
      jar: owner.jar,
    }),
    400,
    "invalid_settings",
  );
});

Deno.test("Handing a project over moves ownership and the owned counts; the new owner must have room", async () => {
  await using t = await createTestApp();
  const owner = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, owner, { name: "Handed" });
  const heir = await joinTeam(t.app, owner, project.id, "developer");
  // The heir owns five projects already: no room.
  for (let i = 0; i < 5; i++) await createProjectAs(t.app, heir);
  await assertErrorCode(
    await postJson(t.app, path(project.id, "/transfer"), { address: heir.address }, {
      jar: owner.jar,
    }),
    403,
    "project_limit_reached",
  );
  // One of theirs deleted, they have room.
  const theirs = (await (await getPage(t.app, "/dashboard", heir.jar)).text()).match(
    /\/dashboard\/projects\/([0-9A-Z]{26})"/g,
  )!;
  const someId = theirs.map((m) => m.slice(20, 46)).find((id) => id !== project.id)!;
  assert.equal(
    (await postJson(t.app, path(someId, "/delete"), {
      name: (await getProject(t.kv, someId))!.name,
    }, { jar: heir.jar })).status,
    200,
  );
  const handed = await postJson(t.app, path(project.id, "/transfer"), { address: heir.address }, {
    jar: owner.jar,
  });
  assert.equal(handed.status, 200);

  const roles = Object.fromEntries(
    (await listMembers(t.kv, project.id)).map((m) => [m.address, m.role]),
  );
  assert.deepEqual(roles, { [owner.address]: "admin", [heir.address]: "owner" });
  // The former owner may no longer delete it; the new owner may, and the old one owns nothing.
  await assertErrorCode(
    await postJson(t.app, path(project.id, "/delete"), { name: "Handed" }, { jar: owner.jar }),
    403,
    "insufficient_role",
  );
  assert.equal(
    (await postJson(t.app, path(project.id, "/delete"), { name: "Handed" }, { jar: heir.jar }))
      .status,
    200,
  );
  assert.equal((await t.kv.get(["project_counts_by_developer", owner.address])).value, 0);
  assert.equal((await t.kv.get(["project_counts_by_developer", heir.address])).value, 4);
});

Deno.test("The 5-project limit counts owned projects: projects shared with a developer do not", async () => {
  await using t = await createTestApp();
  const other = await signInDeveloper(t.app);
  const shared = await createProjectAs(t.app, other);
  const dev = await joinTeam(t.app, other, shared.id, "admin");
  for (let i = 0; i < 5; i++) await createProjectAs(t.app, dev);
  await assertErrorCode(
    await postJson(t.app, "/dashboard/projects", { name: "Sixth", cluster: "devnet" }, {
      jar: dev.jar,
    }),
    403,
    "project_limit_reached",
  );
  const list = await (await getPage(t.app, "/dashboard", dev.jar)).text();
  assert.equal(list.match(/data-testid="project-role"/g)?.length, 6);
  assert.ok(list.includes("You own 5 of 5"));
});

Deno.test("A deleted project leaves every member's list and its invitations end", async () => {
  await using w = await startTeam();
  assert.equal(
    (await postJson(w.app, path(w.projectId, "/delete"), { name: w.projectName }, {
      jar: w.as.owner.jar,
    }))
      .status,
    200,
  );
  for (const role of ["owner", "admin", "developer", "viewer"] as const) {
    const list = await (await getPage(w.app, "/dashboard", w.as[role].jar)).text();
    assert.ok(list.includes('data-testid="no-projects"'), role);
  }
  assert.deepEqual(
    await Array.fromAsync(w.t.kv.list({ prefix: ["invitations_by_address", w.invited] })),
    [],
  );
  // And no team change follows the deletion.
  await assertErrorCode(
    await postJson(w.app, path(w.projectId, "/members"), {
      address: createTestWallet().address,
      role: "viewer",
    }, { jar: w.as.owner.jar }),
    404,
    "project_not_found",
  );
});

Deno.test("A developer may tighten the policy; loosening a limit needs an admin", async () => {
  await using w = await startTeam();
  const policy = (body: unknown, who: "developer" | "admin") =>
    postJson(w.app, path(w.projectId, "/policy"), body, { jar: w.as[who].jar });
  // Setting Max SOL per transfer turns SOL transfers on: a loosening.
  const first = await policy({ maxSolPerTransfer: "1", perRecipientPerHour: "5" }, "developer");
  const { error } = await assertErrorCode(first, 403, "insufficient_role");
  assert.match(error.message, /Loosening a limit \(maxSolPerTransfer\) needs an admin/);
  assert.equal(
    (await policy({ maxSolPerTransfer: "1", perRecipientPerHour: "5" }, "admin")).status,
    200,
  );
  // Tightening is the developer's to do.
  assert.equal(
    (await policy({ maxSolPerTransfer: "0.5", perRecipientPerHour: "2" }, "developer")).status,
    200,
  );
  for (
    const [body, loosened] of [
      [{ maxSolPerTransfer: "0.6", perRecipientPerHour: "2" }, "maxSolPerTransfer"],
      [{ maxSolPerTransfer: "0.5" }, "perRecipientPerHour"],
      [{
        maxSolPerTransfer: "0.5",
        perRecipientPerHour: "2",
        allowedMints: [{
          mint: "So11111111111111111111111111111111111111112",
          maxPerTransaction: "1",
        }],
      }, "allowedMints So11111111111111111111111111111111111111112"],
    ] as const
  ) {
    const res = await policy(body, "developer");
    const refused = await assertErrorCode(res, 403, "insufficient_role");
    assert.ok(refused.error.message.includes(loosened), refused.error.message);
  }
});
