#!/usr/bin/env bash
# Peer check: oauth4webapi against the fake Nextcloud's OIDC provider.
# Starts `tamebi fake-nextcloud` on the demo fixture (binary built already,
# or TAMEBI_BIN pointing at one), installs the pinned npm packages, runs
# oidc.mjs and stops the fake. Run from the repository root.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${TAMEBI_BIN:-$root/target/debug/tamebi}"
port="${FAKE_PORT:-18080}"
converter_port="${FAKE_CONVERTER_PORT:-18083}"
log="$(mktemp)"

(cd "$root/ci/peers" && npm ci --no-audit --no-fund --silent)

"$bin" fake-nextcloud --fixture "$root/scenarios/fixtures/demo.toml" \
  --listen "127.0.0.1:$port" --converter-listen "127.0.0.1:$converter_port" >"$log" 2>&1 &
fake_pid=$!
trap 'kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; rm -f "$log"' EXIT

# The fake generates an RSA key at start; give it a bounded while.
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$port/status.php" >/dev/null 2>&1; then
    break
  fi
  if ! kill -0 "$fake_pid" 2>/dev/null; then
    echo "oidc: the fake Nextcloud did not start:" >&2
    cat "$log" >&2
    exit 1
  fi
  sleep 0.1
done

FAKE_URL="http://127.0.0.1:$port" node "$root/ci/peers/oidc.mjs"
