// Finding an MCP Apps view in a tool result, and the CallToolResult the
// view is sent. Pure; unit-tested by `npm test` (test/mcp-resource.test.ts).

export interface UiResource {
  uri: string;
  html: string;
  csp?: unknown;
}

const MCP_APP_MIME = "text/html;profile=mcp-app";

export function record(value: unknown): Record<string, unknown> | undefined {
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

