/**
 * A refused form says each problem in words next to its field, with `aria-invalid` and
 * `aria-describedby`, while the JSON answer keeps its `field: problem` message.
 */
import assert from "node:assert/strict";
import {
  createProjectAs,
  getPage,
  postForm,
  postJson,
  signInDeveloper,
} from "../support/dashboard.ts";
import { createTestApp } from "../support/test_app.ts";
import { problemsByField } from "../../lib/issue_text.ts";
import { fieldLabel } from "../../components/dashboard/field_error.tsx";

/** The opening tag of the input named `name`. */
function inputTag(html: string, name: string): string {
  const tag = html.match(new RegExp(`<input[^>]*name="${name.replace(/[[\].]/g, "\\$&")}"[^>]*>`));
  assert.ok(tag, `an input named ${name}`);
  return tag[0];
}

/** The text of the element with `id`. */
function textById(html: string, id: string): string {
  const element = html.match(new RegExp(`id="${id}"[^>]*>([^<]*)<`));
  assert.ok(element, `an element #${id}`);
  return element[1]!;
}

Deno.test("A refused policy form marks each field and says its problem in words beside it", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  const path = `/dashboard/projects/${project.id}/policy`;
  const form = {
    maxSolPerTransfer: "abc",
    perPlayerPerHour: "0",
    "allowedMints[0].mint": "nope",
    "allowedMints[0].maxPerTransaction": "5",
  };

  // The JSON answer keeps the message clients and tests read
  const json = await postJson(t.app, path, form, { jar: dev.jar });
  assert.equal(json.status, 400);
  const { error } = await json.json();
  assert.equal(error.code, "invalid_settings");
  assert.match(error.message, /^maxSolPerTransfer: must be a decimal amount such as 1\.5; /);

  // A browser lands back on the form
  const res = await postForm(t.app, path, form, { jar: dev.jar });
  const html = await (await getPage(t.app, res.headers.get("location")!, dev.jar)).text();
  const max = inputTag(html, "maxSolPerTransfer");
  assert.match(max, /aria-invalid="true"/);
  assert.match(max, /aria-describedby="policy-maxSolPerTransfer-error"/);
  assert.equal(
    textById(html, "policy-maxSolPerTransfer-error"),
    "Must be a decimal amount such as 1.5.",
  );
  const mint = inputTag(html, "allowedMints[0].mint");
  assert.match(mint, /aria-describedby="policy-allowedMints-0--mint-error"/);
  assert.equal(textById(html, "policy-allowedMints-0--mint-error"), "Must be a mint address.");
  assert.match(inputTag(html, "perPlayerPerHour"), /aria-invalid="true"/);
  // A field without a problem is not marked
  assert.doesNotMatch(inputTag(html, "perRecipientPerHour"), /aria-invalid/);
  assert.doesNotMatch(inputTag(html, "allowedMints[0].maxPerTransaction"), /aria-invalid/);
  // The notice sums up in words, naming no field in code form
  assert.ok(html.includes("Not saved: 3 fields need a change"), html);
  assert.ok(html.includes("Max SOL per transfer: must be a decimal amount such as 1.5"));
  assert.ok(html.includes("Allowed mints 1, mint: must be a mint address"));
  assert.ok(!html.includes("maxSolPerTransfer: must"), "no field in code form");
});

Deno.test("A refused settings form marks its field", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  const res = await postForm(t.app, `/dashboard/projects/${project.id}/settings`, {
    form: "alerts",
    lowSolBalance: "0.1234567891",
  }, { jar: dev.jar });
  const html = await (await getPage(t.app, res.headers.get("location")!, dev.jar)).text();
  assert.match(inputTag(html, "lowSolBalance"), /aria-describedby="alerts-lowSolBalance-error"/);
  assert.match(textById(html, "alerts-lowSolBalance-error"), /^Must /);
  assert.doesNotMatch(inputTag(html, "name"), /aria-invalid/);
});

Deno.test("problemsByField() splits a field: problem message back, keeping what names no field", () => {
  assert.deepEqual(
    problemsByField("a: must be x; b[0].c: is listed twice; not a field; d: one; two"),
    {
      fields: { a: "must be x", "b[0].c": "is listed twice; not a field", d: "one; two" },
      rest: [],
    },
  );
  assert.deepEqual(problemsByField("Cannot do it: because"), {
    fields: {},
    rest: ["Cannot do it: because"],
  });
  assert.equal(fieldLabel("maxSolPerTransfer"), "Max SOL per transfer");
  assert.equal(fieldLabel("hourlyBudgets[1].amount"), "Hourly budgets 2, amount");
  assert.equal(fieldLabel("oauthClientId"), "OAuth client ID");
});

Deno.test("A refused invitation or webhook URL marks its field", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  const base = `/dashboard/projects/${project.id}`;
  const invite = await postForm(t.app, `${base}/members`, { address: "not-a-wallet" }, {
    jar: dev.jar,
  });
  const team = await (await getPage(t.app, invite.headers.get("location")!, dev.jar)).text();
  assert.match(inputTag(team, "address"), /aria-invalid="true"/);
  assert.match(inputTag(team, "address"), /aria-describedby="invite-address-error"/);
  assert.match(textById(team, "invite-address-error"), /^Must /);

  const hook = await postForm(t.app, `${base}/webhooks`, { url: "ftp://example.com/x" }, {
    jar: dev.jar,
  });
  const hooks = await (await getPage(t.app, hook.headers.get("location")!, dev.jar)).text();
  assert.match(inputTag(hooks, "url"), /aria-invalid="true"/);
  assert.match(inputTag(hooks, "url"), /aria-describedby="webhook-url-error"/);
});
