#!/usr/bin/env bash
# nc-py-api 0.30.3 (Nextcloud's Python client) against the fake Nextcloud
# started from the demo fixture; see nc_py_api.py for the checks. Needs the
# package importable by $PYTHON (CI: pip install nc-py-api==0.30.3).
#
#   bash ci/peers/nc_py_api.sh     # after `cargo build -p system`
set -euo pipefail
cd "$(dirname "$0")/../.."
source ci/peers/lib.sh

python="${PYTHON:-python3}"
"$python" -c 'import nc_py_api' 2>/dev/null || {
    echo "nc-py-api is not installed for $python (pip install nc-py-api==0.30.3)" >&2
    exit 2
}
start_fake
FAKE_URL="$FAKE_URL" "$python" ci/peers/nc_py_api.py
