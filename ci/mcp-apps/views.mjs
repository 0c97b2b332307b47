// Smoke test of mcp-nextcloud's MCP Apps views, as served (written to
// $VIEWS_DIR by `cargo run -p mcp-nextcloud --example write_views`), without
// a browser: each view runs against a minimal DOM and a fake host
// that speaks the MCP Apps postMessage protocol (ui/initialize, initialized,
// tool-result, resource-teardown). It checks the handshake, that untrusted
// strings are shown as text (never markup), that colours are validated, and
// that errors render their text. No npm packages.
//
//   bash ci/peers/mcp_apps.sh        (from the repository root; exit 1 on failure)
import { readFileSync } from "node:fs";
import assert from "node:assert/strict";
import vm from "node:vm";

if (!process.env.VIEWS_DIR) {
  console.error("VIEWS_DIR is not set: run bash ci/peers/mcp_apps.sh, which writes the served views there");
  process.exit(2);
}
const viewsDir = new URL(`file://${process.env.VIEWS_DIR.replace(/\/?$/, "/")}`);

function node(tag) {
  return {
    tag, children: [], attributes: {}, className: "", text: "",
    style: { properties: {}, setProperty(name, value) { this.properties[name] = value; } },
    set textContent(value) { this.text = String(value); this.children = []; },
    get textContent() { return [this.text, ...this.children.map((child) => child.textContent)].filter(Boolean).join("|"); },
    appendChild(child) { this.children.push(child); return child; },
    setAttribute(name, value) { this.attributes[name] = String(value); },
    getAttribute(name) { return this.attributes[name]; },
  };
}

/// Loads a view; returns what it sent and a way to deliver host messages.
function load(file) {
  const html = readFileSync(new URL(file, viewsDir), "utf8");
  assert.ok(!html.includes("{{"), `${file}: every slot is filled`);
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1]);
  assert.equal(scripts.length, 2, `${file}: the view script and the bridge`);
  const main = node("main");
  const root = node("html");
  root.setAttribute("data-app", file);
  root.scrollWidth = 320;
  root.scrollHeight = 240;
  const sent = [];
  const listeners = [];
  const parent = { postMessage: (message) => sent.push(structuredClone(message)) };
  const window = { parent, addEventListener: (type, listener) => type === "message" && listeners.push(listener) };
  const document = { documentElement: root, body: node("body"), createElement: node, getElementById: () => main };
  const context = vm.createContext({ window, document, Intl, Date, Promise, Math, Object, Array, String, isNaN, JSON });
  for (const script of scripts) vm.runInContext(script, context);
  const deliver = (data, source = parent) => listeners.forEach((listener) => listener({ source, data }));
  return { main, root, sent, deliver };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

async function handshake(view) {
  const initialize = view.sent.find((message) => message.method === "ui/initialize");
  assert.ok(initialize, "the view starts with ui/initialize");
  assert.equal(initialize.jsonrpc, "2.0");
  assert.equal(initialize.params.protocolVersion, "2026-01-26");
  assert.ok(initialize.params.appInfo.name);
  // A message from anywhere but the host is ignored.
  view.deliver({ jsonrpc: "2.0", id: initialize.id, result: {} }, {});
  await settle();
  assert.ok(!view.sent.some((message) => message.method === "ui/notifications/initialized"));
  view.deliver({
    jsonrpc: "2.0",
    id: initialize.id,
    result: {
      protocolVersion: "2026-01-26",
      hostContext: { theme: "dark", locale: "en-GB", timeZone: "Europe/Paris", styles: { variables: { "--color-text-primary": "#fff", "--x": "red;}" } } },
    },
  });
  await settle();
  assert.ok(view.sent.some((message) => message.method === "ui/notifications/initialized"));
  assert.equal(view.root.attributes["data-theme"], "dark");
  assert.equal(view.root.style.properties["--color-text-primary"], "#fff");
  assert.equal(view.root.style.properties["--x"], undefined, "a value that could close the rule is dropped");
}

/// Loads a view and completes its handshake with the host.
async function open(file) {
  const view = load(file);
  await handshake(view);
  return view;
}

/// Delivers the host's ui/notifications/tool-result: a tool's text and structured content.
function toolResult(view, text, structuredContent) {
  view.deliver({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: { content: [{ type: "text", text }], structuredContent } });
}

/// Delivers a failed tool's result: its text only.
function toolError(view, text) {
  view.deliver({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: { isError: true, content: [{ type: "text", text }] } });
}

async function teardown(view) {
  view.deliver({ jsonrpc: "2.0", id: 41, method: "ui/resource-teardown", params: { reason: "done" } });
  assert.deepEqual(view.sent.at(-1), { jsonrpc: "2.0", id: 41, result: {} });
  view.deliver({ jsonrpc: "2.0", id: 42, method: "ui/unknown", params: {} });
  assert.equal(view.sent.at(-1).error.code, -32601);
}

{
  const view = await open("calendar-events.html");
  toolResult(view, "2 event occurrences", {
    occurrences: [
      {
        uid: "a", calendar: { uri: "personal", name: "Personnel", color: "#0082c9" },
        summary: "<img src=x onerror=alert(1)>", start: "2026-03-09T09:00:00+01:00",
        end: "2026-03-09T09:15:00+01:00", time_zone: "Europe/Berlin", all_day: false,
        recurring: true, location: "Salle Écluse",
      },
      {
        uid: "b", calendar: { uri: "personal", name: "Personnel", color: "red;background:url(x)" },
        summary: "Congés", start: "2026-03-10", end: "2026-03-10", time_zone: null,
        all_day: true, recurring: false,
      },
    ],
    truncated: true,
  });
  const shown = view.main.textContent;
  assert.match(shown, /Monday,? 9 March 2026/);
  assert.match(shown, /09:00–09:15 \(Europe\/Berlin\)/);
  assert.match(shown, /<img src=x onerror=alert\(1\)>/, "markup in a title is shown as text");
  assert.match(shown, /Salle Écluse · Personnel · recurring/);
  assert.match(shown, /Tuesday,? 10 March 2026\|all day\|Congés/);
  assert.match(shown, /More events exist/);
  const items = view.main.children.filter((child) => child.tag === "ol").flatMap((list) => list.children);
  assert.equal(items[0].style.borderLeftColor, "#0082c9");
  assert.equal(items[1].style.borderLeftColor, undefined, "a colour that is not a colour is not used");
  assert.ok(view.sent.some((message) => message.method === "ui/notifications/size-changed"));
  toolError(view, "Nextcloud refused the user's sign-in for the calendar.");
  assert.equal(view.main.textContent, "Nextcloud refused the user's sign-in for the calendar.");
  await teardown(view);
}

{
  const view = await open("files-search.html");
  toolResult(view, "- Documents/notes.md", {
    files: [
      { fileid: 1, path: "Documents/<b>notes</b>.md", type: "file", size: 2048, mtime: "2026-03-12T11:45:00Z" },
      { fileid: 2, path: "Manuals", type: "folder", size: 0, mtime: "2026-02-01T12:00:00Z" },
    ],
    truncated: false,
  });
  const shown = view.main.textContent;
  assert.match(shown, /Name\|Size\|Modified/);
  // Modification times in the host's time zone (Paris), whatever the machine's.
  assert.match(shown, /📄 Documents\/<b>notes<\/b>\.md\|2\.0 KB\|12 Mar 2026,? 12:45/);
  assert.match(shown, /📁 Manuals\|1 Feb 2026,? 13:00/);
  assert.doesNotMatch(shown, /More files match/);
  await teardown(view);
}

console.log("mcp-apps views: ok");
