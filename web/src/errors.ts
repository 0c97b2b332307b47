// What the page says when something fails. The rule (docs/web.md): the
// server's own sentence is shown only when it comes with a request id (an
// envelope `{"error": {"message", "requestId"}}`, or an error chunk whose
// `errorText` is `{"message", "requestId"}`), and the id is shown with it
// for support. Anything else — a proxy's HTML page, Nextcloud's CSRF answer,
// a network failure, a body we cannot read — becomes exactly one of four
// generic sentences chosen by what kind of failure it was. There is no
// filtering of "bad" server text: text without a request id is never shown.
//
// Pure: no DOM, no fetch; unit-tested by `npm test` (test/errors.test.ts).

/** A response that was not 2xx; `body` is its text (possibly empty). */
export class HttpError extends Error {
  readonly status: number;
  readonly body: string;
  constructor(status: number, body: string) {
    super(body);
    this.name = "HttpError";
    this.status = status;
    this.body = body;
  }
}

export const GENERIC = {
  unreachable: "Can't reach the assistant right now. Check your connection and try again in a moment.",
  signedOut: "You are signed out or your session has expired. Reload the page to sign in again.",
  tooMany: "Too many requests. Wait a moment, then try again.",
  failed: "Something went wrong. Try again; if it keeps happening, reload the page.",
} as const;

export interface Shown {
  /** The sentence to show. */
  message: string;
  /** The request id to quote to support; present only with server text. */
  requestId?: string;
}

/** `{"error": {"message", "requestId"}}` or `{"message", "requestId"}`, both non-empty strings. */
export function parseEnvelope(text: string): Shown | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object") {
    return undefined;
  }
  const outer = value as Record<string, unknown>;
  const inner =
    outer.error !== null && typeof outer.error === "object" ? (outer.error as Record<string, unknown>) : outer;
  const message = inner.message;
  const requestId = inner.requestId;
  if (typeof message === "string" && message.trim() !== "" && typeof requestId === "string" && requestId.trim() !== "") {
    return { message, requestId };
  }
  return undefined;
}

function generic(status: number | undefined): Shown {
  if (status === undefined || status === 0 || status === 502 || status === 503 || status === 504) {
    return { message: GENERIC.unreachable };
  }
  if (status === 401 || status === 403 || status === 412) {
    return { message: GENERIC.signedOut };
  }
  if (status === 429) {
    return { message: GENERIC.tooMany };
  }
  return { message: GENERIC.failed };
}

/**
 * What to show for an error: an `HttpError` (a non-2xx answer), a
 * `TypeError` from fetch (the network), or an `Error` whose message is an
 * error chunk's `errorText` (the stream failed after it started).
 */
export function describeError(error: unknown): Shown {
  if (error instanceof HttpError) {
    return parseEnvelope(error.body) ?? generic(error.status);
  }
  if (error instanceof TypeError) {
    // fetch's own failure: nothing answered.
    return { message: GENERIC.unreachable };
  }
  if (error instanceof Error) {
    return parseEnvelope(error.message) ?? { message: GENERIC.failed };
  }
  return { message: GENERIC.failed };
}
