// The chat page: conversation list, the chat, approval cards, mail drafts
// and the memory view, in plain DOM. Every string from the server or the
// model is set with textContent, never as markup.
import "./style.css";
import type { UIMessage } from "ai";
import { api, type ConversationSummary, type Fact } from "./api";
import { Chat } from "./chat";
import { actionHeadline, argumentLines, mailPreviewText, resultSummary } from "./describe";
import { describeError } from "./errors";
import { checkFact, sourceLabel } from "./memory";
import { renderMcpApp, uiResourceOf } from "./mcp-app";

type Attrs = Record<string, string | boolean | undefined>;

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return el;
}

function newId(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// ---- layout -----------------------------------------------------------------

const mount = document.getElementById("tamebi") ?? document.body.appendChild(h("main", { id: "tamebi" }));
mount.classList.add("tamebi");
mount.replaceChildren();

const conversationList = h("ul", { class: "tamebi-conversations", "aria-label": "Conversations" });
const newChatButton = h("button", { type: "button", class: "tamebi-new" }, "New chat");
const memoryToggle = h("button", { type: "button", "aria-expanded": "false", "aria-controls": "tamebi-memory" }, "Memory");
const sidebar = h(
  "nav",
  { class: "tamebi-sidebar", "aria-label": "Conversations" },
  newChatButton,
  h("h2", { class: "tamebi-heading" }, "Conversations"),
  conversationList,
  memoryToggle,
);

const messagesEl = h("div", { class: "tamebi-messages", id: "tamebi-messages", "aria-label": "Messages", tabindex: "-1" });
const announcer = h("div", { class: "tamebi-visually-hidden", "aria-live": "polite", "aria-atomic": "true", id: "tamebi-announcer" });
const errorEl = h("div", { class: "tamebi-error", role: "alert", id: "tamebi-error" });
const question = h("textarea", {
  id: "tamebi-question",
  name: "question",
  rows: "2",
  placeholder: "Ask about your files, calendar, Deck or mail…",
});
const sendButton = h("button", { type: "submit", class: "tamebi-primary" }, "Send");
const stopButton = h("button", { type: "button", hidden: true }, "Stop");
const statusEl = h("span", { class: "tamebi-status", id: "tamebi-status" });
const composer = h(
  "form",
  { class: "tamebi-composer", "aria-label": "Ask Tamebi" },
  h("label", { for: "tamebi-question" }, "Your question"),
  question,
  h("div", { class: "tamebi-composer-actions" }, statusEl, stopButton, sendButton),
);
const chatSection = h("section", { class: "tamebi-chat", "aria-label": "Chat" }, messagesEl, errorEl, composer, announcer);

const factList = h("ul", { class: "tamebi-facts" });
// A fact the user adds is stored as theirs (the assistant's own are
// approved one by one in the chat and stored as the assistant's).
const factInput = h("input", { id: "tamebi-fact", name: "fact", type: "text", autocomplete: "off", "aria-describedby": "tamebi-fact-error" });
const factError = h("p", { id: "tamebi-fact-error", class: "tamebi-fact-error", "aria-live": "polite" });
const factForm = h(
  "form",
  { class: "tamebi-fact-form", "aria-label": "Add a fact" },
  h("label", { for: "tamebi-fact" }, "Something Tamebi should remember about you"),
  factInput,
  h("button", { type: "submit" }, "Remember"),
  factError,
);
const memoryPanel = h(
  "section",
  { class: "tamebi-memory", id: "tamebi-memory", "aria-labelledby": "tamebi-memory-title", hidden: true },
  h("h2", { id: "tamebi-memory-title", class: "tamebi-heading" }, "What Tamebi remembers"),
  factList,
  factForm,
);

mount.append(sidebar, chatSection, memoryPanel);

// ---- state ------------------------------------------------------------------

let conversations: ConversationSummary[] = [];
let chat: Chat;
let previousStatus = "ready";
/** Mail previews the user acted on: previewId → what happened. */
const mailStates = new Map<string, { state: "sending" | "sent" | "saved" | "failed"; text: string }>();
/** Open tool-call details, by toolCallId, kept across re-renders. */
const openDetails = new Set<string>();
const rendered = new Map<string, { signature: string; el: HTMLElement }>();

function showError(error: unknown | undefined) {
  errorEl.replaceChildren();
  if (error === undefined) return;
  const shown = describeError(error);
  errorEl.append(h("p", {}, shown.message));
  if (shown.requestId) {
    errorEl.append(h("p", { class: "tamebi-request-id" }, "Request ID for support: ", h("code", {}, shown.requestId)));
  }
}

function startChat(id: string, messages: UIMessage[]) {
  if (chat && chat.status !== "ready" && chat.status !== "error") {
    void chat.stop();
  }
  rendered.clear();
  messagesEl.replaceChildren();
  previousStatus = "ready";
  chat = new Chat(id, messages, () => render());
  showError(undefined);
  render();
  renderConversations();
}

// ---- rendering ------------------------------------------------------------

interface ToolPart {
  type: string;
  toolName?: string;
  toolCallId: string;
  state: string;
  input?: unknown;
  output?: unknown;
  errorText?: string;
  approval?: { id: string; approved?: boolean; reason?: string };
}

function toolNameOf(part: ToolPart): string {
  return part.type === "dynamic-tool" ? (part.toolName ?? "tool") : part.type.replace(/^tool-/, "");
}

function pre(text: string, cls = ""): HTMLPreElement {
  return h("pre", { class: cls || undefined }, text);
}

function approvalCard(part: ToolPart, name: string): HTMLElement {
  const headingId = `approval-${part.toolCallId}`;
  const exact =
    name === "mail_compose" ? pre(mailPreviewText(part.input), "tamebi-mail-text") : pre(argumentLines(part.input).join("\n"));
  const approve = h("button", { type: "button", class: "tamebi-primary", "data-focus": `approve-${part.toolCallId}` }, "Approve");
  const deny = h("button", { type: "button", "data-focus": `deny-${part.toolCallId}` }, "Deny");
  const decide = (approved: boolean) => {
    if (!part.approval) return;
    approve.disabled = true;
    deny.disabled = true;
    showError(undefined);
    void chat.addToolApprovalResponse({ id: part.approval.id, approved });
  };
  approve.addEventListener("click", () => decide(true));
  deny.addEventListener("click", () => decide(false));
  return h(
    "div",
    { class: "tamebi-approval", role: "group", "aria-labelledby": headingId, "data-tool": name },
    h("h3", { id: headingId }, actionHeadline(name, part.input)),
    h("p", { class: "tamebi-approval-tool" }, `Tool: ${name}. Nothing happens until you approve. Exactly this will be used:`),
    exact,
    h("div", { class: "tamebi-approval-actions" }, approve, deny),
  );
}

function mailDraft(output: Record<string, unknown>): HTMLElement {
  const previewId = String(output.preview_id ?? output.previewId ?? "");
  const text = typeof output.preview === "string" ? output.preview : mailPreviewText(output);
  const known = mailStates.get(previewId);
  const send = h("button", { type: "button", class: "tamebi-primary", "data-focus": `send-${previewId}` }, "Send");
  const save = h("button", { type: "button", "data-focus": `save-${previewId}` }, "Save as draft");
  const done = known !== undefined && known.state !== "failed";
  send.disabled = done;
  save.disabled = done;
  const act = async (what: "send" | "save") => {
    mailStates.set(previewId, { state: "sending", text: what === "send" ? "Sending…" : "Saving…" });
    render();
    try {
      await (what === "send" ? api.sendMail(previewId) : api.saveMail(previewId));
      mailStates.set(previewId, {
        state: what === "send" ? "sent" : "saved",
        text: what === "send" ? "Sent. It is in your Sent folder." : "Saved in your Drafts folder.",
      });
      showError(undefined);
    } catch (error) {
      mailStates.set(previewId, { state: "failed", text: "Not sent." });
      showError(error);
    }
    render();
    announce(mailStates.get(previewId)?.text ?? "");
  };
  send.addEventListener("click", () => void act("send"));
  save.addEventListener("click", () => void act("save"));
  return h(
    "div",
    { class: "tamebi-mail", "data-preview-id": previewId },
    h("h3", {}, "Mail ready for your review — not sent"),
    pre(text, "tamebi-mail-text"),
    h("div", { class: "tamebi-approval-actions" }, send, save, known ? h("span", { class: "tamebi-mail-state" }, known.text) : null),
  );
}

function toolCall(part: ToolPart, decidable: boolean): HTMLElement {
  const name = toolNameOf(part);
  if (part.state === "approval-requested" && decidable) {
    return approvalCard(part, name);
  }
  let status: string;
  let cls: string;
  switch (part.state) {
    case "input-streaming":
    case "input-available":
      status = "running…";
      cls = "running";
      break;
    case "approval-responded":
      status = part.approval?.approved ? "approved, running…" : "denied";
      cls = part.approval?.approved ? "running" : "denied";
      break;
    case "output-available":
      status = `done: ${resultSummary(part.output)}`;
      cls = "done";
      break;
    case "output-error":
      status = `failed: ${part.errorText ?? "the call failed"}`;
      cls = "failed";
      break;
    case "output-denied":
      status = "denied — nothing was done";
      cls = "denied";
      break;
    case "approval-requested":
      // A later question moved on: the orchestrator denied it.
      status = "not approved — nothing was done";
      cls = "denied";
      break;
    default:
      status = part.state;
      cls = "running";
  }
  const details = h(
    "details",
    { class: `tamebi-tool tamebi-tool-${cls}`, "data-tool": name, "data-state": part.state, open: openDetails.has(part.toolCallId) },
    h("summary", {}, h("span", { class: "tamebi-tool-name" }, name), " — ", status),
    h("p", { class: "tamebi-tool-label" }, "Arguments"),
    pre(argumentLines(part.input).join("\n") || "(none)"),
  );
  if (part.state === "output-available") {
    details.append(
      h("p", { class: "tamebi-tool-label" }, "Result"),
      pre(typeof part.output === "string" ? part.output : JSON.stringify(part.output, null, 2)),
    );
  }
  details.addEventListener("toggle", () => {
    if (details.open) openDetails.add(part.toolCallId);
    else openDetails.delete(part.toolCallId);
  });
  const wrapper = h("div", { class: "tamebi-tool-wrap" }, details);
  if (part.state === "output-available" && name === "mail_compose" && part.output && typeof part.output === "object") {
    wrapper.append(mailDraft(part.output as Record<string, unknown>));
  }
  const ui = part.state === "output-available" ? uiResourceOf(part.output) : undefined;
  if (ui) {
    wrapper.append(renderMcpApp(ui, { toolName: name, input: part.input, output: part.output }));
  }
  return wrapper;
}

function messageElement(message: UIMessage, isLast: boolean): HTMLElement {
  const who = message.role === "user" ? "You" : "Tamebi";
  const el = h("article", { class: `tamebi-message tamebi-${message.role}`, "data-message-id": message.id, "aria-label": `${who} said` });
  el.append(h("h3", { class: "tamebi-who" }, who));
  for (const part of message.parts) {
    if (part.type === "text") {
      el.append(h("div", { class: "tamebi-text" }, part.text));
    } else if (part.type === "dynamic-tool" || part.type.startsWith("tool-")) {
      el.append(toolCall(part as unknown as ToolPart, isLast));
    }
  }
  return el;
}

function render() {
  const focusKey = (document.activeElement as HTMLElement | null)?.dataset?.focus;
  const mailSignature = JSON.stringify([...mailStates]);
  const wanted: HTMLElement[] = [];
  const seen = new Set<string>();
  const lastId = chat.messages.at(-1)?.id;
  for (const message of chat.messages) {
    // An assistant message with nothing to show yet (a failed turn) takes no room.
    const visible = message.parts.some((p) => (p.type === "text" && p.text !== "") || p.type === "dynamic-tool" || p.type.startsWith("tool-"));
    if (message.role === "assistant" && !visible) continue;
    seen.add(message.id);
    const isLast = message.id === lastId;
    // Only a message with undecided calls looks different once it is not the last.
    const pending = message.parts.some((p) => "state" in p && p.state === "approval-requested");
    const signature =
      JSON.stringify(message) + (message.role === "assistant" ? mailSignature : "") + (pending && isLast ? "|last" : "");
    let entry = rendered.get(message.id);
    if (!entry || entry.signature !== signature) {
      entry = { signature, el: messageElement(message, isLast) };
      rendered.set(message.id, entry);
    }
    wanted.push(entry.el);
  }
  for (const id of [...rendered.keys()]) if (!seen.has(id)) rendered.delete(id);
  // Replace only what changed, so a framed MCP App is not reloaded.
  wanted.forEach((el, index) => {
    const current = messagesEl.children[index];
    if (current === el) return;
    if (current) messagesEl.replaceChild(el, current);
    else messagesEl.append(el);
  });
  while (messagesEl.children.length > wanted.length) messagesEl.lastElementChild?.remove();
  if (focusKey) {
    const again = messagesEl.querySelector<HTMLElement>(`[data-focus="${CSS.escape(focusKey)}"]`);
    if (again && again !== document.activeElement) again.focus();
  }

  const status = chat.status;
  const busy = status === "submitted" || status === "streaming";
  sendButton.disabled = busy;
  stopButton.hidden = !busy;
  statusEl.textContent = status === "submitted" ? "Sending…" : status === "streaming" ? "Tamebi is answering…" : "";
  mount.dataset.status = status;
  if (status === "error") {
    showError(chat.error);
  }
  if (busy && previousStatus !== status) {
    messagesEl.lastElementChild?.scrollIntoView({ block: "end" });
  } else if (busy) {
    messagesEl.scrollTop = messagesEl.scrollHeight;
  }
  if (previousStatus !== status && (status === "ready" || status === "error")) {
    onTurnEnd(status);
  }
  previousStatus = status;
}

function announce(text: string) {
  announcer.textContent = "";
  // A change after clearing is announced even when the text repeats.
  setTimeout(() => (announcer.textContent = text), 50);
}

function onTurnEnd(status: string) {
  const last = chat.messages.at(-1);
  if (status === "error") {
    announce(`Error: ${describeError(chat.error).message}`);
  } else if (last?.role === "assistant") {
    const pending = last.parts.filter((p) => "state" in p && p.state === "approval-requested");
    const text = last.parts
      .filter((p) => p.type === "text")
      .map((p) => (p as { text: string }).text)
      .join(" ");
    announce(pending.length > 0 ? `Tamebi asks for your approval. ${text}` : `Tamebi: ${text}`);
    const approve = messagesEl.querySelector<HTMLElement>(".tamebi-approval button");
    if (approve && document.activeElement === question) {
      // Keyboard users land on the decision; the question keeps its text.
      approve.focus();
    }
  }
  void refreshConversations();
}

// ---- conversations and memory ----------------------------------------------

function renderConversations() {
  conversationList.replaceChildren(
    ...conversations.map((conversation) => {
      const title = conversation.title || "Untitled conversation";
      const open = h(
        "button",
        { type: "button", class: "tamebi-conversation", "aria-current": chat?.id === conversation.id ? "page" : undefined },
        title,
      );
      open.addEventListener("click", () => void openConversation(conversation.id));
      const remove = h("button", { type: "button", class: "tamebi-delete", "aria-label": `Delete conversation “${title}”` }, "Delete");
      remove.addEventListener("click", () => void deleteConversation(conversation.id, title));
      return h("li", { "data-conversation-id": conversation.id }, open, remove);
    }),
  );
  if (conversations.length === 0) {
    conversationList.append(h("li", { class: "tamebi-empty" }, "No conversations yet."));
  }
}

async function refreshConversations() {
  try {
    conversations = (await api.conversations()).conversations ?? [];
    renderConversations();
  } catch (error) {
    showError(error);
  }
}

async function openConversation(id: string) {
  try {
    const conversation = await api.conversation(id);
    startChat(conversation.id, conversation.messages as UIMessage[]);
    messagesEl.focus();
  } catch (error) {
    showError(error);
  }
}

async function deleteConversation(id: string, title: string) {
  if (!window.confirm(`Delete the conversation “${title}”? This cannot be undone.`)) return;
  try {
    await api.deleteConversation(id);
    if (chat.id === id) startChat(newId(), []);
    announce(`Deleted “${title}”.`);
    await refreshConversations();
  } catch (error) {
    showError(error);
  }
}

function renderFacts(facts: Fact[]) {
  factList.replaceChildren(
    ...facts.map((fact) => {
      const source = sourceLabel(fact.source);
      const remove = h("button", { type: "button", class: "tamebi-delete", "aria-label": `Forget “${fact.text}”` }, "Forget");
      remove.addEventListener("click", async () => {
        try {
          await api.deleteFact(fact.id);
          announce("Forgotten.");
          await refreshMemory();
        } catch (error) {
          showError(error);
        }
      });
      return h(
        "li",
        { "data-fact-id": String(fact.id), "data-source": String(fact.source) },
        h("span", { class: "tamebi-fact-text" }, fact.text),
        h("span", { class: "tamebi-fact-source" }, ` — written by ${source}`),
        remove,
      );
    }),
  );
  if (facts.length === 0) factList.append(h("li", { class: "tamebi-empty" }, "Nothing remembered yet."));
}

async function refreshMemory() {
  try {
    renderFacts((await api.memory()).facts ?? []);
  } catch (error) {
    showError(error);
  }
}

// ---- events -----------------------------------------------------------------

composer.addEventListener("submit", (event) => {
  event.preventDefault();
  const text = question.value.trim();
  if (!text || chat.status === "submitted" || chat.status === "streaming") return;
  question.value = "";
  showError(undefined);
  void chat.sendMessage({ text });
});
question.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    composer.requestSubmit();
  }
});
stopButton.addEventListener("click", () => void chat.stop());
newChatButton.addEventListener("click", () => {
  startChat(newId(), []);
  question.focus();
});
factForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const checked = checkFact(factInput.value);
  if (!checked.ok) {
    factError.textContent = checked.message;
    factInput.focus();
    return;
  }
  factError.textContent = "";
  try {
    await api.addFact(checked.text);
    factInput.value = "";
    announce("Remembered.");
    await refreshMemory();
  } catch (error) {
    showError(error);
  }
});
memoryToggle.addEventListener("click", () => {
  const open = memoryPanel.hidden;
  memoryPanel.hidden = !open;
  memoryToggle.setAttribute("aria-expanded", String(open));
  if (open) void refreshMemory();
});

startChat(newId(), []);
void refreshConversations();
question.focus();
