#!/usr/bin/env bash
# nc-py-api 0.30.3 (Nextcloud's Python client) against the fake Nextcloud
# started from the demo fixture; see nc_py_api.py for the checks. Needs the
# package importable by $PYTHON (CI: pip install nc-py-api==0.30.3).
#
#   bash ci/peers/nc_py_api.sh     # after `cargo build -p system`
set -euo pipefail
cd "$(dirname "$0")/../.."
source ci/peers/lib.sh

require_python_module nc_py_api nc-py-api nc-py-api==0.30.3
start_fake
FAKE_URL="$FAKE_URL" "$python" ci/peers/nc_py_api.py
