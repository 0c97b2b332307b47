#!/usr/bin/env bash
# Peer check: oauth4webapi against the fake Nextcloud's OIDC provider.
# Starts `tamebi fake-nextcloud` on the demo fixture (lib.sh: binary built
# already, or TAMEBI_BIN pointing at one), installs the pinned npm packages,
# runs oidc.mjs and stops the fake. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/../.."
source ci/peers/lib.sh

(cd ci/peers && npm ci --no-audit --no-fund --silent)
start_fake
FAKE_URL="$FAKE_URL" node ci/peers/oidc.mjs
