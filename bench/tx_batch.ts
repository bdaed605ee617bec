/**
 * Bench: 50 payouts as one `POST /v1/tx/batch` against the same 50 as single requests, sent at once
 * to one service instance (the spec's timing) against the sandbox cluster at 400 ms slots. Reports
 * for each the time until every answer, the transactions sent, and the fees the managed wallet paid
 * per recipient (what left the wallet beyond the amounts).
 */
import { createSolanaRpc } from "@solana/kit";
import { startServer } from "./load.ts";
import { seedPayoutProject } from "./tx_burst.ts";

const ITEMS = 50;
const LAMPORTS = 1_000_000n;

/** The two runs, printed as a Markdown table. */
export async function benchTxBatch(): Promise<string> {
  const tx = new URL("./tx.ts", import.meta.url).pathname;
  const burst = new URL("./tx_burst.ts", import.meta.url).pathname;
  const chain = await startServer(tx, { BENCH_ROLE: "chain" });
  const rpcUrl = String(chain.info.rpcUrl);
  const dir = await Deno.makeTempDir();
  try {
    const kvPath = `${dir}/batch.kv`;
    const seeded = await seedPayoutProject(kvPath, rpcUrl, 2 * ITEMS);
    const env = { BENCH_ROLE: "burst", BENCH_RPC_URL: rpcUrl, BENCH_KV_PATH: kvPath };
    const server = await startServer(burst, env);
    const url = String(server.info.url);
    const rpc = createSolanaRpc(rpcUrl);
    const balance = async () =>
      (await rpc.getBalance(seeded.wallet as never, { commitment: "confirmed" }).send()).value;
    const post = async (path: string, body: unknown) =>
      await (await fetch(`${url}${path}`, {
        method: "POST",
        headers: { "x-api-key": seeded.apiKey, "content-type": "application/json" },
        body: JSON.stringify(body),
      })).json();
    const item = (i: number) => ({
      to: { userId: 1_000 + i },
      amount: "0.001",
      idempotencyKey: `bench-${i}`,
    });
    const rows: string[] = [];
    try {
      for (const run of ["50 single requests", "one batch of 50"] as const) {
        const offset = run === "one batch of 50" ? ITEMS : 0;
        const before = await balance();
        const started = performance.now();
        const results: Array<{ status: string; signature: string | null }> = run ===
            "50 single requests"
          ? await Promise.all(
            Array.from({ length: ITEMS }, (_, i) => post("/v1/tx/transfer-sol", item(offset + i))),
          )
          : (await post("/v1/tx/batch", {
            items: Array.from({ length: ITEMS }, (_, i) => ({
              kind: "transfer-sol",
              ...item(offset + i),
            })),
          })).items.map((answer: { result: { status: string; signature: string | null } }) =>
            answer.result
          );
        const ms = performance.now() - started;
        const confirmed = results.filter((r) => r?.status === "confirmed").length;
        const transactions = new Set(results.map((r) => r?.signature)).size;
        const fees = before - await balance() - BigInt(confirmed) * LAMPORTS;
        rows.push(
          `| ${run} | ${run === "one batch of 50" ? 1 : ITEMS} | ${confirmed} | ${transactions} | ${
            (ms / 1000).toFixed(2)
          } | ${Number(fees) / ITEMS} |`,
        );
      }
    } finally {
      await server.stop();
    }
    return [
      "| Run | Requests counted | Confirmed | Transactions | Time to every answer (s) | Fees per recipient (lamports) |",
      "| --- | --- | --- | --- | --- | --- |",
      ...rows,
    ].join("\n");
  } finally {
    await chain.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) console.log(await benchTxBatch());
