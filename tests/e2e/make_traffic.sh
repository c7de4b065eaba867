#!/usr/bin/env bash
# make_traffic.sh OUT.pcap — capture a known mix of loopback traffic.
#
# Runs in a private network namespace (unshare -n) when it can, so the
# capture holds only the traffic of traffic.py (TCP, UDP, ICMP over IPv4 and
# IPv6, see there) and nothing of other programs on this machine's lo.
# Without unshare it captures the host's lo with a filter on the ports it
# uses.  Needs root (capture), tcpdump, python3 and ping.  Takes ~5 s.
set -euo pipefail

out=${1:?usage: make_traffic.sh OUT.pcap}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ -z "${NG_E2E_NETNS:-}" ] && unshare -n true 2>/dev/null; then
	NG_E2E_NETNS=1 exec unshare -n -- "$0" "$@"
fi
if [ "${NG_E2E_NETNS:-}" = 1 ]; then
	ip link set lo up
	filter=""
else
	# Shared lo: keep other programs' traffic out of the capture as well
	# as we can (our sockets use ephemeral ports, ping is ICMP).
	filter="icmp or icmp6 or portrange 32768-60999"
fi

rm -f "$out"
errlog=$(mktemp)
trap 'rm -f "$errlog"' EXIT
# -Z root: keep writing to a root-owned temp dir; -U: packet-buffered.
tcpdump -i lo -n -U -Z root -s 0 -w "$out" $filter 2>"$errlog" &
tcpdump_pid=$!
for _ in $(seq 50); do
	grep -q 'listening on' "$errlog" && break
	sleep 0.1
done
grep -q 'listening on' "$errlog" || { cat "$errlog" >&2; exit 1; }

rc=0
python3 "$here/traffic.py" || rc=$?
# tcpdump stops at SIGINT without reading what the kernel still holds for
# it: give it time to catch up (a busy machine once lost the last pings)
sleep 2
kill -INT "$tcpdump_pid"
wait "$tcpdump_pid" || true
cat "$errlog" >&2
exit $rc
