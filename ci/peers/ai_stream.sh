#!/usr/bin/env bash
# The `ai` package's own client (ai@6.0.326, as useChat runs it) reads the
# orchestrator's UI message stream and history; see ci/peers/ai_stream/.
#
#   bash ci/peers/ai_stream.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
(cd ci/peers/ai_stream && npm ci --no-audit --no-fund --silent)
TAMEBI_NODE_PEERS=1 cargo test --locked -p orchestrator --test ui_stream_frames
