import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import { createTestApp } from "../support/test_app.ts";
import {
  createProjectAs,
  getPage,
  postForm,
  postJson,
  signInDeveloper,
} from "../support/dashboard.ts";
import { getPolicy } from "../../kv/policy.ts";
import { listWatchesByProject, watchPollJobId } from "../../kv/watches.ts";
import { getJobEntry } from "../../kv/jobs.ts";
import { ulid } from "../../core/ids.ts";
import { emptyPolicy } from "../../kv/policy.ts";

const MINT_A = "So11111111111111111111111111111111111111112";
const MINT_B = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const ADDRESS = "Vote111111111111111111111111111111111111111";

Deno.test("POST /dashboard/projects/:id/policy saves the policy from JSON and answers it", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  const policy = {
    maxSolPerTransfer: "0.5",
    allowedMints: [{ mint: MINT_A, maxPerTransaction: "100" }],
    perRecipientPerHour: 3,
    perPlayerPerHour: "5",
    hourlyBudgets: [{ asset: "SOL", amount: "10" }],
  };

  // When
  const res = await postJson(t.app, `/dashboard/projects/${project.id}/policy`, policy, {
    jar: dev.jar,
  });

  // Then
  assert.deepEqual(res.status, 200);
  const expected = { ...policy, perPlayerPerHour: 5 };
  assert.deepEqual(await res.json(), { policy: expected });
  assert.deepEqual(await getPolicy(t.kv, project.id), expected);
  const page = await (await getPage(t.app, `/dashboard/projects/${project.id}/policy`, dev.jar))
    .text();
  assert.ok(page.includes(`value="${MINT_A}"`) && page.includes('value="0.5"'));
});

Deno.test("The policy form posts list rows by index; blank rows are no rows", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);

  // When
  const res = await postForm(t.app, `/dashboard/projects/${project.id}/policy`, {
    maxSolPerTransfer: "",
    "allowedMints[0].mint": MINT_A,
    "allowedMints[0].maxPerTransaction": "2.5",
    "allowedMints[1].mint": "",
    "allowedMints[1].maxPerTransaction": "",
    "allowedMints[2].mint": MINT_B,
    "allowedMints[2].maxPerTransaction": "1",
    perRecipientPerHour: "",
    perPlayerPerHour: "4",
    "hourlyBudgets[0].asset": MINT_A,
    "hourlyBudgets[0].amount": "50",
    "hourlyBudgets[1].asset": "",
    "hourlyBudgets[1].amount": "",
  }, { jar: dev.jar });

  // Then
  assert.deepEqual([res.status, res.headers.get("location")], [
    303,
    `/dashboard/projects/${project.id}/policy`,
  ]);
  assert.deepEqual(await getPolicy(t.kv, project.id), {
    maxSolPerTransfer: null,
    allowedMints: [
      { mint: MINT_A, maxPerTransaction: "2.5" },
      { mint: MINT_B, maxPerTransaction: "1" },
    ],
    perRecipientPerHour: null,
    perPlayerPerHour: 4,
    hourlyBudgets: [{ asset: MINT_A, amount: "50" }],
  });
  const page = await (await getPage(t.app, res.headers.get("location")!, dev.jar)).text();
  assert.ok(page.includes("Policy saved"));
});

Deno.test("An invalid policy answers invalid_settings naming each field; the form keeps what was typed", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);

  // When
  const res = await postJson(t.app, `/dashboard/projects/${project.id}/policy`, {
    maxSolPerTransfer: "-1",
    allowedMints: [{ mint: "not-a-mint", maxPerTransaction: "1" }],
    perRecipientPerHour: 0,
  }, { jar: dev.jar });

  // Then
  const { error } = await assertErrorCode(res, 400, "invalid_settings");
  for (const field of ["maxSolPerTransfer", "allowedMints[0].mint", "perRecipientPerHour"]) {
    assert.ok(error.message.includes(`${field}: `), error.message);
  }
  assert.deepEqual(await getPolicy(t.kv, project.id), emptyPolicy());

  const form = await postForm(t.app, `/dashboard/projects/${project.id}/policy`, {
    maxSolPerTransfer: "1.5",
    "allowedMints[0].mint": "typo-mint",
    "allowedMints[0].maxPerTransaction": "7",
  }, { jar: dev.jar });
  const page = await (await getPage(t.app, form.headers.get("location")!, dev.jar)).text();
  assert.ok(page.includes("Allowed mints 1, mint: must be a mint address"));
  assert.ok(page.includes('value="typo-mint"') && page.includes('value="1.5"'));
  assert.deepEqual(await getPolicy(t.kv, project.id), emptyPolicy());
});

Deno.test("Watches: add, list, refuse bad or duplicate ones, remove by id", async (t) => {
  await using app = await createTestApp();
  const dev = await signInDeveloper(app.app);
  const project = await createProjectAs(app.app, dev);
  const base = `/dashboard/projects/${project.id}/watches`;

  await t.step("add answers the watch and starts its poll job", async () => {
    const res = await postJson(app.app, base, { name: "treasury vault", address: ADDRESS }, {
      jar: dev.jar,
    });
    assert.deepEqual(res.status, 201);
    const { watch } = await res.json();
    assert.deepEqual([watch.name, watch.address], ["treasury vault", ADDRESS]);
    const [stored] = await listWatchesByProject(app.kv, project.id);
    assert.ok(stored);
    assert.deepEqual(watch.id, stored.id);
    assert.ok((await getJobEntry(app.kv, watchPollJobId(project.id, stored.id))).value);
    const page = await (await getPage(app.app, base, dev.jar)).text();
    assert.ok(page.includes("treasury vault") && page.includes(ADDRESS));
  });
  await t.step("a name over 32 characters and a bad address", async () => {
    const res = await postJson(app.app, base, { name: "n".repeat(33), address: "nope" }, {
      jar: dev.jar,
    });
    const { error } = await assertErrorCode(res, 400, "invalid_settings");
    assert.deepEqual(
      error.message,
      "name: must be at most 32 characters; address: must be a Solana address (base58, 32 bytes)",
    );
  });
  await t.step("a name . or .., or with a control or format character", async () => {
    for (const name of [".", "..", " .. ", "vault\u202Etxt.exe", "vault\u2066", "va\uFEFFult"]) {
      const res = await postJson(app.app, base, { name, address: MINT_A }, { jar: dev.jar });
      const { error } = await assertErrorCode(res, 400, "invalid_settings");
      assert.match(error.message, /^name: must not (be \. or \.\.|contain control or format)/);
    }
    assert.deepEqual((await listWatchesByProject(app.kv, project.id)).length, 1);
  });
  await t.step("a taken name", async () => {
    const res = await postJson(app.app, base, { name: "treasury vault", address: MINT_A }, {
      jar: dev.jar,
    });
    await assertErrorCode(res, 400, "invalid_settings");
  });
  await t.step("by form, a refusal comes back as a message with the typed values", async () => {
    const res = await postForm(app.app, base, { name: "second", address: ADDRESS }, {
      jar: dev.jar,
    });
    assert.deepEqual(res.headers.get("location"), base);
    const page = await (await getPage(app.app, base, dev.jar)).text();
    assert.ok(page.includes("Address: already watched as treasury vault"));
    assert.ok(page.includes('value="second"'));
  });
  await t.step("the name in the path removes nothing: watches are removed by id", async () => {
    const res = await postJson(
      app.app,
      `${base}/${encodeURIComponent("treasury vault")}/delete`,
      undefined,
      { jar: dev.jar },
    );
    assert.deepEqual(await res.json(), { ok: true, removed: false });
    assert.deepEqual((await listWatchesByProject(app.kv, project.id)).length, 1);
  });
  await t.step("remove by id stops its polling", async () => {
    const [stored] = await listWatchesByProject(app.kv, project.id);
    assert.ok(stored);
    const res = await postForm(app.app, `${base}/${stored.id}/delete`, {}, { jar: dev.jar });
    assert.deepEqual(res.status, 303);
    assert.deepEqual(await listWatchesByProject(app.kv, project.id), []);
    assert.deepEqual(
      (await getJobEntry(app.kv, watchPollJobId(project.id, stored.id))).value,
      null,
    );
    const page = await (await getPage(app.app, base, dev.jar)).text();
    assert.ok(page.includes("Stopped watching treasury vault"));
  });
  await t.step("removing a watch already removed changes nothing", async () => {
    const res = await postJson(app.app, `${base}/${ulid()}/delete`, undefined, { jar: dev.jar });
    assert.deepEqual(await res.json(), { ok: true, removed: false });
  });
});

Deno.test("The policy form saves the rewards' caps per player, and names a bad one at its field", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  const path = `/dashboard/projects/${project.id}/policy`;

  // When: a bad cap, then good ones
  const refused = await postForm(t.app, path, {
    maxSolPerTransfer: "1",
    maxHeldSolPerPlayer: "lots",
    "allowedMints[0].mint": MINT_A,
    "allowedMints[0].maxPerTransaction": "5",
    "allowedMints[0].maxHeldPerPlayer": "0",
  }, { jar: dev.jar });
  const refusedPage = await (await getPage(t.app, refused.headers.get("location")!, dev.jar))
    .text();
  const saved = await postForm(t.app, path, {
    maxSolPerTransfer: "1",
    maxHeldSolPerPlayer: "2.5",
    "allowedMints[0].mint": MINT_A,
    "allowedMints[0].maxPerTransaction": "5",
    "allowedMints[0].maxHeldPerPlayer": "20",
    "allowedMints[1].mint": MINT_B,
    "allowedMints[1].maxPerTransaction": "1",
    "allowedMints[1].maxHeldPerPlayer": "",
  }, { jar: dev.jar });

  // Then: the refusal names each field and keeps what was typed; the caps are saved, a blank one
  // is no cap, and the page shows them
  assert.ok(refusedPage.includes("must be a decimal amount such as 1.5"), refusedPage);
  assert.ok(refusedPage.includes("must be greater than zero"));
  assert.ok(refusedPage.includes('value="lots"'));
  assert.equal(saved.status, 303);
  assert.deepEqual(await getPolicy(t.kv, project.id), {
    maxSolPerTransfer: "1",
    allowedMints: [
      { mint: MINT_A, maxPerTransaction: "5", maxHeldPerPlayer: "20" },
      { mint: MINT_B, maxPerTransaction: "1" },
    ],
    perRecipientPerHour: null,
    perPlayerPerHour: null,
    hourlyBudgets: [],
    maxHeldSolPerPlayer: "2.5",
  });
  const page = await (await getPage(t.app, path, dev.jar)).text();
  assert.ok(page.includes('value="2.5"') && page.includes('value="20"'));
});
