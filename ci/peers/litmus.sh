#!/usr/bin/env bash
# litmus (WebDAV conformance, Debian package `litmus` 0.13) against the fake
# Nextcloud's files endpoint, as alice of the demo fixture. Runs the suites
# basic, copymove and props; every test must pass, warnings are allowed.
# litmus creates (and first deletes) `litmus/` below the URL it is given and
# writes debug.log/child.log into the current folder, so it runs in a temp dir.
#
#   bash ci/peers/litmus.sh        # after `cargo build -p system`
set -euo pipefail
cd "$(dirname "$0")/../.."
source ci/peers/lib.sh

command -v litmus >/dev/null || { echo "litmus is not installed (apt-get install -y litmus)" >&2; exit 2; }
start_fake

workdir=$(mktemp -d)
status=0
(cd "$workdir" && TESTS="${LITMUS_TESTS:-basic copymove props}" \
    litmus "$FAKE_URL/remote.php/dav/files/alice/" alice alice-demo-password) || status=$?
if [ "$status" -ne 0 ]; then
    echo "litmus failed (exit $status); the end of its debug.log:" >&2
    tail -n 100 "$workdir/debug.log" >&2 || true
fi
rm -rf "$workdir"
exit "$status"
