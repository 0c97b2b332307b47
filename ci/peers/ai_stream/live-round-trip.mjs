// A whole conversation against the live stack, posted exactly as useChat
// posts it: the `ai` package's DefaultChatTransport (its fetch signs each
// request the way the Nextcloud app does; prepareSendMessagesRequest sends
// only the last message, trimmed, as the chat page does), and its own
// readUIMessageStream builds the assistant message from our stream.
//
//   ORCHESTRATOR_URL=http://127.0.0.1:9100 TAMEBI_SHARED_SECRET=... \
//   TAMEBI_TOKENS='{"mcp-nextcloud": "...", "nextcloud": "..."}' node live-round-trip.mjs
//
// Checks: a data step then an approval request; the approval posted back
// runs the call and the continuation extends the same message; a denial
// becomes an output-denied part; the stored history the orchestrator
// serves passes validateUIMessages and matches what the client holds.
import { createHash, createHmac, randomBytes } from "node:crypto";
import assert from "node:assert/strict";
import { DefaultChatTransport, readUIMessageStream, validateUIMessages } from "ai";

const base = process.env.ORCHESTRATOR_URL;
const secret = process.env.TAMEBI_SHARED_SECRET;
const tokens = JSON.parse(process.env.TAMEBI_TOKENS ?? "{}");
const uid = "alice";
let requests = 0;

// docs/identity.md: uid, timestamp, nonce, method, path and the body's hash.
function signedHeaders(method, path, body) {
  const timestamp = Math.floor(Date.now() / 1000).toString();
  const nonce = randomBytes(16).toString("hex");
  const digest = createHash("sha256").update(body ?? "").digest("hex");
  const signature = createHmac("sha256", secret)
    .update([uid, timestamp, nonce, method, path, digest].join("\n"))
    .digest("hex");
  requests += 1;
  const headers = {
    "x-tamebi-uid": uid,
    "x-tamebi-timestamp": timestamp,
    "x-tamebi-nonce": nonce,
    "x-tamebi-signature": signature,
    "x-request-id": `ai-peer-${requests}`,
    "x-tamebi-time-zone": "Europe/Paris",
  };
  for (const [audience, token] of Object.entries(tokens)) {
    headers[`x-tamebi-token-${audience}`] = token;
  }
  return headers;
}

async function signingFetch(url, init = {}) {
  const headers = new Headers(init.headers);
  const method = (init.method ?? "GET").toUpperCase();
  const path = new URL(url).pathname;
  for (const [name, value] of Object.entries(signedHeaders(method, path, init.body))) {
    headers.set(name, value);
  }
  return fetch(url, { ...init, headers });
}

/// The last message only; an assistant message trimmed to its decisions.
function trim(message) {
  if (message.role !== "assistant") {
    return message;
  }
  const parts = message.parts
    .filter((part) => part.state === "approval-responded")
    .map(({ type, toolCallId, state, approval }) => ({ type, toolCallId, state, approval }));
  return { id: message.id, role: message.role, parts };
}

const transport = new DefaultChatTransport({
  api: `${base}/api/chat`,
  fetch: signingFetch,
  prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({
    body: { id, trigger, messageId, message: trim(messages.at(-1)) },
  }),
});

const chatId = `ai-peer-${Date.now()}`;
const messages = [];

async function send(message, trigger = "submit-message") {
  const stream = await transport.sendMessages({
    chatId,
    trigger,
    messageId: message?.id,
    messages,
    abortSignal: undefined,
  });
  let built;
  for await (const snapshot of readUIMessageStream({
    stream,
    message,
    terminateOnError: true,
  })) {
    built = snapshot;
  }
  assert.ok(built, "the stream built a message");
  return built;
}

function user(text) {
  return { id: `u${messages.length}`, role: "user", parts: [{ type: "text", text }] };
}

function toolPart(message, name) {
  return message.parts.find((part) => part.type === "dynamic-tool" && part.toolName === name);
}

// 1. A data step, then an action waiting for approval.
messages.push(user("Schedule the budget review from my notes"));
let answer = await send(undefined);
assert.equal(toolPart(answer, "files_search")?.state, "output-available");
const event = toolPart(answer, "calendar_create_event");
assert.equal(event?.state, "approval-requested", JSON.stringify(answer.parts));
assert.ok(event.approval?.id);
messages.push(answer);

// 2. Approved the way useChat's addToolApprovalResponse does it.
event.state = "approval-responded";
event.approval = { ...event.approval, approved: true };
answer = await send(structuredClone(answer));
messages[messages.length - 1] = answer;
const ran = toolPart(answer, "calendar_create_event");
assert.equal(ran.state, "output-available", JSON.stringify(answer.parts));
assert.equal(ran.output.summary, "Budget review");
const said = answer.parts.filter((p) => p.type === "text").map((p) => p.text).join("");
assert.match(said, /budget review is in your calendar/);

// 3. A second action, denied.
messages.push(user("Add a card to order pizza"));
answer = await send(undefined);
const card = toolPart(answer, "deck_create_card");
assert.equal(card?.state, "approval-requested");
messages.push(answer);
card.state = "approval-responded";
card.approval = { ...card.approval, approved: false };
answer = await send(structuredClone(answer));
messages[messages.length - 1] = answer;
assert.equal(toolPart(answer, "deck_create_card").state, "output-denied");

await validateUIMessages({ messages });

// 4. The history the orchestrator stored is what the client holds.
const path = `/api/conversations/${chatId}`;
const response = await fetch(`${base}${path}`, { headers: signedHeaders("GET", path, "") });
assert.equal(response.status, 200);
const stored = (await response.json()).messages;
await validateUIMessages({ messages: stored });
const shape = (list) =>
  list.map((m) => ({
    id: m.id,
    role: m.role,
    parts: m.parts
      .filter((p) => p.type !== "step-start")
      .map((p) => `${p.type}:${p.toolName ?? ""}:${p.state ?? ""}`),
  }));
assert.deepEqual(shape(stored).map((m) => m.parts), shape(messages).map((m) => m.parts));
assert.deepEqual(
  shape(stored).filter((m) => m.role === "assistant").map((m) => m.id),
  shape(messages).filter((m) => m.role === "assistant").map((m) => m.id),
);
console.log(`ai@6 round trip: ${requests} signed requests, ${messages.length} messages, history matches`);
