#!/usr/bin/env bash
# Peer checks for mcp-nextcloud: the MCP conformance suite (generic server
# scenarios; the rest listed with reasons in mcp-conformance-baseline.yml),
# the TypeScript SDK client and the Python SDK client, all with real tokens
# from the fake Nextcloud's OIDC flow. Run from the repository root after
# `cargo build -p system` and `npm ci` in ci/peers.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
source ci/peers/lib.sh
[ -d ci/peers/node_modules/@modelcontextprotocol/sdk ] || (cd ci/peers && npm ci --no-audit --no-fund --loglevel=error)
start_fake

# The demo's OIDC client for mcp-nextcloud names http://127.0.0.1:9101/mcp
# as its resource URL, so the server listens exactly there.
mcp_log=$(mktemp)
target/debug/tamebi mcp-nextcloud --listen 127.0.0.1:9101 \
    --canonical-url http://127.0.0.1:9101/mcp \
    --issuer "$FAKE_URL" --nextcloud-url "$FAKE_URL" >"$mcp_log" 2>&1 &
mcp_pid=$!
trap 'kill "$mcp_pid" 2>/dev/null || true; stop_fake' EXIT
for _ in $(seq 1 100); do
    curl -fsS http://127.0.0.1:9101/health >/dev/null 2>&1 && break
    sleep 0.1
done

tokens=$(FAKE_URL="$FAKE_URL" node ci/peers/mcp-tokens.mjs alice alice-demo-password)
export TAMEBI_MCP_URL=http://127.0.0.1:9101/mcp
TAMEBI_MCP_TOKEN=$(node -e 'console.log(JSON.parse(process.argv[1]).mcp)' "$tokens")
TAMEBI_NEXTCLOUD_TOKEN=$(node -e 'console.log(JSON.parse(process.argv[1]).nextcloud)' "$tokens")
export TAMEBI_MCP_TOKEN TAMEBI_NEXTCLOUD_TOKEN

status=0
echo "--- TypeScript SDK client"
node ci/peers/mcp-sdk.mjs || status=1
echo "--- Python SDK client"
python3 ci/peers/mcp_python.py || status=1
echo "--- MCP conformance suite 0.1.13"
(cd ci/peers && NODE_OPTIONS="--import $root/ci/peers/mcp-preload.mjs" \
    node_modules/.bin/conformance server --url "$TAMEBI_MCP_URL" \
    --expected-failures mcp-conformance-baseline.yml) || status=1
if [ "$status" -ne 0 ]; then
    echo "mcp-nextcloud log:"; tail -50 "$mcp_log"
fi
exit "$status"
