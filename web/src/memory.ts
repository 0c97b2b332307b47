// The memory panel's pure parts: what a fact the user adds must be before
// it is posted (the orchestrator's own bound, so the page says it first),
// and who a listed fact is said to be written by. A fact the user adds is
// the user's; one the assistant wrote (approved by the user) is the
// assistant's, whatever the model claimed.

/** The orchestrator's bound on a fact, in UTF-8 bytes (FACT_LENGTH_MAX). */
export const FACT_BYTES_MAX = 1000;

export type FactCheck = { ok: true; text: string } | { ok: false; message: string };

/** The fact to post, trimmed, or the sentence to show instead. */
export function checkFact(raw: string): FactCheck {
  const text = raw.trim();
  if (text === "") {
    return { ok: false, message: "Write what Tamebi should remember, then add it." };
  }
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > FACT_BYTES_MAX) {
    return { ok: false, message: `That is too long to remember (${bytes} bytes; at most ${FACT_BYTES_MAX}). Shorten it.` };
  }
  return { ok: true, text };
}

/** "you" for the user's facts, "the assistant" for the agent's. */
export function sourceLabel(source: unknown): string {
  if (source === "user") return "you";
  if (source === "agent") return "the assistant";
  return String(source);
}
