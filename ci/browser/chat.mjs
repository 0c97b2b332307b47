// The chat page in a real browser (Debian's chromium driven by
// playwright-core) against the stack `tamebi up` started with
// model-script.toml. Run by ci/peers/browser.sh:
//
//   TAMEBI_URL=http://127.0.0.1:PORT node chat.mjs
//
// Screenshots go to $SCREENSHOTS (default ci/artifacts/screenshots/).
// Each check prints one line; the first failure ends the run with exit 1.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
const base = process.env.TAMEBI_URL ?? "http://127.0.0.1:8080";
const shots = process.env.SCREENSHOTS ?? path.join(here, "../artifacts/screenshots");
// The default folder holds this run's screenshots only.
if (!process.env.SCREENSHOTS) rmSync(shots, { recursive: true, force: true });
mkdirSync(shots, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-background-networking"],
});
const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
const page = await context.newPage();
const problems = [];
page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
page.on("console", (message) => {
  // A failed request's console line names no URL; responses are checked below.
  if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
    problems.push(`console error: ${message.text()}`);
  }
});
page.on("response", (response) => {
  if (response.status() >= 400) problems.push(`HTTP ${response.status()} ${new URL(response.url()).pathname}`);
});

let step = 0;
async function check(name, run) {
  step += 1;
  const started = Date.now();
  try {
    await run();
    await page.screenshot({ path: path.join(shots, `${String(step).padStart(2, "0")}-${name}.png`), fullPage: true });
    console.log(`ok ${step} - ${name} (${Date.now() - started} ms)`);
  } catch (error) {
    await page.screenshot({ path: path.join(shots, `${String(step).padStart(2, "0")}-${name}-FAILED.png`), fullPage: true }).catch(() => {});
    console.log(`not ok ${step} - ${name}`);
    console.error(error);
    if (problems.length) console.error(problems.join("\n"));
    await browser.close();
    process.exit(1);
  }
}

const question = page.getByLabel("Your question");
const lastAssistant = () => page.locator("article.tamebi-assistant").last();
async function ask(text) {
  await question.fill(text);
  await question.press("Enter");
}
/// A new chat, and the question asked in it.
async function askInNewChat(text) {
  await page.getByRole("button", { name: "New chat" }).click();
  await ask(text);
}
/// The approval card of a tool call, once the turn waits for the decision.
async function approvalCard(tool) {
  const card = page.locator(`.tamebi-approval[data-tool=${tool}]`);
  await card.waitFor({ timeout: 15000 });
  return card;
}
async function idle() {
  await page.waitForFunction(() => {
    const status = document.getElementById("tamebi")?.dataset.status;
    return status === "ready" || status === "error";
  });
}

await check("login through the form", async () => {
  await page.goto(`${base}/apps/tamebi/`);
  await page.waitForURL(/\/login/);
  await page.fill("#user", "alice");
  await page.fill("#password", "alice-demo-password");
  await page.click("#submit-form");
  await page.waitForURL(/\/apps\/tamebi\/$/);
  await question.waitFor();
  assert.equal(await page.getByRole("button", { name: "New chat" }).count(), 1);
});

await check("text streams in before the stream ends", async () => {
  await ask("Answer slowly please");
  await page.locator("article.tamebi-user", { hasText: "Answer slowly please" }).waitFor();
  // The first words are visible while the page still says it is answering.
  await lastAssistant().locator(".tamebi-text", { hasText: "Here is a slow" }).waitFor({ timeout: 15000 });
  const midway = await page.evaluate(() => ({
    status: document.getElementById("tamebi")?.dataset.status,
    text: document.querySelector("article.tamebi-assistant:last-of-type .tamebi-text")?.textContent ?? "",
  }));
  assert.equal(midway.status, "streaming", JSON.stringify(midway));
  assert.ok(!midway.text.includes("finished yet."), `not all there yet: ${midway.text}`);
  await page.screenshot({ path: path.join(shots, "02a-streaming-midway.png") });
  await idle();
  await lastAssistant().getByText("nothing has finished yet.").waitFor();
  // The finished answer is announced once, politely.
  const live = page.locator("#tamebi-announcer");
  assert.equal(await live.getAttribute("aria-live"), "polite");
  await page.waitForFunction(() => document.getElementById("tamebi-announcer")?.textContent?.startsWith("Tamebi: Here is a slow answer"));
});

await check("the conversation is listed", async () => {
  await page.locator(".tamebi-conversations button.tamebi-conversation", { hasText: "Answer slowly" }).waitFor();
});

await check("approve a calendar event", async () => {
  await askInNewChat("Please schedule the budget review");
  const card = await approvalCard("calendar_create_event");
  await card.getByText("summary: Budget review").waitFor();
  await card.getByText("start: 2026-12-03T10:00:00").waitFor();
  await page.screenshot({ path: path.join(shots, "04a-approval-card.png") });
  // Keyboard: the decision has the focus once the turn waits for it.
  await card.getByRole("button", { name: "Approve" }).click();
  await lastAssistant().getByText("The budget review is in your calendar").waitFor({ timeout: 15000 });
  const call = lastAssistant().locator("details.tamebi-tool[data-tool=calendar_create_event]");
  assert.equal(await call.getAttribute("data-state"), "output-available");
  await call.locator("summary").click();
  await call.getByText("Budget review").first().waitFor();
  assert.match(await call.locator("summary").textContent(), /done: Budget review/);
});

await check("deny a Deck card", async () => {
  await ask("Add a card to order pizza");
  const card = await approvalCard("deck_create_card");
  await card.getByText("title: Order pizza").waitFor();
  // Keyboard only: the turn waits for a decision, so the focus is on Approve;
  // Tab reaches Deny, Enter presses it.
  await page.waitForFunction(() => document.activeElement?.textContent === "Approve");
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Deny");
  await page.keyboard.press("Enter");
  await lastAssistant().getByText("Understood: no card was created.").waitFor({ timeout: 15000 });
  const call = lastAssistant().locator("details.tamebi-tool[data-tool=deck_create_card]");
  assert.equal(await call.getAttribute("data-state"), "output-denied");
  assert.match(await call.locator("summary").textContent(), /denied/);
});

await check("a composed mail is sent only by the click", async () => {
  await askInNewChat("Write a mail bob about the stand-up");
  const card = await approvalCard("mail_compose");
  // The approval card shows the exact plain text, body included.
  const text = await card.locator("pre").textContent();
  assert.equal(text, "To: bob@example.com\nCc: \nSubject: Stand-up\n\nBob, the stand-up moves to 10:00.");
  await card.getByRole("button", { name: "Approve" }).click();
  const draft = page.locator(".tamebi-mail");
  await draft.waitFor({ timeout: 15000 });
  assert.match(await draft.locator("pre").textContent(), /Subject: Stand-up[\s\S]*Bob, the stand-up moves to 10:00\./);
  const sent = page.waitForRequest((request) => /\/api\/mail\/previews\/[^/]+\/send$/.test(request.url()) && request.method() === "POST");
  await draft.getByRole("button", { name: "Send" }).click();
  await sent;
  await draft.getByText("Sent.").waitFor();
});

await check("an error with a request id shows the server's text and the id", async () => {
  await askInNewChat("Now explode");
  await idle();
  const alert = page.getByRole("alert");
  await alert.getByText("Request ID for support").waitFor({ timeout: 20000 });
  const id = await alert.locator("code").textContent();
  assert.ok(id && id.length > 0, "a request id");
  assert.ok(!/Something went wrong/.test(await alert.textContent()), "the server's sentence, not a generic one");
});

await check("a network failure is the generic 'cannot reach'", async () => {
  await page.route("**/apps/tamebi/api/chat", (route) => route.abort("connectionrefused"));
  await ask("Are you there?");
  await idle();
  const alert = page.getByRole("alert");
  await alert.getByText("Can't reach the assistant right now. Check your connection and try again in a moment.").waitFor();
  assert.equal(await alert.locator("code").count(), 0, "no request id");
  await page.unroute("**/apps/tamebi/api/chat");
});

await check("an error without a request id is generic", async () => {
  // A stale request token: Nextcloud's own 412 {"message":"CSRF check failed"}, no id.
  await page.evaluate(() => {
    document.head.dataset.requesttoken = "stale-token";
  });
  await ask("Hello again");
  await idle();
  const alert = page.getByRole("alert");
  await alert.getByText("You are signed out or your session has expired. Reload the page to sign in again.").waitFor();
  assert.equal(await alert.locator("code").count(), 0, "no request id");
  assert.ok(!(await alert.textContent()).includes("CSRF"), "the server text is not shown");
});

await check("reload, open and delete a conversation", async () => {
  await page.reload();
  const listed = page.locator(".tamebi-conversations button.tamebi-conversation", { hasText: "schedule the budget review" });
  await listed.waitFor();
  await listed.click();
  await page.locator("details.tamebi-tool[data-tool=calendar_create_event][data-state=output-available]").waitFor();
  await page.locator("details.tamebi-tool[data-tool=deck_create_card][data-state=output-denied]").waitFor();
  page.once("dialog", (dialog) => dialog.accept());
  await page.getByRole("button", { name: /Delete conversation “Please schedule the budget review/ }).click();
  await listed.waitFor({ state: "detached" });
});

await check("memory: an approved fact is the assistant's, one added in the panel is yours, both forgotten", async () => {
  await askInNewChat("Please remember that I prefer green tea");
  const card = await approvalCard("memory_write");
  await card.getByText("fact: Prefers green tea").waitFor();
  await card.getByRole("button", { name: "Approve" }).click();
  await lastAssistant().getByText("Noted: you prefer green tea.").waitFor({ timeout: 15000 });
  await page.getByRole("button", { name: "Memory" }).click();
  await page.getByRole("heading", { name: "What Tamebi remembers" }).waitFor();
  const fact = page.locator(".tamebi-facts li", { hasText: "Prefers green tea" });
  await fact.waitFor();
  assert.match(await fact.textContent(), /written by the assistant/);
  await page.getByLabel("Something Tamebi should remember about you").fill("I am on leave in August");
  await page.getByRole("button", { name: "Remember", exact: true }).click();
  const own = page.locator(".tamebi-facts li[data-source=user]", { hasText: "I am on leave in August" });
  await own.waitFor();
  assert.match(await own.textContent(), /written by you/);
  await page.getByRole("button", { name: "Forget “Prefers green tea”" }).click();
  await fact.waitFor({ state: "detached" });
  await page.getByRole("button", { name: "Forget “I am on leave in August”" }).click();
  await own.waitFor({ state: "detached" });
  await page.locator(".tamebi-facts li", { hasText: "Nothing remembered yet." }).waitFor();
});

await check("an MCP App renders in a sandboxed frame from the re-serve URL", async () => {
  // The whole stack: the model calls files_search, the orchestrator reads
  // the tool's ui:// view from mcp-nextcloud as alice and puts it beside
  // the result; the page stores it through the app's /api/ui and frames
  // /ui/{id}, and the view (mcp-nextcloud's own, with its bridge) shows the
  // file from the tool result.
  await askInNewChat("Find the meeting notes");
  await lastAssistant().getByText("Here is the file.").waitFor();
  const frame = page.locator("iframe.tamebi-app-frame");
  await frame.waitFor();
  assert.equal(await frame.getAttribute("sandbox"), "allow-scripts");
  assert.match(await frame.getAttribute("src"), /\/apps\/tamebi\/ui\/[^/]+$/);
  await page.locator(".tamebi-app[data-initialized=true]").waitFor();
  await page.frameLocator("iframe.tamebi-app-frame").getByText("CR-reunion-mars.docx").waitFor();
});

await check("readable in a narrow window", async () => {
  await page.setViewportSize({ width: 380, height: 800 });
  await question.waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `no horizontal scrolling (${overflow}px too wide)`);
});

await browser.close();
// Only the failures the tests cause on purpose (the stale token's 412s: the
// chat, then the conversation list it refreshes) and
// the browser's own favicon request may fail; anything else — another
// failed request, an uncaught error, a policy violation — fails the run.
const expected = (line) => /^HTTP 412 \/apps\/tamebi\/api\//.test(line) || line === "HTTP 404 /favicon.ico";
const unexpected = problems.filter((line) => !expected(line));
if (unexpected.length) {
  console.error(unexpected.join("\n"));
  process.exit(1);
}
console.log(`browser: ${step} checks passed; screenshots in ${shots}`);
