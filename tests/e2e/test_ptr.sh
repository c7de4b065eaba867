#!/usr/bin/env bash
# test_ptr.sh — host names (PTR) at display time (docs/query.md "Host
# names"): Debian's dnsmasq on loopback, inside a network namespace this
# test makes, serves a PTR zone the test writes; the API's top talkers
# (resolve=1) and `nagare query --resolve` must show its names, as dig
# reads them from the same server; a DNS server that never answers (a UDP
# port that drops everything) must not keep an answer past its budget.
# tests/e2e/ptr.py does the work.
#
# NG_BIN: the nagare binary.  Needs root (a network namespace).  Exit 77:
# skipped.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NG_BIN=${NG_BIN:-$here/../../build/nagare}

skip() { echo "test_ptr: skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root for a network namespace"
for tool in dnsmasq dig python3 ip; do
	command -v "$tool" >/dev/null || { echo "test_ptr: $tool missing: run scripts/setup" >&2; exit 1; }
done
if [ -z "${NG_E2E_NETNS:-}" ]; then
	unshare -n true 2>/dev/null || skip "cannot make a network namespace (unshare -n)"
	NG_E2E_NETNS=1 exec unshare -n -- bash "$0" "$@"
fi
ip link set lo up
exec python3 "$here/ptr.py" "$NG_BIN"
