// The app's routes (docs/app-contract.md), called with the session's cookies
// and its request token in the `requesttoken` header. Every failure is
// thrown as an `HttpError` (status and body) so errors.ts can decide what
// the user sees; a network failure stays fetch's own TypeError.
import { HttpError } from "./errors";

/** `/apps/tamebi` or `/index.php/apps/tamebi`, whichever the page was served under. */
export function appBase(): string {
  const mount = document.getElementById("tamebi");
  const configured = mount?.dataset.appBase;
  if (configured) {
    return configured.replace(/\/$/, "");
  }
  const match = window.location.pathname.match(/^(.*?\/apps\/tamebi)(\/|$)/);
  return match ? match[1] : "/apps/tamebi";
}

/** The session's request token: Nextcloud puts it on `<head data-requesttoken>`. */
export function requestToken(): string {
  const fromHead = document.head.dataset.requesttoken;
  if (fromHead) {
    return fromHead;
  }
  const oc = (window as unknown as { OC?: { requestToken?: string } }).OC;
  return oc?.requestToken ?? document.getElementById("tamebi")?.dataset.requesttoken ?? "";
}

/** fetch with the request token, same-origin cookies, and HttpError on any non-2xx answer. */
export async function appFetch(input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("requesttoken", requestToken());
  const response = await fetch(input, { ...init, headers, credentials: "same-origin" });
  if (!response.ok) {
    let body = "";
    try {
      body = await response.text();
    } catch {
      body = "";
    }
    throw new HttpError(response.status, body);
  }
  return response;
}

async function json<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await appFetch(`${appBase()}${path}`, init);
  if (response.status === 204) {
    return undefined as T;
  }
  return (await response.json()) as T;
}

export interface ConversationSummary {
  id: string;
  title: string;
  created?: string;
  updated?: string;
}

export interface Fact {
  id: string | number;
  text: string;
  source: "user" | "agent" | string;
  created?: string;
}

export const api = {
  conversations: () => json<{ conversations: ConversationSummary[] }>("/api/conversations"),
  conversation: (id: string) =>
    json<{ id: string; title: string; messages: unknown[] }>(`/api/conversations/${encodeURIComponent(id)}`),
  deleteConversation: (id: string) =>
    json<void>(`/api/conversations/${encodeURIComponent(id)}`, { method: "DELETE" }),
  memory: () => json<{ facts: Fact[] }>("/api/memory"),
  deleteFact: (id: string | number) => json<void>(`/api/memory/${encodeURIComponent(String(id))}`, { method: "DELETE" }),
  addFact: (text: string) =>
    json<Fact>("/api/memory", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ text }),
    }),
  sendMail: (previewId: string) =>
    json<unknown>(`/api/mail/previews/${encodeURIComponent(previewId)}/send`, { method: "POST" }),
  saveMail: (previewId: string) =>
    json<unknown>(`/api/mail/previews/${encodeURIComponent(previewId)}/save`, { method: "POST" }),
  storeUi: (html: string, csp: unknown) =>
    json<{ url: string }>("/api/ui", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ html, csp: csp ?? {} }),
    }),
};
