// MCP Apps (SEP-1865) in the page: a tool result that carries a `ui://`
// HTML resource is shown in `<iframe sandbox="allow-scripts">` framing the
// same-origin re-serve URL (POST /apps/tamebi/api/ui, docs/app-contract.md),
// and the page is the host of the postMessage JSON-RPC: it answers
// `ui/initialize`, then sends `ui/notifications/tool-input` and
// `ui/notifications/tool-result` once the view says it is initialized.
// Without a resource (or if re-serving fails) the text result shows alone.
import { api } from "./api";
import { record, toolResult, uiResourceOf, type UiResource } from "./mcp-resource";

export { uiResourceOf };

const PROTOCOL_VERSION = "2026-01-26";

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
