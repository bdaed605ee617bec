// `deno task chain`: the sandbox cluster alone, on CHAIN_PORT (default 8899).
import { startChain } from "./mod.ts";

const port = Number(Deno.env.get("CHAIN_PORT") ?? 8899);
const slotMs = Number(Deno.env.get("CHAIN_SLOT_MS") ?? 400);
const chain = await startChain({ port, slotMs, log: (line) => console.log(line) });
console.log(
  JSON.stringify({
    event: "chain_ready",
    rpcUrl: chain.rpcUrl,
    dasUrl: chain.dasUrl,
    controlUrl: chain.controlUrl,
  }),
);
Deno.addSignalListener("SIGINT", async () => {
  await chain.close();
  Deno.exit(0);
});
