/** Baseline: bare Deno.serve answering a constant JSON body. */
const body = JSON.stringify({
  userId: 1,
  address: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
  linkedAt: 1,
});
Deno.serve({
  port: 0,
  hostname: "127.0.0.1",
  onListen: ({ port }) => console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` })),
}, () => new Response(body, { headers: { "content-type": "application/json" } }));
