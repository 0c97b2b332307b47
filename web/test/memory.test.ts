import { test } from "node:test";
import assert from "node:assert/strict";
import { FACT_BYTES_MAX, checkFact, sourceLabel } from "../src/memory.js";

test("a fact is trimmed text within the orchestrator's byte bound", () => {
  assert.deepEqual(checkFact("  I am on leave in August \n"), { ok: true, text: "I am on leave in August" });
  assert.deepEqual(checkFact("é".repeat(FACT_BYTES_MAX / 2)), { ok: true, text: "é".repeat(FACT_BYTES_MAX / 2) });
  const long = checkFact("é".repeat(FACT_BYTES_MAX / 2) + "x");
  assert.equal(long.ok, false);
  assert.match(long.ok ? "" : long.message, /1001 bytes; at most 1000/);
  const empty = checkFact(" \n\t");
  assert.equal(empty.ok, false);
  assert.match(empty.ok ? "" : empty.message, /Write what Tamebi should remember/);
});

test("who wrote a fact", () => {
  assert.equal(sourceLabel("user"), "you");
  assert.equal(sourceLabel("agent"), "the assistant");
});
