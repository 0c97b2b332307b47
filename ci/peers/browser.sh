#!/usr/bin/env bash
# The chat page in a real browser: builds web/ (npm ci, vite build), starts
# the whole stack with `tamebi up` (the fake model scripted by
# ci/browser/model-script.toml) and drives Debian's chromium with
# playwright-core through ci/browser/chat.mjs: log in, streaming, approve,
# deny, mail send, errors with and without a request id, conversations,
# memory, a narrow window. Screenshots: ci/artifacts/screenshots/.
#
#   bash ci/peers/browser.sh     (after `cargo build -p system`; needs
#                                 `apt-get install -y chromium`)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
source ci/peers/lib.sh

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
    echo "no chromium at $chromium: apt-get install -y chromium (or set CHROMIUM)" >&2
    exit 1
fi
npm --prefix web ci --no-audit --no-fund --loglevel=error
npm --prefix web run build --silent >/dev/null
(cd ci/browser && npm ci --no-audit --no-fund --loglevel=error)

# A base port whose whole layout (N … N+30) is free.
base=$(python3 - <<'PY'
import random, socket
for _ in range(200):
    base = random.randrange(20000, 60000)
    sockets = []
    try:
        for offset in (0, 3, 10, 20, 21, 22, 30):
            s = socket.socket()
            s.bind(("127.0.0.1", base + offset))
            sockets.append(s)
    except OSError:
        continue
    finally:
        for s in sockets:
            s.close()
    print(base)
    break
PY
)
work=$(mktemp -d)
: >"$work/up.log"
target/debug/tamebi up --fresh --data-dir "$work/data" --base-port "$base" \
    --model-script ci/browser/model-script.toml --no-web-build >"$work/up.log" 2>&1 &
up_pid=$!
cleanup() {
    kill "$up_pid" 2>/dev/null || true
    wait "$up_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 1 600); do
    grep -q "^Tamebi is up" "$work/up.log" && break
    if ! kill -0 "$up_pid" 2>/dev/null; then
        echo "tamebi up stopped; its output:" >&2
        cat "$work/up.log" >&2
        exit 1
    fi
    sleep 0.2
done
if ! grep -q "^Tamebi is up" "$work/up.log"; then
    echo "tamebi up did not come up in 120 s; its output:" >&2
    tail -n 40 "$work/up.log" >&2
    exit 1
fi
if ! TAMEBI_URL="http://127.0.0.1:$base" CHROMIUM="$chromium" node ci/browser/chat.mjs; then
    echo "--- the last lines of tamebi up:" >&2
    tail -n 40 "$work/up.log" >&2
    exit 1
fi
