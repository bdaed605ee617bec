// Client addresses a client cannot choose (issue 22): a flood of forged or many addresses, against
// the service as a real process behind a proxy that appends to x-forwarded-for, never locks a
// real client out of signing in.
import assert from "node:assert/strict";
import { CookieJar, createTestWallet } from "../support/sign_in.ts";
import { callProcess, signInOnProcess, startServiceProcess } from "../support/service_runner.ts";

const FLOOD = 20_000;
// More than the 10,000 clients the sign-in challenge's memory table holds.
const IN_FLIGHT_BEFORE_SIGN_IN = 12_000;
const CONCURRENCY = 48;
const LIMIT = 30;

function challenge(url: string, forwardedFor: string, address: string): Promise<Response> {
  return callProcess({ url }, "/auth/wallet/challenge", {
    json: { address },
    headers: { "x-forwarded-for": forwardedFor },
  });
}

/** Sends `FLOOD` challenges, `CONCURRENCY` at a time; counts answers by status as they come. */
function flood(url: string, forwardedFor: (i: number) => string) {
  const counts = { sent: 0, byStatus: new Map<number, number>() };
  const address = createTestWallet().address;
  let next = 0;
  const worker = async () => {
    while (next < FLOOD) {
      const i = next++;
      counts.sent++;
      const res = await challenge(url, forwardedFor(i), address);
      await res.body?.cancel();
      counts.byStatus.set(res.status, (counts.byStatus.get(res.status) ?? 0) + 1);
    }
  };
  const done = Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { counts, done };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

const hex = (n: number) => n.toString(16);

Deno.test("With 20,000 forged addresses in flight, a real client still signs in (real process)", async (t) => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  await using service = await startServiceProcess({
    KV_PATH: kvPath,
    SECRET: "client-flood-secret-client-flood-secret-01",
    CLIENT_IP_HEADER: "x-forwarded-for",
    LIMIT_SIGNIN_CHALLENGES_PER_MINUTE: String(LIMIT),
  });
  const developer = createTestWallet();
  const cases: Array<[string, (i: number) => string, "one client" | "many clients"]> = [
    [
      "one client writes 20,000 addresses before the one its proxy adds",
      (i) => `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}, 203.0.113.9`,
      "one client",
    ],
    [
      "one client uses 20,000 addresses of its IPv6 /64",
      (i) => `2001:db8:77:1:${hex(i)}:${hex(i * 7 & 0xffff)}::1`,
      "one client",
    ],
    [
      "20,000 clients, each with an address of its own",
      (i) => `198.18.${i >> 8}.${i & 255}`,
      "many clients",
    ],
  ];
  for (const [name, forwardedFor, who] of cases) {
    await t.step(name, async () => {
      // Given: 20,000 sign-in challenges in flight, more than the memory table holds.
      const { counts, done } = flood(service.url, forwardedFor);
      await until(() => counts.sent >= IN_FLIGHT_BEFORE_SIGN_IN);

      // When: a real client behind the same proxy signs in meanwhile.
      const jar = new CookieJar();
      const signedIn = await signInOnProcess(service, developer, {
        jar,
        headers: { "x-forwarded-for": "192.0.2.77" },
      });
      await done;

      // Then: it is signed in, and the flood counted as what it is.
      assert.deepEqual(signedIn.status, 200, JSON.stringify(signedIn.body));
      assert.ok(jar.get("__Host-svc_dev"), "a developer session cookie");
      const accepted = counts.byStatus.get(200) ?? 0;
      assert.deepEqual(accepted + (counts.byStatus.get(429) ?? 0), FLOOD);
      if (who === "one client") {
        // At most the limit per minute (two minutes if the flood spans a minute's end).
        assert.ok(accepted <= 2 * LIMIT, `${accepted} of one client's challenges accepted`);
      } else {
        // Each address its own client: the full table made room for the newcomers.
        assert.ok(accepted > IN_FLIGHT_BEFORE_SIGN_IN, `${accepted} accepted`);
      }
    });
  }
  await Deno.remove(kvPath);
});
