#!/usr/bin/env bash
# test_stream.sh — IPFIX over TCP and SCTP from libfixbuf (tests/e2e/
# fixbuf_export.c) into `nagare collect`, checked against tshark's
# decoding of the same sessions; 200 concurrent TCP exporters; a stalled
# connection delays nobody (see stream.py).  SCTP is skipped, saying so,
# where the kernel has none.
#
# NG_BIN: the nagare binary (default build/nagare); fixbuf_export is looked
# for beside it (built when libfixbuf-dev is installed: scripts/setup).
# Needs root (packet capture); runs in a private network namespace when
# unshare allows it.  Exit 77: skipped.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NG_BIN=${NG_BIN:-$here/../../build/nagare}
exporter=${NG_FIXBUF_EXPORT:-$(dirname "$NG_BIN")/fixbuf_export}

if [ "$(id -u)" != 0 ]; then
	echo "test_stream: skipped: needs root to capture packets (sudo scripts/test)"
	exit 77
fi
if [ ! -x "$exporter" ]; then
	echo "test_stream: skipped: $exporter not built (libfixbuf-dev missing: run scripts/setup, then cmake again)"
	exit 77
fi
for tool in tshark tcpdump python3; do
	command -v "$tool" >/dev/null ||
		{ echo "test_stream: $tool not installed: run scripts/setup" >&2; exit 1; }
done
if [ -z "${NG_E2E_NETNS:-}" ] && unshare -n true 2>/dev/null; then
	NG_E2E_NETNS=1 exec unshare -n -- bash "$0" "$@"
fi
[ "${NG_E2E_NETNS:-}" = 1 ] && ip link set lo up
echo "test_stream: NG_BIN=$NG_BIN${NG_E2E_NETNS:+ (private network namespace)}"
exec python3 "$here/stream.py" --bin "$NG_BIN" --exporter "$exporter" "$@"
