import { call, createTestApp, createTestProject } from "/work/w-i17/tests/support/test_app.ts";
import { requestCountsKey } from "/work/w-i17/kv/request_counts.ts";
const path = await Deno.makeTempFile({ suffix: ".kv" });
const a = await createTestApp({ kvPath: path });
const b = await createTestApp({ kvPath: path, clock: a.clock });
const projects = await Promise.all(Array.from({ length: 24 }, (_, i) => createTestProject(a, { developer: `dev-${i}` })));
const passed = new Map<string, number>();
for (let round = 0; round < 8; round++) {
  const app = round % 2 ? a.app : b.app;
  const t0 = performance.now();
  await Promise.all(projects.flatMap(({ project, apiKey }) => Array.from({ length: 80 }, async () => {
    const res = await call(app, "/v1/players/1/wallet", { apiKey });
    await res.body?.cancel();
    if (res.status === 200) passed.set(project.id, (passed.get(project.id) ?? 0) + 1);
  })));
  const c = (await a.kv.get<any>(requestCountsKey(projects[0].project.id))).value;
  console.log("round", round, Math.round(performance.now() - t0), JSON.stringify(c), passed.get(projects[0].project.id));
}
console.log("closing");
await b.close(); await a.close();
console.log([...passed.values()]);
