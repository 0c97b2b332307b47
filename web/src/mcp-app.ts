// MCP Apps (SEP-1865) in the page: a tool result that carries a `ui://`
// HTML resource is shown in `<iframe sandbox="allow-scripts">` framing the
// same-origin re-serve URL (POST /apps/tamebi/api/ui, docs/app-contract.md),
// and the page is the host of the postMessage JSON-RPC: it answers
// `ui/initialize`, then sends `ui/notifications/tool-input` and
// `ui/notifications/tool-result` once the view says it is initialized.
// Without a resource (or if re-serving fails) the text result shows alone.
import { api } from "./api";

export interface UiResource {
  uri: string;
  html: string;
  csp?: unknown;
}

const MCP_APP_MIME = "text/html;profile=mcp-app";
const PROTOCOL_VERSION = "2026-01-26";

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** An MCP embedded resource block `{type: "resource", resource: {uri: "ui://…", mimeType, text}}`. */
function fromBlock(block: unknown): UiResource | undefined {
  const outer = record(block);
  const resource = record(outer?.resource);
  if (outer?.type !== "resource" || !resource) return undefined;
  const uri = resource.uri;
  const text = resource.text;
  const mime = typeof resource.mimeType === "string" ? resource.mimeType.replace(/\s/g, "") : "";
  if (typeof uri !== "string" || !uri.startsWith("ui://") || typeof text !== "string") return undefined;
  if (mime !== "" && mime !== MCP_APP_MIME && mime !== "text/html") return undefined;
  const csp = record(record(record(resource._meta)?.ui)?.csp);
  return { uri, html: text, csp };
}

/**
 * The UI resource a tool output carries: the output is an embedded resource
 * block itself, or has one in `content` (a CallToolResult) or `_meta.ui.resource`.
 */
export function uiResourceOf(output: unknown): UiResource | undefined {
  const direct = fromBlock(output);
  if (direct) return direct;
  const object = record(output);
  if (!object) return undefined;
  if (Array.isArray(object.content)) {
    for (const block of object.content) {
      const found = fromBlock(block);
      if (found) return found;
    }
  }
  return fromBlock(record(record(object._meta)?.ui)?.resource);
}

function textOf(output: unknown): string {
  if (typeof output === "string") return output;
  return JSON.stringify(output, null, 2);
}

/**
 * The CallToolResult the view is sent: a result-shaped output keeps its
 * text blocks and `structuredContent` (the resource block is the view
 * itself, not sent again); any other output is the structured content,
 * with its JSON as the text.
 */
export function toolResult(output: unknown): { content: unknown[]; structuredContent?: unknown } {
  const object = record(output);
  if (object && (Array.isArray(object.content) || "structuredContent" in object)) {
    const content = Array.isArray(object.content) ? object.content.filter((block) => record(block)?.type === "text") : [];
    return { content, structuredContent: object.structuredContent };
  }
  return { content: [{ type: "text", text: textOf(output) }], structuredContent: output };
}

/** The framed view, wired to its host side; the text result stays beside it until the view is up. */
export function renderMcpApp(
  ui: UiResource,
  call: { toolName: string; input: unknown; output: unknown },
): HTMLElement {
  const container = document.createElement("div");
  container.className = "tamebi-app";
  const note = document.createElement("p");
  note.className = "tamebi-app-note";
  note.textContent = `Loading the ${call.toolName} view…`;
  container.append(note);

  void api
    .storeUi(ui.html, ui.csp ?? {})
    .then(({ url }) => {
      const frame = document.createElement("iframe");
      frame.setAttribute("sandbox", "allow-scripts");
      frame.title = `${call.toolName} view`;
      frame.className = "tamebi-app-frame";
      frame.setAttribute("referrerpolicy", "no-referrer");
      const onMessage = (event: MessageEvent) => {
        if (event.source !== frame.contentWindow) return;
        const message = record(event.data);
        if (!message || message.jsonrpc !== "2.0") return;
        const reply = (payload: Record<string, unknown>) =>
          frame.contentWindow?.postMessage({ jsonrpc: "2.0", id: message.id, ...payload }, "*");
        const notify = (method: string, params: unknown) =>
          frame.contentWindow?.postMessage({ jsonrpc: "2.0", method, params }, "*");
        switch (message.method) {
          case "ui/initialize":
            reply({
              result: {
                protocolVersion: PROTOCOL_VERSION,
                hostInfo: { name: "tamebi", version: "1" },
                hostCapabilities: {},
                hostContext: {
                  theme: window.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light",
                  locale: navigator.language,
                  timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
                  displayMode: "inline",
                },
              },
            });
            break;
          case "ui/notifications/initialized": {
            notify("ui/notifications/tool-input", { arguments: call.input ?? {} });
            notify("ui/notifications/tool-result", toolResult(call.output));
            note.textContent = `${call.toolName} view`;
            container.dataset.initialized = "true";
            break;
          }
          case "ui/notifications/size-changed": {
            const height = Number(record(message.params)?.height);
            if (Number.isFinite(height) && height > 0) frame.style.height = `${Math.min(Math.ceil(height), 800)}px`;
            break;
          }
          default:
            if (message.method !== undefined && message.id !== undefined) {
              reply({ error: { code: -32601, message: "Method not found" } });
            }
        }
      };
      window.addEventListener("message", onMessage);
      frame.src = url;
      container.append(frame);
    })
    .catch(() => {
      note.textContent = "The view could not be shown; the result is above as text.";
    });
  return container;
}
