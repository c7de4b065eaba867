#!/usr/bin/env bash
# test_exporters.sh — softflowd (v5, v9, IPFIX) and pmacctd (v9, IPFIX) from
# Debian's packages export a loopback capture to `nagare collect`; the stored
# flows must equal tshark's reading of the capture (see exporters.py).
#
# NG_BIN: the nagare binary (default build/nagare).  Needs root (packet
# capture); runs in a private network namespace when unshare allows it, so
# its traffic and ports meet nothing else on the machine.  Exit 77: skipped.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NG_BIN=${NG_BIN:-$here/../../build/nagare}

if [ "$(id -u)" != 0 ]; then
	echo "test_exporters: skipped: needs root to capture packets (sudo scripts/test)"
	exit 77
fi
for tool in softflowd pmacctd tshark editcap tcpdump python3 ping; do
	command -v "$tool" >/dev/null ||
		{ echo "test_exporters: $tool not installed: run scripts/setup" >&2; exit 1; }
done
if [ -z "${NG_E2E_NETNS:-}" ] && unshare -n true 2>/dev/null; then
	NG_E2E_NETNS=1 exec unshare -n -- bash "$0" "$@"
fi
[ "${NG_E2E_NETNS:-}" = 1 ] && ip link set lo up
echo "test_exporters: NG_BIN=$NG_BIN${NG_E2E_NETNS:+ (private network namespace)}"
exec python3 "$here/exporters.py" --bin "$NG_BIN" "$@"
