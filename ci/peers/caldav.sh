#!/usr/bin/env bash
# Peer check: the fake Nextcloud's CalDAV against a real client suite.
#
# Runs caldav-server-tester 1.7.0 with the `nextcloud` profile (measured by
# the tester's authors against a real Nextcloud) and `--diff`, and fails on
# any difference that is not listed in docs/caldav-differences.md.
#
# Prerequisites (CI runs as root with the system pip):
#   pip install caldav-server-tester==1.7.0 vobject==0.9.9
# (vobject is optional: without it the tester misreads one check, which this
# script then accepts with a warning; see docs/caldav-differences.md.)
#
# Usage: ci/peers/caldav.sh            (builds the `tamebi` binary first)
#        SKIP_BUILD=1 ci/peers/caldav.sh
# Exit status: 0 = no unlisted difference, 1 = unlisted difference or a
# failed run, 2 = missing prerequisite.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

TESTER_VERSION="1.7.0"
DIFFERENCES="$ROOT/docs/caldav-differences.md"
FIXTURE="$ROOT/scenarios/fixtures/demo.toml"
USERNAME="alice"
PASSWORD="alice-demo-password"
# How long the tester may run.
TESTER_TIMEOUT_SECONDS=600

if ! command -v caldav-server-tester >/dev/null 2>&1; then
    echo "caldav peer check: caldav-server-tester is not installed (pip install caldav-server-tester==$TESTER_VERSION vobject==0.9.9)" >&2
    exit 2
fi
installed_version="$(caldav-server-tester --version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1 || true)"
if [ "$installed_version" != "$TESTER_VERSION" ]; then
    echo "caldav peer check: caldav-server-tester $installed_version is installed, $TESTER_VERSION is pinned" >&2
    exit 2
fi
if python3 -c 'import vobject' >/dev/null 2>&1; then
    HAVE_VOBJECT=1
else
    HAVE_VOBJECT=0
    echo "caldav peer check: warning: the vobject package is missing, so save-load.event.timezone cannot be measured" >&2
fi

if [ -z "${SKIP_BUILD:-}" ]; then
    cargo build --quiet -p system
fi
source ci/peers/lib.sh
start_fake "$FIXTURE"
BASE="$FAKE_URL"
WORK="$(mktemp -d)"
trap 'stop_fake; rm -rf "$WORK"' EXIT

# The tester keeps its scratch files in the current directory.
status=0
(cd "$WORK" && timeout "$TESTER_TIMEOUT_SECONDS" caldav-server-tester \
    --caldav-url "$BASE/remote.php/dav" \
    --caldav-username "$USERNAME" --caldav-password "$PASSWORD" \
    --caldav-features nextcloud --diff --format json \
    >"$WORK/report.json" 2>"$WORK/tester.log") || status=$?
if [ "$status" -ne 0 ]; then
    echo "caldav peer check: caldav-server-tester exited with $status" >&2
    tail -n 40 "$WORK/tester.log" >&2
    exit 1
fi

python3 - "$WORK/report.json" "$DIFFERENCES" "$HAVE_VOBJECT" <<'PY'
import json
import re
import sys

report_path, differences_path, have_vobject = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
with open(report_path) as report_file:
    report = json.load(report_file)
observed = report.get("diff")
if observed is None:
    print("caldav peer check: FAIL: the report has no diff (was --diff given?)")
    sys.exit(1)

# Rows of the first table: | check | expected | observed | why |
listed = {}
row = re.compile(r"^\|\s*([a-z0-9][a-z0-9.\-]*)\s*\|\s*([a-z]+)\s*\|\s*([a-z]+)\s*\|")
with open(differences_path) as differences_file:
    for line in differences_file:
        match = row.match(line.strip())
        if match:
            listed[match.group(1)] = (match.group(2), match.group(3))

# Without vobject the tester cannot load the event it saved and calls a
# working server broken; that one reading is the environment's, not ours.
environmental = {}
if not have_vobject:
    environmental["save-load.event.timezone"] = ("full", "broken")

unlisted = []
for feature, change in sorted(observed.items()):
    pair = (change.get("expected"), change.get("observed"))
    if listed.get(feature) == pair:
        print(f"  listed      {feature}: expected={pair[0]} observed={pair[1]}")
    elif environmental.get(feature) == pair:
        print(f"  environment {feature}: expected={pair[0]} observed={pair[1]} (install vobject to measure it)")
    else:
        unlisted.append((feature, pair))
        print(f"  UNLISTED    {feature}: expected={pair[0]} observed={pair[1]}")
for feature, pair in sorted(listed.items()):
    if feature not in observed:
        print(f"  stale       {feature}: listed as expected={pair[0]} observed={pair[1]} but no longer differs; remove the row")

features = len(report.get("features", {}))
if unlisted:
    print(f"caldav peer check: FAIL: {len(unlisted)} unlisted difference(s) from the nextcloud profile "
          f"({len(observed)} in all, {features} feature groups reported); list them in docs/caldav-differences.md or fix the fake")
    sys.exit(1)
print(f"caldav peer check: OK: caldav-server-tester 1.7.0, nextcloud profile: {len(observed)} difference(s), "
      f"all listed in docs/caldav-differences.md ({features} feature groups reported)")
PY
