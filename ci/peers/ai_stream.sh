#!/usr/bin/env bash
# The `ai` package's own client (ai@6.0.326, as useChat runs it) against the
# orchestrator: first the recorded frames and history (a cargo test), then a
# live conversation through the whole stack — fake Nextcloud (real OIDC
# tokens), mcp-nextcloud, the scripted fake model and the orchestrator —
# with an approval granted and one denied. See ci/peers/ai_stream/.
#
#   bash ci/peers/ai_stream.sh     (after `cargo build -p system`)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
source ci/peers/lib.sh
(cd ci/peers/ai_stream && npm ci --no-audit --no-fund --silent)
[ -d ci/peers/node_modules/oauth4webapi ] || (cd ci/peers && npm ci --no-audit --no-fund --loglevel=error)
TAMEBI_NODE_PEERS=1 cargo test --locked -p orchestrator --test ui_stream_frames

start_fake
model_port=$(free_port)
orchestrator_port=$(free_port)
logs=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    stop_fake
    rm -rf "$logs"
}
trap cleanup EXIT
wait_for() {
    for _ in $(seq 1 100); do
        curl -fsS "$1" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "not answering: $1; logs:" >&2
    tail -n 20 "$logs"/*.log >&2
    return 1
}

# The demo's OIDC client for mcp-nextcloud names http://127.0.0.1:9101/mcp.
target/debug/tamebi mcp-nextcloud --listen 127.0.0.1:9101 \
    --canonical-url http://127.0.0.1:9101/mcp --index-db :memory: \
    --issuer "$FAKE_URL" --nextcloud-url "$FAKE_URL" >"$logs/mcp.log" 2>&1 &
pids+=($!)
target/debug/tamebi fake-model --listen "127.0.0.1:$model_port" \
    --script ci/peers/ai_stream/live.toml >"$logs/model.log" 2>&1 &
pids+=($!)
secret=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
TAMEBI_SHARED_SECRET="$secret" target/debug/tamebi orchestrator \
    --listen "127.0.0.1:$orchestrator_port" --model-url "http://127.0.0.1:$model_port/v1" \
    --mcp nextcloud=http://127.0.0.1:9101/mcp --data-dir "$logs/data" >"$logs/orchestrator.log" 2>&1 &
pids+=($!)
wait_for http://127.0.0.1:9101/health
wait_for "http://127.0.0.1:$model_port/v1/models"
wait_for "http://127.0.0.1:$orchestrator_port/health"

tokens=$(FAKE_URL="$FAKE_URL" node ci/peers/mcp-tokens.mjs alice alice-demo-password)
TAMEBI_TOKENS=$(node -e 'const t = JSON.parse(process.argv[1]); console.log(JSON.stringify({"mcp-nextcloud": t.mcp, "nextcloud": t.nextcloud}))' "$tokens")
(cd ci/peers/ai_stream && ORCHESTRATOR_URL="http://127.0.0.1:$orchestrator_port" \
    TAMEBI_SHARED_SECRET="$secret" TAMEBI_TOKENS="$TAMEBI_TOKENS" node live-round-trip.mjs)
