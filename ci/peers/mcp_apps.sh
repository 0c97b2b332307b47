#!/usr/bin/env bash
# mcp-nextcloud's MCP Apps views, run in node against a fake host that speaks
# the MCP Apps postMessage protocol (see ci/mcp-apps/views.mjs).
set -euo pipefail
cd "$(dirname "$0")/../.."
node ci/mcp-apps/views.mjs
