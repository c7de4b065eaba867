#!/usr/bin/env bash
# fixture.sh WORKDIR — a flow store of known flows for the browser tests.
#
# make_traffic.sh captures a known mix of loopback traffic (TCP, UDP, ICMP,
# IPv4 and IPv6); softflowd exports it (NetFlow v9) to `nagare collect`,
# which stores it under WORKDIR/store; v5gen.py adds NetFlow v5 flows of
# public addresses, given countries and ASes by the MaxMind test databases
# of NG_TESTDATA/mmdb (when present); bench/flowgen adds NG_WEB_FLOWS
# (2 M) flows of the last hour from 16 exporters (NG_FLOWGEN: its binary,
# default next to NG_BIN under bench/).  The collector keeps running with
# its HTTP server on a free loopback port: its URL is written to
# WORKDIR/url and its pid to WORKDIR/collect.pid.  Needs root (capture).
set -euo pipefail
work=${1:?usage: fixture.sh WORKDIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NG_BIN=${NG_BIN:-$here/../../build/nagare}
mkdir -p "$work"
"$here/../e2e/make_traffic.sh" "$work/traffic.pcap" >"$work/make_traffic.log" 2>&1

udp=${NG_WEB_UDP:-29055}
mmdb=${NG_TESTDATA:-$here/../../../shared/testdata}/mmdb
enrich=()
if [ -f "$mmdb/GeoLite2-Country-Test.mmdb" ] && [ -f "$mmdb/GeoLite2-ASN-Test.mmdb" ]; then
	enrich=(--geoip-db "$mmdb/GeoLite2-Country-Test.mmdb" --asn-db "$mmdb/GeoLite2-ASN-Test.mmdb")
else
	echo "fixture: $mmdb absent: flows without countries and AS names"
fi
"$NG_BIN" collect --store "$work/store" --listen 127.0.0.1:$udp --http 127.0.0.1:0 \
	"${enrich[@]}" --stats-interval 1 >"$work/collect.log" 2>&1 &
echo $! >"$work/collect.pid"
url=
for _ in $(seq 100); do
	url=$(grep -o 'http://[^ ]*/' "$work/collect.log" | head -1 || true)
	[ -n "$url" ] && break
	sleep 0.1
done
[ -n "$url" ] || { echo "fixture: no URL from collect:" >&2; cat "$work/collect.log" >&2; exit 1; }
echo "$url" >"$work/url"
softflowd -r "$work/traffic.pcap" -n 127.0.0.1:$udp -v 9 -T full -6 >"$work/softflowd.log" 2>&1
python3 "$here/v5gen.py" 127.0.0.1 $udp

# Volume: NG_WEB_FLOWS (2 M) NetFlow v9 records of the last hour from
# bench/flowgen's 16 exporters (Zipf addresses and ports, a tail of
# protocols, ASes), as a user's first hour of `nagare collect`.
flows=${NG_WEB_FLOWS:-2000000}
if [ "$flows" -gt 0 ]; then
	gen=${NG_FLOWGEN:-$(dirname "$NG_BIN")/bench/flowgen}
	[ -x "$gen" ] || { echo "fixture: $gen missing: cmake --build BUILD --target flowgen (or NG_WEB_FLOWS=0)" >&2; exit 1; }
	t0=$(date +%s%N)
	"$gen" --records "$flows" --rate "${NG_WEB_RATE:-250000}" --port $udp --exporters 16 \
		--start $(($(date +%s) - 3600)) --hours 1 >"$work/flowgen.log"
	echo "fixture: flowgen: $(cat "$work/flowgen.log") in $((($(date +%s%N) - t0) / 1000000)) ms"
fi

# Every exported record stored (segments are flushed within 5 s).
python3 - "$url" <<'PY'
import json, sys, time, urllib.request
url = sys.argv[1]
for _ in range(150):
    e = json.load(urllib.request.urlopen(url + "api/v1/exporters"))
    recs = sum(x["records"] for x in e["exporters"])
    s = json.load(urllib.request.urlopen(url + "api/v1/summary?from=-2d&to=" + time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))))
    if recs and s["flows"] == recs:
        print(f"fixture: {recs} flows stored")
        sys.exit(0)
    time.sleep(0.2)
sys.exit(f"fixture: flows never all stored: exporters say {recs}, summary {s['flows']}")
PY
