#!/usr/bin/env bash
# test_query_nfdump.sh — `nagare query` gives the same answers as nfdump: the
# same NetFlow v5 datagrams go to `nagare collect` and to nfcapd (nfdump
# 1.7), then ≥ 30 filters, -s statistics and -A aggregations are run through
# both and the rows compared exactly (see query_nfdump.py).
#
# NG_BIN: the nagare binary (default build/nagare).  Loopback only; runs in
# a private network namespace when unshare allows it.  Exit 77: skipped.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NG_BIN=${NG_BIN:-$here/../../build/nagare}

for tool in nfcapd nfdump python3; do
	if ! command -v "$tool" >/dev/null; then
		echo "test_query_nfdump: skipped: $tool not installed (apt-get install nfdump)"
		exit 77
	fi
done
if [ -z "${NG_E2E_NETNS:-}" ] && unshare -n true 2>/dev/null; then
	NG_E2E_NETNS=1 exec unshare -n -- bash "$0" "$@"
fi
[ "${NG_E2E_NETNS:-}" = 1 ] && ip link set lo up
echo "test_query_nfdump: $NG_BIN${NG_E2E_NETNS:+ (private network namespace)}"
exec python3 "$here/query_nfdump.py" --bin "$NG_BIN" "$@"
