#!/usr/bin/env bash
# test_clickhouse_dash.sh — the dashboards' API over ClickHouse alone
# (issue 17): `nagare collect --clickhouse URL --http ADDR` (no store)
# answers its flow queries from ClickHouse, starts and ingests while
# ClickHouse is down (answering 503 "ClickHouse unreachable" meanwhile),
# and `nagare serve --clickhouse URL` lists the exporters from
# ClickHouse's tables.
#
# A private clickhouse-server (tests/clickhouse/server.sh), stopped
# before the collector starts; bench/flowgen's NetFlow v9 (four
# exporters) into the collector, which spools it.  Then:
#   - while ClickHouse is down the collector runs and /api/v1/top,
#     /api/v1/summary answer 503 "ClickHouse unreachable";
#   - once the server is started, every record reaches ClickHouse
#     (clickhouse-client's count) and the collector's /api/v1/top and
#     /api/v1/summary give the rows and totals of `nagare query
#     --clickhouse URL` (-o json), the totals also those clickhouse-client
#     sums from nagare.flows;
#   - ClickHouse stopped again after it answered: 503 again, and the
#     collector still runs;
#   - `nagare serve --clickhouse URL`: /api/v1/exporters lists the
#     exporters with the records clickhouse-client counts per exporter in
#     nagare.flows, their names, and the interface names of the
#     configuration, "source":"clickhouse"; 503 with ClickHouse stopped;
#   - serve started while ClickHouse is down starts, answers 503, and
#     answers once the server is started.
#
# NG_BIN: the nagare binary (default build/nagare); NG_FLOWGEN: the
# generator (default build/bench/flowgen).  Loopback only.  Skips (exit 0,
# saying so) without clickhouse-server (scripts/setup installs it).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NG_BIN=${NG_BIN:-$here/../../build/nagare}
bindir=$(dirname "$NG_BIN")
flowgen=${NG_FLOWGEN:-$here/../../build/bench/flowgen}
[ -x "$flowgen" ] || flowgen=$bindir/bench/flowgen
# shellcheck source=../clickhouse/server.sh
. "$here/../clickhouse/server.sh"
# shellcheck source=_clickhouse.sh
. "$here/_clickhouse.sh"
cpid= spid=
ch_e2e_stop() {
	for p in $cpid $spid; do kill "$p" 2>/dev/null || true; done
	ch_kill9
}
ch_e2e_begin test_clickhouse_dash
[ -x "$flowgen" ] || { echo "test_clickhouse_dash: no $flowgen (build target flowgen)" >&2; exit 1; }

# the dashboards' URL of a start-up log (not the ClickHouse URL it names)
dash_url() { # dash_url LOG
	for _ in $(seq 150); do
		u=$(grep -o 'dashboards and API at http://[^ ]*/' "$1" | head -1 | sed 's/.* at //' || true)
		[ -n "$u" ] && { echo "$u"; return 0; }
		sleep 0.1
	done
	echo "test_clickhouse_dash: no dashboards URL in $1" >&2
	cat "$1" >&2
	return 1
}
# GET URL into $work/r.json; prints the status
get() { rm -f "$work/r.json"; curl -s -o "$work/r.json" -w '%{http_code}' "$1" || true; }
err_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("error"))' "$work/r.json" 2>/dev/null || echo "?"; }

# the server made (ports, data) and stopped: the collector starts while
# it is down
ch_start "$work/ch"
url="http://127.0.0.1:$CH_HTTP/nagare"
ch_stop

cat >"$work/nagare.yaml" <<'YAML'
enrich:
  exporters:
    - address: 127.0.1.1
      name: lab-a
      interfaces:
        - {index: 1, name: et-0/0/1}
        - {index: 2, name: "uplink \"core\""}
    - {address: 127.0.1.2, name: "o'hare \\ edge"}
YAML
port=$(ch_free_port)
NAGARE_STORE="$work/state" NAGARE_CH_BATCH_MS=500 "$NG_BIN" collect --clickhouse "$url" \
	--config "$work/nagare.yaml" --listen "127.0.0.1:$port" --workers 1 --http 127.0.0.1:0 \
	>"$work/collect.log" 2>&1 &
cpid=$!
cu=$(dash_url "$work/collect.log")
for _ in $(seq 100); do grep -q 'listening on' "$work/collect.log" && break; sleep 0.1; done
records=20000
ASAN_OPTIONS=detect_leaks=0 "$flowgen" --records $records --rate 20000 --port "$port" --exporters 4 \
	--hours 2 >"$work/gen.out" 2>&1
sleep 1
kill -0 "$cpid" 2>/dev/null && r=0 || r=1
check $r "collect --clickhouse runs with ClickHouse down"
# flowgen's two hours from 2026-11-29T00:00Z (some flows start a little
# before), an hour either side
t0=$((1795910400 - 3600)) t1=$((1795910400 + 3 * 3600))
range="from=$t0&to=$t1"
for path in "top?field=srcip&limit=5" "summary?filter=proto%20udp"; do
	code=$(get "${cu}api/v1/$path&$range")
	e=$(err_of)
	[ "$code" = 503 ] && [ "$e" = "ClickHouse unreachable" ] && r=0 || r=1
	check $r "GET /api/v1/$path with ClickHouse down: $code '$e'"
done

# started: the spool reaches it
ch_restart
n=0
for _ in $(seq 120); do
	n=$(ch_client --query 'SELECT count() FROM nagare.flows' 2>/dev/null || echo 0)
	[ "$n" = "$records" ] && break
	sleep 0.5
done
eq "$n" "$records" "the records sent are in ClickHouse once it is started"
kill -0 "$cpid" 2>/dev/null && r=0 || r=1
check $r "collect still runs"

# the collector's API and `nagare query --clickhouse`: the same rows
rows() { python3 -c '
import json, sys
d = json.load(sys.stdin)
print(json.dumps({"keys": d["query"]["keys"] if "query" in d else None, "rows": d["rows"]}, sort_keys=True))'; }
totals() { python3 -c '
import json, sys
s = json.load(sys.stdin)["summary"]
print(s["flows"], s["packets"], s["bytes"])'; }
f_from=2026-11-28T23:00:00Z f_to=2026-11-29T03:00:00Z
for spec in "srcip|5|" "dstport|10|proto tcp" "exporter_name|4|" "srcip4/24|3|not port 443"; do
	IFS='|' read -r field lim filt <<<"$spec"
	q="top?field=$field&limit=$lim&$range"
	[ -n "$filt" ] && q="$q&filter=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$filt")"
	code=$(get "${cu}api/v1/$q")
	a=$(rows <"$work/r.json" 2>/dev/null) || a="error $code"
	b=$("$NG_BIN" query --clickhouse "$url" -f "$f_from" -t "$f_to" -s "$field" -n "$lim" -o json -q ${filt:+"$filt"} | rows) || b=error
	nrows=$(python3 -c 'import json,sys; print(len(json.loads(sys.argv[1])["rows"]))' "$a" 2>/dev/null || echo 0)
	[ "$code" = 200 ] && [ "$a" = "$b" ] && [ "$nrows" -gt 0 ] && r=0 || r=1
	check $r "collect's GET /api/v1/top?field=$field ($filt): the rows of nagare query --clickhouse ($nrows rows)"
	[ $r = 0 ] || { echo "api: ${a:0:300}" >&2; echo "cli: ${b:0:300}" >&2; }
done
# totals: the API's summary, the CLI's and clickhouse-client's sums
for filt in "" "proto udp" "src port > 1024"; do
	q="summary?$range"
	[ -n "$filt" ] && q="$q&filter=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$filt")"
	get "${cu}api/v1/$q" >/dev/null
	a=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["flows"], d["packets"], d["bytes"])' "$work/r.json" 2>/dev/null) || a=error
	b=$("$NG_BIN" query --clickhouse "$url" -f "$f_from" -t "$f_to" -s proto -n 1 -o json ${filt:+"$filt"} | totals) || b=error
	case $filt in
	"") w=1 ;;
	"proto udp") w="protocol = 17" ;;
	*) w="src_port > 1024" ;;
	esac
	c=$(ch_client --query "SELECT count(), sum(packets), sum(bytes) FROM nagare.flows WHERE flow_start >= ${t0}000 AND flow_start < ${t1}000 AND $w" | tr '\t' ' ')
	[ "$a" = "$b" ] && [ "$a" = "$c" ] && r=0 || r=1
	check $r "collect's GET /api/v1/summary ($filt): $a; nagare query: $b; clickhouse-client: $c"
done

# stopped again after it answered: 503 again (no connection), then back
ch_stop
code=$(get "${cu}api/v1/top?field=srcip&$range")
e=$(err_of)
[ "$code" = 503 ] && [ "$e" = "ClickHouse unreachable" ] && r=0 || r=1
check $r "GET /api/v1/top with ClickHouse stopped again: $code '$e'"
ch_restart
code=$(get "${cu}api/v1/summary?$range")
a=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["flows"])' "$work/r.json" 2>/dev/null) || a=error
[ "$code" = 200 ] && [ "$a" = "$records" ] && r=0 || r=1
check $r "GET /api/v1/summary once it is back: $code, $a flows"
kill -0 "$cpid" 2>/dev/null && r=0 || r=1
check $r "collect still runs"
kill -TERM "$cpid"
wait "$cpid" || true
cpid=

# nagare serve --clickhouse alone (no collector, no store of its own):
# the exporters of ClickHouse's tables
NAGARE_STORE="$work/empty" "$NG_BIN" serve --clickhouse "$url" --http 127.0.0.1:0 \
	>"$work/serve.log" 2>&1 &
spid=$!
su=$(dash_url "$work/serve.log")
code=$(get "${su}api/v1/exporters")
cp "$work/r.json" "$work/exporters.json"
ch_client --query "SELECT IPv6NumToString(exporter), count() FROM nagare.flows GROUP BY exporter ORDER BY exporter" >"$work/per_exporter.tsv"
python3 - "$work/exporters.json" "$work/per_exporter.tsv" <<'PY' && r=0 || r=1
import ipaddress, json, sys
d = json.load(open(sys.argv[1]))
want = {}
for line in open(sys.argv[2]):
    a, n = line.split("\t")
    ip = ipaddress.ip_address(a)
    want[str(ip.ipv4_mapped or ip)] = int(n)
got = {e["exporter"]: e["records"] for e in d["exporters"]}
print("exporters:", got, "clickhouse-client:", want)
ok = got == want and len(want) == 4 and d["source"] == "clickhouse" and d["total"] == 4
ok = ok and d["listener"] is None and all(e["packets"] is None and e["templates"] is None for e in d["exporters"])
sys.exit(0 if ok else 1)
PY
check $r "serve --clickhouse: GET /api/v1/exporters ($code) lists the records clickhouse-client counts per exporter"
python3 - "$work/exporters.json" <<'PY' && r=0 || r=1
import json, sys
d = json.load(open(sys.argv[1]))
x = {e["exporter"]: e for e in d["exporters"]}
a, b = x.get("127.0.1.1", {}), x.get("127.0.1.2", {})
names = {i["if_index"]: i["name"] for i in a.get("interfaces", [])}
print("names:", a.get("exporter_name"), b.get("exporter_name"), "interfaces:", names)
ok = a.get("exporter_name") == "lab-a" and b.get("exporter_name") == "o'hare \\ edge"
ok = ok and names.get(1) == "et-0/0/1" and names.get(2) == 'uplink "core"'
ok = ok and a.get("last_seen_ms") and a.get("protocol") == "NetFlow v9"
sys.exit(0 if ok else 1)
PY
check $r "serve --clickhouse: the exporters' names, interface names, protocol and last seen"
code=$(get "${su}api/v1/exporters?limit=2&offset=1")
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["total"] == 4 and d["returned"] == 2 and d["offset"] == 1 and len(d["exporters"]) == 2 else 1)' "$work/r.json" && r=0 || r=1
check $r "serve --clickhouse: GET /api/v1/exporters?limit=2&offset=1 pages ($code)"
# the Exporters page over that answer, in Chromium (tests/web's harness),
# when node, Debian's chromium and web/node_modules are there
if command -v node >/dev/null && [ -x "${NG_CHROMIUM:-/usr/bin/chromium}" ] &&
	[ -d "$here/../../web/node_modules/playwright-core" ]; then
	want=$(python3 -c '
import ipaddress, json, sys
w = {}
for line in open(sys.argv[1]):
    a, n = line.split("\t")
    ip = ipaddress.ip_address(a)
    w[str(ip.ipv4_mapped or ip)] = int(n)
print(json.dumps(w))' "$work/per_exporter.tsv")
	node "$here/../web/ch_exporters.mjs" --url "$su" --out "$work/web" \
		--from 2026-11-28T23:00:00Z --to 2026-11-29T03:00:00Z --want "$want" \
		--names '{"127.0.1.1": "lab-a", "127.0.1.2": "o'"'"'hare \\ edge"}' && r=0 || r=1
	check $r "serve --clickhouse: the Exporters page lists them (tests/web/ch_exporters.mjs)"
else
	echo "note: no node, chromium or web/node_modules: the Exporters page not checked"
fi
ch_stop
code=$(get "${su}api/v1/exporters")
e=$(err_of)
[ "$code" = 503 ] && [ "$e" = "ClickHouse unreachable" ] && r=0 || r=1
check $r "serve --clickhouse: GET /api/v1/exporters with ClickHouse stopped: $code '$e'"
# serve started while ClickHouse is down: it starts, answers 503, then
# answers once the server is back
kill "$spid" 2>/dev/null || true
wait "$spid" 2>/dev/null || true
NAGARE_STORE="$work/empty" "$NG_BIN" serve --clickhouse "$url" --http 127.0.0.1:0 \
	>"$work/serve2.log" 2>&1 &
spid=$!
su=$(dash_url "$work/serve2.log") || su=http://127.0.0.1:1/
code=$(get "${su}api/v1/summary?$range")
e=$(err_of)
[ "$code" = 503 ] && [ "$e" = "ClickHouse unreachable" ] && r=0 || r=1
check $r "serve --clickhouse started while ClickHouse is down: GET /api/v1/summary $code '$e'"
ch_restart
code=$(get "${su}api/v1/summary?$range")
a=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["flows"])' "$work/r.json" 2>/dev/null) || a=error
[ "$code" = 200 ] && [ "$a" = "$records" ] && r=0 || r=1
check $r "serve --clickhouse, ClickHouse started: GET /api/v1/summary $code, $a flows"

echo "test_clickhouse_dash: $fails failures"
[ "$fails" = 0 ]
