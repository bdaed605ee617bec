/** Baseline: bare Deno.serve answering the same JSON after the same single KV read, counting nothing. */

const kv = await Deno.openKv(
  Deno.env.get("BENCH_KV_PATH") ?? `${await Deno.makeTempDir()}/baseline.kv`,
);
const address = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
await kv.set(["links_by_user", "p", 1], { address, linkedAt: 1 });
Deno.serve({
  port: 0,
  hostname: "127.0.0.1",
  onListen: ({ port }) => console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` })),
}, async () => {
  const link =
    (await kv.get<{ address: string; linkedAt: number }>(["links_by_user", "p", 1])).value;
  return Response.json({
    userId: 1,
    address: link?.address ?? null,
    linkedAt: link?.linkedAt ?? null,
  });
});
