#!/usr/bin/env bash
# test_snmp.sh — SNMP interface names end to end (docs/enrichment.md
# "SNMP"): Debian's snmpd on loopback inside a network namespace this test
# makes, with veth interfaces it names and describes (ifAlias, set through
# the agent: net-snmp keeps ifAlias itself and does not read the kernel's
# alias), crafted NetFlow v9 datagrams naming those ifIndexes, and `nagare
# collect` polling the agent with v2c, then with v3 authPriv (SHA/AES)
# beside an exporter whose v3 key is wrong.  The expected values are what
# snmpget reads from the same agent.  tests/e2e/snmp.py does the work.
#
# NG_BIN: the nagare binary.  Needs root (a network namespace).  Exit 77:
# skipped.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NG_BIN=${NG_BIN:-$here/../../build/nagare}

skip() { echo "test_snmp: skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root for a network namespace"
for tool in snmpd snmpget snmpset softflowd softflowctl python3 ip; do
	command -v "$tool" >/dev/null || { echo "test_snmp: $tool missing: run scripts/setup" >&2; exit 1; }
done
if [ -z "${NG_E2E_NETNS:-}" ]; then
	unshare -n true 2>/dev/null || skip "cannot make a network namespace (unshare -n)"
	NG_E2E_NETNS=1 exec unshare -n -- bash "$0" "$@"
fi
ip link set lo up
exec python3 "$here/snmp.py" "$NG_BIN"
