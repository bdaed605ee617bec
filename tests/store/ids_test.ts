import assert from "node:assert/strict";
import { monotonicUlid, ulid, ULID_PATTERN, ulidFloor, ulidSequence } from "../../core/ids.ts";

Deno.test("monotonicUlid() counts up within a millisecond, so ids made in one go keep their order", () => {
  // Given: thousands of ids made at once (many share a millisecond).
  const ids = Array.from({ length: 5_000 }, () => monotonicUlid());

  // Then: each is a ULID, later than the one before, and the time part is the clock's.
  for (const id of ids) assert.match(id, ULID_PATTERN);
  for (let i = 1; i < ids.length; i++) {
    assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} < ${ids[i]}`);
  }
  assert.ok(ids.at(-1)!.slice(0, 10) <= ulid().slice(0, 10));
  assert.ok(new Set(ids.map((id) => id.slice(0, 10))).size < ids.length, "shared milliseconds");
});

Deno.test("ulidSequence() gives ids of the time it is given, in order within a millisecond, each source on its own", () => {
  const held = ulidSequence();
  const other = ulidSequence();
  const time = Date.UTC(2026, 0, 1);
  const ids = Array.from({ length: 100 }, (_, i) => {
    if (i % 2) other(time + 5); // another source's later ids do not disturb this one
    return held(time);
  });
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!);
  assert.ok(ids.every((id) => id.slice(0, 10) === ulidFloor(time).slice(0, 10)));
  assert.ok(held(time - 1) < ids[0]!, "an earlier time sorts earlier");
});
