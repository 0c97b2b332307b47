#!/usr/bin/env bash
# mcp-nextcloud's MCP Apps views, run in node against a fake host that speaks
# the MCP Apps postMessage protocol (see ci/mcp-apps/views.mjs).
set -euo pipefail
cd "$(dirname "$0")/../.."
# The views as resources/read serves them: assembled from their parts in
# crates/mcp-nextcloud/src/apps/ by `App::html`.
views="$(mktemp -d)"
trap 'rm -rf "$views"' EXIT
cargo run -q -p mcp-nextcloud --example write_views -- "$views" >/dev/null
VIEWS_DIR="$views" node ci/mcp-apps/views.mjs
