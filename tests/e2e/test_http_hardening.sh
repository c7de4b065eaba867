#!/usr/bin/env bash
# test_http_hardening.sh — the HTTP server against DNS rebinding,
# cross-origin pages, idle and slow connections, weak tokens and a
# /metrics that walked the store per request (docs/security.md "HTTP");
# the checks are in http_hardening.py, run against the real binary over
# loopback (127.0.0.1 to 127.0.0.11 as client addresses).
#
# NG_BIN: the nagare binary (default build/nagare).  Runs in a private
# network namespace when unshare allows it (as root), else on the host's
# loopback.  About 25 s.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NG_BIN=${NG_BIN:-$here/../../build/nagare}
command -v python3 >/dev/null || { echo "test_http_hardening: python3 not installed" >&2; exit 1; }
if [ -z "${NG_E2E_NETNS:-}" ] && [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
	NG_E2E_NETNS=1 exec unshare -n -- bash "$0" "$@"
fi
[ "${NG_E2E_NETNS:-}" = 1 ] && ip link set lo up
# 256 connections and their threads at once, and the test's own sockets
ulimit -n 4096 2>/dev/null || true
exec python3 "$here/http_hardening.py" "$NG_BIN"
