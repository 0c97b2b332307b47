// Reads a file of UI message stream frames exactly as useChat's
// DefaultChatTransport does and prints the assistant message it builds.
//
//   node check-frames.mjs FRAMES [PREVIOUS_MESSAGE_JSON]
//
// Every chunk must pass `uiMessageChunkSchema`; the message is then built by
// `readUIMessageStream` with `terminateOnError`, so an unknown tool call id,
// a text delta without its start or an `error` chunk fails the check. With a
// second file, the stream continues that assistant message (as after an
// approval). The printed message is also checked by `validateUIMessages`.
import { readFile } from "node:fs/promises";
import {
  parseJsonEventStream,
  readUIMessageStream,
  uiMessageChunkSchema,
  validateUIMessages,
} from "ai";

const [framesPath, previousPath] = process.argv.slice(2);
if (!framesPath) {
  console.error("usage: node check-frames.mjs FRAMES [PREVIOUS_MESSAGE_JSON]");
  process.exit(2);
}
const bytes = await readFile(framesPath);
const previous = previousPath ? JSON.parse(await readFile(previousPath, "utf8")) : undefined;

const body = new ReadableStream({
  start(controller) {
    controller.enqueue(new Uint8Array(bytes));
    controller.close();
  },
});
const chunks = parseJsonEventStream({ stream: body, schema: uiMessageChunkSchema }).pipeThrough(
  new TransformStream({
    transform(result, controller) {
      if (!result.success) {
        throw result.error;
      }
      controller.enqueue(result.value);
    },
  }),
);

let message;
for await (const snapshot of readUIMessageStream({
  stream: chunks,
  message: previous,
  terminateOnError: true,
})) {
  message = snapshot;
}
if (message === undefined) {
  throw new Error("the stream built no message");
}
await validateUIMessages({ messages: [message] });
console.log(JSON.stringify(message));
