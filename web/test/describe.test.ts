import { test } from "node:test";
import assert from "node:assert/strict";
import { actionHeadline, argumentLines, mailPreviewText, resultSummary } from "../src/describe.js";

test("the mail preview is the exact plain text, body included", () => {
  const text = mailPreviewText({ to: ["bob@example.com"], cc: [], subject: "Stand-up", body: "Bob, the stand-up moves to 10:00." });
  assert.equal(text, "To: bob@example.com\nCc: \nSubject: Stand-up\n\nBob, the stand-up moves to 10:00.");
});

test("headlines name the action and its target", () => {
  assert.equal(actionHeadline("calendar_create_event", { summary: "Budget review" }), "Create the calendar event “Budget review”");
  assert.equal(actionHeadline("deck_create_card", { title: "Order pizza" }), "Create the Deck card “Order pizza”");
  assert.equal(actionHeadline("other_tool", {}), "Run other_tool");
});

test("every argument is listed", () => {
  assert.deepEqual(argumentLines({ title: "x", board_id: 1, tags: ["a"] }), ["title: x", "board_id: 1", 'tags: ["a"]']);
  assert.deepEqual(argumentLines(null), []);
});

test("result summaries", () => {
  assert.equal(resultSummary({ summary: "Budget review", uid: "1" }), "Budget review");
  assert.equal(resultSummary({ files: [1, 2, 3] }), "3 files");
  assert.equal(resultSummary({ files: [1] }), "1 file");
  assert.equal(resultSummary("first line\nsecond"), "first line");
  assert.equal(resultSummary([1]), "1 item");
  assert.equal(resultSummary({}), "done");
  assert.equal(resultSummary({ content: [{ type: "resource" }, { type: "text", text: "1 file: a.docx\nmore" }], structuredContent: {} }), "1 file: a.docx");
  assert.equal(resultSummary({ preview_id: "p1", to: ["b@x"], cc: [], subject: "Stand-up" }), "Stand-up");
});
