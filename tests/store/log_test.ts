// No log line carries an RPC URL's credentials (issue 12, item 5): provider URLs hold API keys in
// their user info, path or query, and fetch errors quote the URL they failed on.
import assert from "node:assert/strict";
import { log } from "../../core/log.ts";

const SECRETS = ["PASSWORD", "PATHKEY", "QUERYKEY"];
const RPC_URL = "http://user:PASSWORD@127.0.0.1:9/v2/PATHKEY?api-key=QUERYKEY";

/** Runs `fn` and returns what it wrote to the console. */
function captured(fn: () => void): string {
  const lines: string[] = [];
  const { log: out, error: err } = console;
  console.log = (line: string) => lines.push(line);
  console.error = (line: string) => lines.push(line);
  try {
    fn();
  } finally {
    console.log = out;
    console.error = err;
  }
  return lines.join("\n");
}

Deno.test("log() keeps RPC URL credentials out of every line, from errors and from fields", () => {
  // Given a fetch failure quoting the URL it failed on (as Deno's fetch did before 2.2)
  const failure = new TypeError(`error sending request for url (${RPC_URL}): connection refused`);
  // When it, and the URL itself, are logged
  const output = captured(() => {
    log("warn", "Watch poll failed; will poll again", { projectId: "p", error: failure });
    log("info", "Configured", { url: RPC_URL, nested: { urls: [`see ${RPC_URL}.`] } });
  });
  // Then no secret part is written, while the host still is
  for (const secret of SECRETS) assert.ok(!output.includes(secret), `${secret} in ${output}`);
  assert.ok(output.includes("127.0.0.1:9"), output);
});
