#!/usr/bin/env bash
# Runs the litmus WebDAV suites (basic, copymove, props) against the fake
# Nextcloud started from the demo fixture. Every test must pass; litmus
# warnings are allowed. Needs `litmus` on PATH (CI: apt-get install -y litmus)
# and a built `target/debug/tamebi` (override with TAMEBI=...).
#
#   ci/peers/litmus.sh            # from the repository root
#
# Exits non-zero when a test fails or the fake does not come up.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
tamebi="${TAMEBI:-$root/target/debug/tamebi}"
fixture="$root/scenarios/fixtures/demo.toml"
suites="${LITMUS_TESTS:-basic copymove props}"

command -v litmus >/dev/null || { echo "litmus: not installed (apt-get install -y litmus)" >&2; exit 2; }
[ -x "$tamebi" ] || { echo "litmus: $tamebi is missing; run cargo build -p system first" >&2; exit 2; }

# Free ports chosen by the kernel.
read -r port converter_port < <(python3 -c '
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in sockets])')

workdir="$(mktemp -d)"
log="$workdir/fake-nextcloud.log"
"$tamebi" fake-nextcloud --fixture "$fixture" \
    --listen "127.0.0.1:$port" --converter-listen "127.0.0.1:$converter_port" >"$log" 2>&1 &
server_pid=$!
cleanup() {
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    rm -rf "$workdir"
}
trap cleanup EXIT

base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
    if curl -fsS "$base/status.php" >/dev/null 2>&1; then break; fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
        echo "litmus: the fake Nextcloud exited:" >&2; cat "$log" >&2; exit 1
    fi
    sleep 0.1
done
curl -fsS "$base/status.php" >/dev/null || { echo "litmus: the fake did not answer /status.php" >&2; cat "$log" >&2; exit 1; }

# litmus creates (and first deletes) the `litmus/` collection under the URL.
status=0
(cd "$workdir" && TESTS="$suites" litmus "$base/remote.php/dav/files/alice/" alice alice-demo-password) || status=$?
if [ "$status" -ne 0 ]; then
    echo "litmus: FAILED (exit $status); debug.log follows" >&2
    tail -n 200 "$workdir/debug.log" >&2 || true
fi
exit "$status"
