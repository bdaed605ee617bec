import assert from "node:assert/strict";
import { must } from "../../core/must.ts";

Deno.test("must() passes every present value through, falsy ones too", () => {
  for (const value of [0, "", false, 0n, [], {}]) assert.equal(must(value, "a value"), value);
});

Deno.test("must() throws naming what was missing when the value is undefined or null", () => {
  for (const value of [undefined, null]) {
    assert.throws(() => must(value, "the plan of p1"), { message: "Missing: the plan of p1" });
  }
});
