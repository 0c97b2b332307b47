import { test } from "node:test";
import assert from "node:assert/strict";
import { toolResult, uiResourceOf } from "../src/mcp-resource.js";

const block = (uri: string, mimeType = "text/html;profile=mcp-app") => ({
  type: "resource",
  resource: { uri, mimeType, text: "<p>view</p>", _meta: { ui: { csp: { connectDomains: [] } } } },
});

test("a ui:// resource is found as the output, in content, or in _meta.ui.resource", () => {
  assert.deepEqual(uiResourceOf(block("ui://tamebi/a.html")), { uri: "ui://tamebi/a.html", html: "<p>view</p>", csp: { connectDomains: [] } });
  assert.equal(uiResourceOf({ content: [{ type: "text", text: "x" }, block("ui://t/b.html")] })?.uri, "ui://t/b.html");
  assert.equal(uiResourceOf({ _meta: { ui: { resource: block("ui://t/c.html") } } })?.uri, "ui://t/c.html");
});

test("no view: other schemes, other types, plain outputs", () => {
  assert.equal(uiResourceOf(block("https://evil.example/a.html")), undefined);
  assert.equal(uiResourceOf(block("ui://t/a.png", "image/png")), undefined);
  assert.equal(uiResourceOf({ files: [] }), undefined);
  assert.equal(uiResourceOf("text"), undefined);
  assert.equal(uiResourceOf(null), undefined);
});

test("the view is sent the text blocks and structuredContent, not the resource again", () => {
  const result = toolResult({ content: [block("ui://t/a.html"), { type: "text", text: "1 file" }], structuredContent: { files: [1] } });
  assert.deepEqual(result, { content: [{ type: "text", text: "1 file" }], structuredContent: { files: [1] } });
  assert.deepEqual(toolResult({ summary: "x" }), {
    content: [{ type: "text", text: JSON.stringify({ summary: "x" }, null, 2) }],
    structuredContent: { summary: "x" },
  });
});
