/**
 * Every page and action of a project, for every role, through the real app: a role with the
 * capability the route needs gets its answer, a role without it 403 `insufficient_role`, and a
 * wallet on no team 404 `project_not_found`, and a refused action changes nothing. The table must
 * name every project route the app has, so a new page or action cannot skip its role.
 */
import assert from "node:assert/strict";
import { type Capability, mayGrant, roleAllows } from "../../lib/auth/roles.ts";
import type { Role } from "../../kv/members.ts";
import { listMembers } from "../../kv/members.ts";
import { listAuditEntries } from "../../kv/audit_log.ts";
import { assertErrorCode } from "../support/assertions.ts";
import { getPage, postForm, postJson } from "../support/dashboard.ts";
import { startTeam, type TeamWorld } from "../support/team.ts";
import { createTestWallet } from "../support/sign_in.ts";

const ROLES: Role[] = ["owner", "admin", "developer", "viewer"];

/**
 * Who may do what, as issue 24 states it (written out here, not read from the code under test):
 * owner (one), admin (everything but export, deletion and ownership; cancelling held rewards, issue
 * 41), developer (keys, settings,
 * watches, test pings; policy changes that loosen a limit need an admin), viewer (read only).
 */
const ALLOWED: Record<Capability, Role[]> = {
  view: ["owner", "admin", "developer", "viewer"],
  keys: ["owner", "admin", "developer"],
  settings: ["owner", "admin", "developer"],
  policy: ["owner", "admin", "developer"],
  watches: ["owner", "admin", "developer"],
  ping: ["owner", "admin", "developer"],
  webhooks: ["owner", "admin", "developer"],
  loosen_policy: ["owner", "admin"],
  wallet: ["owner", "admin"],
  team: ["owner", "admin"],
  withdraw: ["owner", "admin"],
  cancel_rewards: ["owner", "admin"],
  connect: ["owner", "admin"],
  export_key: ["owner"],
  delete: ["owner"],
  transfer: ["owner"],
};
const WATCH_ADDRESS = "Vote111111111111111111111111111111111111111";

/** One route: the capability it needs, the request it is tried with, the status a member gets. */
interface RouteCase {
  method: "GET" | "POST";
  route: string;
  can: Capability;
  request: (w: TeamWorld, role: Role) => { path: string; body?: unknown };
  /** The status of an allowed member; by role where it differs. */
  ok: number | ((role: Role) => number);
}

const base = (w: TeamWorld) => `/dashboard/projects/${w.projectId}`;
const page = (tab: string): RouteCase => ({
  method: "GET",
  route: `/dashboard/projects/:id${tab}`,
  can: "view",
  request: (w) => ({ path: `${base(w)}${tab}` }),
  ok: 200,
});

/** Every project route of the dashboard. */
const CASES: RouteCase[] = [
  ...["", "/usage", "/keys", "/settings", "/policy", "/watches", "/transactions", "/players"]
    .map(page),
  ...["/requests", "/events", "/team", "/audit", "/audit/export", "/rewards"].map(page),
  {
    method: "POST",
    route: "/dashboard/projects/:id/rewards/cancel",
    can: "cancel_rewards",
    request: (w) => ({ path: `${base(w)}/rewards/cancel`, body: { key: "unknown" } }),
    // The role is checked first; no reward has the key (open_rewards_test.ts cancels real ones).
    ok: 404,
  },
  { ...page("/delete"), can: "delete" },
  ...["/webhooks"].map(page),
  ...webhookCases(),
  ...robloxCases(),
  { ...page("/withdraw"), can: "withdraw" },
  {
    ...page("/withdraw/confirm"),
    can: "withdraw",
    request: (w) => ({ path: `${base(w)}/withdraw/confirm?nonce=unknown` }),
  },
  { ...page("/export"), can: "export_key" },
  {
    ...page("/export/confirm"),
    can: "export_key",
    request: (w) => ({ path: `${base(w)}/export/confirm?nonce=unknown` }),
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/export/prepare",
    can: "export_key",
    request: (w) => ({ path: `${base(w)}/export/prepare` }),
    // The role is checked first; this team's project has no wallet (key_export_test.ts exports).
    ok: 409,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/export",
    can: "export_key",
    request: (w) => ({ path: `${base(w)}/export`, body: { nonce: "unknown", signature: "" } }),
    ok: 409,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/withdraw/prepare",
    can: "withdraw",
    request: (w) => ({
      path: `${base(w)}/withdraw/prepare`,
      body: { recipient: createTestWallet().address, asset: "SOL", amount: "1" },
    }),
    // The role is checked first; this team's project has no wallet (withdraw_test.ts sends).
    ok: 409,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/withdraw",
    can: "withdraw",
    request: (w) => ({ path: `${base(w)}/withdraw`, body: { nonce: "unknown", signature: "" } }),
    // The role is checked first; the statement is unknown (withdraw_test.ts signs real ones).
    ok: 400,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/keys",
    can: "keys",
    request: (w) => ({ path: `${base(w)}/keys`, body: { scopes: ["read"] } }),
    ok: 201,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/keys/:keyId/revoke",
    can: "keys",
    request: (w) => ({ path: `${base(w)}/keys/${w.keyId}/revoke` }),
    ok: 200,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/wallet",
    can: "wallet",
    request: (w) => ({ path: `${base(w)}/wallet` }),
    ok: 201,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/wallet/sandbox-sol",
    can: "wallet",
    request: (w) => ({ path: `${base(w)}/wallet/sandbox-sol` }),
    // Past the role check: the team's project has no wallet to fund.
    ok: 409,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/settings/stand-in",
    can: "settings",
    request: (w) => ({ path: `${base(w)}/settings/stand-in` }),
    // Past the role check: the test config's stand-ins are nowhere.
    ok: 502,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/settings",
    can: "settings",
    request: (w) => ({ path: `${base(w)}/settings`, body: { name: "Renamed" } }),
    ok: 200,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/policy",
    can: "policy",
    // The empty policy: from the empty policy, it loosens nothing.
    request: (w) => ({ path: `${base(w)}/policy`, body: {} }),
    ok: 200,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/watches",
    can: "watches",
    request: (w) => ({
      path: `${base(w)}/watches`,
      body: { name: "vault", address: WATCH_ADDRESS },
    }),
    ok: 201,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/watches/:watchId/delete",
    can: "watches",
    request: (w) => ({ path: `${base(w)}/watches/01HZZZZZZZZZZZZZZZZZZZZZZZ/delete` }),
    ok: 200,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/ping",
    can: "ping",
    request: (w) => ({ path: `${base(w)}/ping` }),
    ok: 200,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/members",
    can: "team",
    request: (w) => ({
      path: `${base(w)}/members`,
      body: { address: createTestWallet().address, role: "developer" },
    }),
    ok: 201,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/members/:address/role",
    can: "team",
    request: (w) => ({
      path: `${base(w)}/members/${w.as.viewer.address}/role`,
      body: { role: "developer" },
    }),
    ok: 200,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/members/:address/remove",
    can: "team",
    request: (w) => ({ path: `${base(w)}/members/${w.as.viewer.address}/remove` }),
    ok: 200,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/invitations/:address/revoke",
    can: "team",
    request: (w) => ({ path: `${base(w)}/invitations/${w.invited}/revoke` }),
    ok: 200,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/leave",
    can: "view",
    request: (w) => ({ path: `${base(w)}/leave` }),
    // The owner hands the project over before leaving it.
    ok: (role) => role === "owner" ? 409 : 200,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/transfer",
    can: "transfer",
    request: (w) => ({ path: `${base(w)}/transfer`, body: { address: w.as.admin.address } }),
    ok: 200,
  },
  {
    method: "POST",
    route: "/dashboard/projects/:id/delete",
    can: "delete",
    request: (w) => ({ path: `${base(w)}/delete`, body: { name: w.projectName } }),
    ok: 200,
  },
];

/**
 * The webhooks' actions (a developer or above, as watches). The team's project has no endpoint:
 * an allowed role gets the answer after the role check (`webhooks_test.ts` covers the rest).
 */
function webhookCases(): RouteCase[] {
  const none = "01HZZZZZZZZZZZZZZZZZZZZZZZ";
  const action = (rest: string, ok: number, body?: unknown): RouteCase => ({
    method: "POST",
    route: `/dashboard/projects/:id/webhooks${
      rest.replace(`deliveries/${none}`, "deliveries/:deliveryId").replace(none, ":endpointId")
    }`,
    can: "webhooks",
    request: (w) => ({ path: `${base(w)}/webhooks${rest}`, body }),
    ok,
  });
  return [
    // A URL the rules refuse before any name is resolved.
    action("", 400, { url: "http://hooks.example.test/hook" }),
    action(`/${none}/delete`, 200),
    action(`/${none}/rotate`, 404, {}),
    action(`/${none}/test`, 404),
    action(`/deliveries/${none}/replay`, 404),
  ];
}

/**
 * The Roblox connection's actions (an admin or the owner, issue 40). The team's project has no
 * connecting app nor connection: an allowed role gets the answer after the role check
 * (`tests/roblox/` covers the rest).
 */
function robloxCases(): RouteCase[] {
  const action = (rest: string, ok: number, body?: unknown): RouteCase => ({
    method: "POST",
    route: `/dashboard/projects/:id/roblox/${rest}`,
    can: "connect",
    request: (w) => ({ path: `${base(w)}/roblox/${rest}`, body }),
    ok,
  });
  return [
    // Back to the settings page with the flash "Save the ... app first".
    { ...action("connect", 303), method: "GET" },
    action("universe", 400, { universeId: "5550001" }),
    action("disconnect", 200),
    action("install-key", 400, {}),
    action("rotate", 400, { bleedOffMinutes: "5" }),
  ];
}

function send(w: TeamWorld, c: RouteCase, who: Role | "outsider"): Promise<Response> {
  const { path, body } = c.request(w, who === "outsider" ? "viewer" : who);
  const jar = w.as[who].jar;
  if (c.method === "GET") return getPage(w.app, path, jar);
  return postJson(w.app, path, body, { jar });
}

Deno.test("roleAllows() gives each role what the issue says, and nothing more", () => {
  for (const [capability, roles] of Object.entries(ALLOWED) as [Capability, Role[]][]) {
    for (const role of ROLES) {
      assert.equal(roleAllows(role, capability), roles.includes(role), `${role} ${capability}`);
    }
  }
});

Deno.test("mayGrant() lets an admin give roles up to admin and the owner any; nobody else", () => {
  const GRANTS: Record<Role | "none", Role[]> = {
    none: [],
    viewer: [],
    developer: [],
    admin: ["viewer", "developer", "admin"],
    owner: ["viewer", "developer", "admin", "owner"],
  };
  for (const [granter, granted] of Object.entries(GRANTS) as [Role | "none", Role[]][]) {
    for (const role of ROLES) {
      const may = mayGrant(granter === "none" ? null : granter, role);
      assert.equal(may, granted.includes(role), `${granter} grants ${role}`);
    }
  }
});

Deno.test("The role table covers every project page and action of the dashboard", async () => {
  await using w = await startTeam();
  const routes = new Set(
    w.app.routes
      .filter((r) => (r.method === "GET" || r.method === "POST") && r.path.includes("/:id"))
      .filter((r) => r.path.startsWith("/dashboard/projects/"))
      .map((r) => `${r.method} ${r.path}`),
  );
  assert.deepEqual([...routes].sort(), CASES.map((c) => `${c.method} ${c.route}`).sort());
});

Deno.test("Every project page and action checks the member's role", async (t) => {
  for (const c of CASES) {
    await t.step(`${c.method} ${c.route} needs ${c.can}`, async () => {
      // Refusals on one world: nothing they touch may change.
      await using shared = await startTeam();
      const before = await snapshot(shared);
      for (const role of ROLES.filter((r) => !ALLOWED[c.can].includes(r))) {
        const res = await send(shared, c, role);
        if (c.method === "GET" && !c.route.endsWith("/audit/export")) {
          assert.equal(res.status, 403, `${role}`);
          assert.ok((await res.text()).includes('data-testid="insufficient-role"'));
        } else await assertErrorCode(res, 403, "insufficient_role");
      }
      const outsider = await send(shared, c, "outsider");
      if (c.method === "GET" && !c.route.endsWith("/audit/export")) {
        assert.equal(outsider.status, 404);
        await outsider.body?.cancel();
      } else await assertErrorCode(outsider, 404, "project_not_found");
      assert.deepEqual(await snapshot(shared), before, "a refused request changed the project");

      // Each allowed role on a world of its own.
      for (const role of ALLOWED[c.can]) {
        await using w = await startTeam();
        const res = await send(w, c, role);
        const expected = typeof c.ok === "number" ? c.ok : c.ok(role);
        assert.equal(res.status, expected, `${role}: ${await res.clone().text()}`);
        await res.body?.cancel();
      }
    });
  }
});

Deno.test("A refused form post sends the browser back with the role's message", async () => {
  await using w = await startTeam();
  const res = await postForm(w.app, `${base(w)}/wallet`, {}, { jar: w.as.developer.jar });
  assert.deepEqual([res.status, res.headers.get("location")], [303, base(w)]);
  const html = await (await getPage(w.app, base(w), w.as.developer.jar)).text();
  assert.ok(html.includes("This needs an admin or the owner; your role is developer"), html);
});

/** What a refused request must leave alone: the team and the audit log. */
async function snapshot(w: TeamWorld) {
  const kv = w.t.kv;
  return {
    members: await listMembers(kv, w.projectId),
    audit: (await Array.fromAsync(listAuditEntries(kv, w.projectId, { now: Date.now() * 2 })))
      .length,
  };
}
