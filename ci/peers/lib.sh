#!/usr/bin/env bash
# Shared by the peer checks: start the fake Nextcloud with the demo fixture
# on free loopback ports and stop it when the calling script exits.
#
#   source ci/peers/lib.sh
#   start_fake            # sets FAKE_URL and CONVERTER_URL
#   ... run the peer against "$FAKE_URL" ...

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

start_fake() {
    local fixture="${1:-scenarios/fixtures/demo.toml}"
    local port converter_port
    port=$(free_port)
    converter_port=$(free_port)
    FAKE_LOG=$(mktemp)
    target/debug/tamebi fake-nextcloud --fixture "$fixture" \
        --listen "127.0.0.1:$port" --converter-listen "127.0.0.1:$converter_port" \
        >"$FAKE_LOG" 2>&1 &
    FAKE_PID=$!
    trap stop_fake EXIT
    FAKE_URL="http://127.0.0.1:$port"
    CONVERTER_URL="http://127.0.0.1:$converter_port"
    for _ in $(seq 1 100); do
        if curl -fsS "$FAKE_URL/status.php" >/dev/null 2>&1; then
            return 0
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
