#!/usr/bin/env bash
# Shared by the peer checks: start the fake Nextcloud with the demo fixture
# on free loopback ports and stop it when the calling script exits, and the
# prerequisite check of the Python peers. Sourced from the repository root.
#
#   source ci/peers/lib.sh
#   start_fake            # sets FAKE_URL and CONVERTER_URL
#   ... run the peer against "$FAKE_URL" ...
#
# TAMEBI_BIN names another `tamebi` binary (default: the debug build);
# PYTHON another Python for the Python peers (default: python3).

python="${PYTHON:-python3}"

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# A missing prerequisite is exit status 2 (all.sh counts it as a failure).
#   require_python_module <module> <package> <pip spec>
require_python_module() {
    "$python" -c "import $1" 2>/dev/null || {
        echo "$2 is not installed for $python (pip install $3)" >&2
        exit 2
    }
}

# Sets `trap stop_fake EXIT`: a caller with more to clean up sets its own
# trap after this, calling stop_fake in it.
start_fake() {
    local fixture="${1:-scenarios/fixtures/demo.toml}"
    local port converter_port
    port=$(free_port)
    converter_port=$(free_port)
    FAKE_LOG=$(mktemp)
    "${TAMEBI_BIN:-target/debug/tamebi}" fake-nextcloud --fixture "$fixture" \
        --listen "127.0.0.1:$port" --converter-listen "127.0.0.1:$converter_port" \
        >"$FAKE_LOG" 2>&1 &
    FAKE_PID=$!
    trap stop_fake EXIT
    FAKE_URL="http://127.0.0.1:$port"
    CONVERTER_URL="http://127.0.0.1:$converter_port"
    # The fake generates an RSA key at start; give it a bounded while.
    for _ in $(seq 1 100); do
        if curl -fsS "$FAKE_URL/status.php" >/dev/null 2>&1; then
            return 0
        fi
        if ! kill -0 "$FAKE_PID" 2>/dev/null; then
            break
        fi
        sleep 0.1
    done
    echo "the fake Nextcloud did not start; its log:" >&2
    cat "$FAKE_LOG" >&2
    return 1
}

stop_fake() {
    if [ -n "${FAKE_PID:-}" ]; then
        kill "$FAKE_PID" 2>/dev/null || true
        wait "$FAKE_PID" 2>/dev/null || true
    fi
}
