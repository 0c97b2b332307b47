// Checks a JSON file holding a list of UIMessages (the history the
// orchestrator gives a reloaded page) with the `ai` package's own
// `validateUIMessages`, and prints it back.
//
//   node check-messages.mjs MESSAGES_JSON
import { readFile } from "node:fs/promises";
import { validateUIMessages } from "ai";

const path = process.argv[2];
if (!path) {
  console.error("usage: node check-messages.mjs MESSAGES_JSON");
  process.exit(2);
}
const messages = JSON.parse(await readFile(path, "utf8"));
console.log(JSON.stringify(await validateUIMessages({ messages })));
