import { test } from "node:test";
import assert from "node:assert/strict";
import { GENERIC, HttpError, describeError, parseEnvelope } from "../src/errors.js";

const envelope = (message: string, requestId: string) => JSON.stringify({ error: { message, requestId } });

test("an envelope with a request id shows the server's sentence and the id", () => {
  const shown = describeError(new HttpError(502, envelope("The assistant is not reachable right now.", "req-1")));
  assert.deepEqual(shown, { message: "The assistant is not reachable right now.", requestId: "req-1" });
});

test("an envelope on any status is shown when it has an id, 401 included", () => {
  const shown = describeError(new HttpError(401, envelope("Your Nextcloud session has ended.", "r9")));
  assert.equal(shown.message, "Your Nextcloud session has ended.");
  assert.equal(shown.requestId, "r9");
});

test("an error chunk's errorText envelope (no outer error key) is shown with its id", () => {
  const chunk = JSON.stringify({ message: "The model is unreachable. Try again later.", requestId: "abc" });
  assert.deepEqual(describeError(new Error(chunk)), { message: "The model is unreachable. Try again later.", requestId: "abc" });
});

test("server text without a request id is never shown", () => {
  for (const body of [
    JSON.stringify({ error: { message: "internal host db-3.example failed" } }),
    JSON.stringify({ error: { message: "x", requestId: "" } }),
    JSON.stringify({ error: { message: "", requestId: "r" } }),
    JSON.stringify({ error: { message: "x", requestId: 7 } }),
    JSON.stringify({ message: "CSRF check failed" }),
    "<html>Bad gateway from nginx at 10.0.0.3</html>",
    "",
    "null",
    "[1,2]",
  ]) {
    const shown = describeError(new HttpError(500, body));
    assert.deepEqual(shown, { message: GENERIC.failed }, body);
  }
});

test("exactly four generic messages, chosen by status", () => {
  assert.equal(describeError(new HttpError(412, JSON.stringify({ message: "CSRF check failed" }))).message, GENERIC.signedOut);
  assert.equal(describeError(new HttpError(401, "")).message, GENERIC.signedOut);
  assert.equal(describeError(new HttpError(429, "slow down")).message, GENERIC.tooMany);
  assert.equal(describeError(new HttpError(502, "<html>")).message, GENERIC.unreachable);
  assert.equal(describeError(new HttpError(503, "")).message, GENERIC.unreachable);
  assert.equal(describeError(new HttpError(500, "")).message, GENERIC.failed);
  assert.equal(describeError(new HttpError(404, "")).message, GENERIC.failed);
  assert.equal(new Set(Object.values(GENERIC)).size, 4);
});

test("a network failure (fetch's TypeError) is 'cannot reach'", () => {
  assert.deepEqual(describeError(new TypeError("Failed to fetch")), { message: GENERIC.unreachable });
});

test("a plain error chunk text without an envelope is generic", () => {
  assert.deepEqual(describeError(new Error("Something exploded at 10.1.2.3")), { message: GENERIC.failed });
  assert.deepEqual(describeError("weird"), { message: GENERIC.failed });
  assert.deepEqual(describeError(undefined), { message: GENERIC.failed });
});

test("parseEnvelope reads both shapes", () => {
  assert.deepEqual(parseEnvelope(envelope("m", "r")), { message: "m", requestId: "r" });
  assert.deepEqual(parseEnvelope(JSON.stringify({ message: "m", requestId: "r" })), { message: "m", requestId: "r" });
  assert.equal(parseEnvelope("not json"), undefined);
});
