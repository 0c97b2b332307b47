#!/usr/bin/env bash
# Builds the chat page (web/) and copies the bundle into the app, where
# Nextcloud serves an app's static files: js/tamebi-main.mjs (loaded by
# PageController with Util::addScript) and css/tamebi-main.css
# (Util::addStyle). Run before copying nc-app/ into Nextcloud's apps/tamebi.
#
#   bash nc-app/copy-web.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--no-build" ]; then
    npm --prefix web ci --no-audit --no-fund --loglevel=error
    npm --prefix web run build
fi
for file in web/dist/tamebi-main.mjs web/dist/tamebi-main.css; do
    [ -f "$file" ] || { echo "missing $file: run npm --prefix web ci && npm --prefix web run build" >&2; exit 1; }
done
mkdir -p nc-app/js nc-app/css
cp web/dist/tamebi-main.mjs nc-app/js/tamebi-main.mjs
cp web/dist/tamebi-main.css nc-app/css/tamebi-main.css
echo "copied the chat page into nc-app/js and nc-app/css"
