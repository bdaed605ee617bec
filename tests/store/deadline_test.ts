import assert from "node:assert/strict";
import { withDeadline } from "../../core/deadline.ts";

Deno.test("withDeadline() gives the value when it comes in time, and its timer does not outlive it", async () => {
  assert.deepEqual(await withDeadline(Promise.resolve(1), { ms: 60_000, fallback: null }), 1);
});

Deno.test("withDeadline() passes a failure in time through", async () => {
  await assert.rejects(
    withDeadline(Promise.reject(new Error("boom")), { ms: 60_000, fallback: null }),
    { message: "boom" },
  );
});

Deno.test("withDeadline() gives the fallback when the work is late", async () => {
  const late = Promise.withResolvers<number>();
  assert.deepEqual(await withDeadline(late.promise, { ms: 10, fallback: "late" }), "late");
  late.resolve(1);
});
