// Pure helpers that turn tool calls into what the page shows: the approval
// card's exact statement of what will happen, and a one-line result summary.
// Unit-tested by `npm test` (test/describe.test.ts).

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function list(value: unknown): string {
  if (Array.isArray(value)) {
    return value.map(String).join(", ");
  }
  return value === undefined || value === null ? "" : String(value);
}

/**
 * The exact plain text of a mail that `mail_compose` would store for review,
 * as the app's preview shows it (docs/app-contract.md, Mail). The sender is
 * the user's own account, filled in by Nextcloud.
 */
export function mailPreviewText(input: unknown): string {
  const mail = asRecord(input);
  return [
    `To: ${list(mail.to)}`,
    `Cc: ${list(mail.cc)}`,
    `Subject: ${mail.subject === undefined ? "" : String(mail.subject)}`,
    "",
    mail.body === undefined ? "" : String(mail.body),
  ].join("\n");
}

/** A heading sentence for an approval card. */
export function actionHeadline(toolName: string, input: unknown): string {
  const args = asRecord(input);
  switch (toolName) {
    case "calendar_create_event":
      return `Create the calendar event “${String(args.summary ?? "")}”`;
    case "deck_create_card":
      return `Create the Deck card “${String(args.title ?? "")}”`;
    case "deck_move_card":
      return "Move a Deck card";
    case "files_write":
      return `Write the file ${String(args.path ?? "")}`;
    case "files_move":
      return `Move ${String(args.from ?? args.source ?? "")} to ${String(args.to ?? args.destination ?? "")}`;
    case "mail_compose":
      return "Prepare this mail for your review (it is not sent until you click Send)";
    case "memory_write":
      return "Remember this about you";
    default:
      return `Run ${toolName}`;
  }
}

/** Every argument as `name: value` lines, values as JSON unless plain strings. */
export function argumentLines(input: unknown): string[] {
  const args = asRecord(input);
  return Object.entries(args).map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
}

/** A short summary of a tool's output for the collapsed call. */
export function resultSummary(output: unknown): string {
  if (typeof output === "string") {
    const line = output.split("\n").find((l) => l.trim() !== "") ?? "";
    return line.length > 120 ? `${line.slice(0, 117)}…` : line;
  }
  if (Array.isArray(output)) {
    return `${output.length} item${output.length === 1 ? "" : "s"}`;
  }
  const record = asRecord(output);
  if (Array.isArray(record.content)) {
    // A CallToolResult: its first text block.
    const text = record.content.map(asRecord).find((block) => block.type === "text" && typeof block.text === "string");
    if (text) return resultSummary(text.text);
  }
  for (const key of ["summary", "title", "subject", "message", "path", "name"]) {
    if (typeof record[key] === "string" && record[key] !== "") {
      return String(record[key]);
    }
  }
  for (const [key, value] of Object.entries(record)) {
    if (Array.isArray(value)) {
      // "1 file", "3 files": a plural key loses its "s" for one.
      const noun = value.length === 1 && key.endsWith("s") ? key.slice(0, -1) : key;
      return `${value.length} ${noun}`;
    }
  }
  return "done";
}
