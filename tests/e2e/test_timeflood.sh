#!/usr/bin/env bash
# test_timeflood.sh — 100 000 junk NetFlow v5 datagrams dated 1970 to 2106,
# good flows mixed in, into `nagare collect` (see timeflood.py): the good
# flows are stored within one flush interval, the segments stay few, query
# and /metrics stay quick, time_implausible counts the junk exactly, and in
# reject mode none of it is stored.
#
# NG_BIN: the nagare binary (default build/nagare).  Runs in a private
# network namespace when unshare allows it (then 127.0.0.2 is its own).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NG_BIN=${NG_BIN:-$here/../../build/nagare}
command -v python3 >/dev/null || { echo "test_timeflood: python3 not installed" >&2; exit 1; }
if [ -z "${NG_E2E_NETNS:-}" ] && unshare -n true 2>/dev/null; then
	NG_E2E_NETNS=1 exec unshare -n -- bash "$0" "$@"
fi
[ "${NG_E2E_NETNS:-}" = 1 ] && ip link set lo up
echo "test_timeflood: NG_BIN=$NG_BIN${NG_E2E_NETNS:+ (private network namespace)}"
exec python3 "$here/timeflood.py" --bin "$NG_BIN" "$@"
