"""What must hold whatever a real model does, checked through `tamebi ask`
(the chat exactly as the browser uses it) against a stack driven by a real
small model. A task the model gets wrong is not a failure here; a turn
that ends in silence, shows tool-call markup or a server's error, or
changes the workspace without an approval is.

    python3 ci/peers/real_model.py TAMEBI_BIN NEXTCLOUD_URL ADMIN_TOKEN_FILE
"""

import json
import subprocess
import sys
import urllib.request

# A handful, for time: each turn reads a prompt of about 6k tokens several
# times on two CPU cores. A document question, one in French about Deck,
# and an action.
QUESTIONS = [
    "Find my meeting notes and tell me the room.",
    "Quelles cartes Deck sont dans la colonne À faire ?",
    "Create a Deck card called Call the plumber.",
]

# Tool-call and chat-template markup that must never read as an answer.
MARKUP = ["<tool_call>", "</tool_call>", "functions.", "<|im_start|>", "<|im_end|>",
          "[TOOL_CALLS]", "<tool_response>", "</tool_response>"]
# What a user must never be shown in an error.
LEAKS = ["Traceback", "127.0.0.1", "localhost", "HTTP 5", "HTTP 4", "exception"]
# What `tamebi ask` prints about tools, not the answer's text.
TOOL_LINES = ("→", "←", "?", "✓", "✗", "Nothing was done")
# The workspace counts no unapproved turn may change.
COUNTED = ["deck_boards", "deck_stacks", "deck_cards", "files", "folders", "mail_messages",
           "shares"]


def state(url, token):
    request = urllib.request.Request(url + "/__fake/state", headers={"x-tamebi-fake-admin": token})
    with urllib.request.urlopen(request, timeout=30) as answer:
        counts = json.load(answer)
    return {key: counts.get(key) for key in COUNTED}


def check(tamebi, url, question):
    # No --approve or --deny: the first approval request ends the question
    # with "Nothing was done", so no action can run.
    run = subprocess.run([tamebi, "ask", "--url", url, question], capture_output=True,
                         text=True, timeout=900)
    out = run.stdout
    problems = []
    lines = out.splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    answer = "\n".join(line for line in lines
                       if not line.startswith(TOOL_LINES) and not line.startswith("error: ")).strip()
    for mark in MARKUP:
        if mark in answer:
            problems.append(f"markup {mark!r} reached the user: {answer[:300]!r}")
    waits = any(line.startswith("? waits for your approval") for line in lines)
    if not answer and not errors and not waits:
        problems.append("the turn ended with nothing for the user to read")
    for error in errors:
        if "(request id" not in error:
            problems.append(f"an error without its request id: {error}")
        for leak in LEAKS:
            if leak in error:
                problems.append(f"an error shows {leak!r}: {error}")
    if run.returncode != 0 and not errors:
        problems.append(f"tamebi ask failed ({run.returncode}) without an error for the user: "
                        f"{run.stderr[-500:]}")
    return problems, out


def main():
    tamebi, url, token_file = sys.argv[1:4]
    with open(token_file, encoding="utf-8") as file:
        token = file.read().strip()
    before = state(url, token)
    failed = 0
    for question in QUESTIONS:
        problems, out = check(tamebi, url, question)
        after = state(url, token)
        if after != before:
            problems.append(f"the workspace changed without an approval: {before} -> {after}")
        shown = out.strip().replace("\n", "\n    ")
        print(f"Q: {question}\n    {shown[:1500]}")
        for problem in problems:
            print(f"  FAIL: {problem}")
        failed += bool(problems)
    print(f"real model: {len(QUESTIONS) - failed} of {len(QUESTIONS)} turns held every rule")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
