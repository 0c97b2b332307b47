#!/bin/bash
# tamebi-healthcheck PORT PATH: exit 0 when http://127.0.0.1:PORT/PATH answers
# 200. The runtime image has no curl; bash's /dev/tcp is enough for a local
# HTTP/1.0 GET. Host is localhost, which the MCP servers always accept.
set -euo pipefail
port="${1:?usage: tamebi-healthcheck PORT PATH}"
path="${2:-/health}"
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET %s HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n\r\n' "$path" >&3
IFS= read -r -t 5 status <&3
case "$status" in
    "HTTP/1."[01]" 200 "*) exit 0 ;;
    *) echo "GET $path: ${status:-no answer}" >&2; exit 1 ;;
esac
