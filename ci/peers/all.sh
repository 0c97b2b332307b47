#!/usr/bin/env bash
# Runs every peer check against a freshly built `tamebi` and prints one
# summary line. Each check starts its own fakes (Nextcloud, model) on free
# loopback ports (see lib.sh) so they cannot disturb each other.
set -uo pipefail
cd "$(dirname "$0")/../.."
cargo build --locked -p system --quiet
passed=0
failed=0
failures=()
for check in litmus caldav nc_py_api oidc mcp mcp_apps fake_model ai_stream browser real_model; do
    printf '\n--- peer check: %s\n' "$check"
    if bash "ci/peers/$check.sh"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failures+=("$check")
    fi
done
printf '\n'
if [ "$failed" -gt 0 ]; then
    printf 'failed peer checks: %s\n' "${failures[*]}"
fi
printf 'peers: %d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
