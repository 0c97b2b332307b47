#!/usr/bin/env bash
# The official OpenAI Python client (openai==3.57.0) against `tamebi
# fake-model`, started on a free loopback port with the script below and an
# API key; see fake_model.py for the checks. Needs the package importable by
# $PYTHON (CI: pip install openai==3.57.0).
#
#   bash ci/peers/fake_model.sh     # after `cargo build -p system`
set -euo pipefail
cd "$(dirname "$0")/../.."
source ci/peers/lib.sh

require_python_module openai openai openai==3.57.0

work=$(mktemp -d)
# Each check picks its rule by a word of its question.
cat >"$work/script.toml" <<'TOML'
[[rules]]
name = "rate limited"
when.last_user_contains = "rate limit"
fault = { error = "rate_limit", retry_after_seconds = 1 }

[[rules]]
name = "like llama.cpp"
when.last_user_contains = "llama"
text = "Streaming with tools is refused; without streaming this is the answer."
fault = { refuse_streaming_with_tools = true }

[[rules]]
name = "cut"
when.last_user_contains = "cut"
text = "This answer stops somewhere in the middle of its words."
fault = { cut = "mid_text" }

[[rules]]
name = "search"
when = { tool_available = "files_grep", last_role = "user" }
tool_calls = [
    { name = "files_grep", arguments = { query = "budget prévisionnel apollo" } },
    { name = "files_grep", arguments = { query = "kickoff" } },
]

[[rules]]
name = "answer"
text = "Le budget prévisionnel d'Apollo est de 120 k€ — §3. Budget prévisionnel, Projects/Apollo/CR-reunion-mars.docx."
TOML

port=$(free_port)
log="$work/fake-model.log"
api_key="sk-peer-check-$(date +%s)"
target/debug/tamebi fake-model --listen "127.0.0.1:$port" --script "$work/script.toml" \
    --api-key "$api_key" --admin-token-file "$work/admin-token" >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
url="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
    curl -fsS -H "Authorization: Bearer $api_key" "$url/v1/models" >/dev/null 2>&1 && break
    sleep 0.1
done

status=0
FAKE_MODEL_URL="$url" FAKE_MODEL_KEY="$api_key" FAKE_MODEL_ADMIN_TOKEN="$(cat "$work/admin-token")" \
    "$python" ci/peers/fake_model.py || status=1
if [ "$status" -ne 0 ]; then
    echo "fake-model log:"; tail -30 "$log"
fi
exit "$status"
