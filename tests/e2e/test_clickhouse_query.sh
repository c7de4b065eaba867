#!/usr/bin/env bash
# test_clickhouse_query.sh — `nagare query --clickhouse URL` and `nagare
# serve --clickhouse URL` (the ClickHouse backend, query/backend.h) answer
# as they do over the embedded store, byte for byte.
#
# As test_clickhouse_filter.sh: bench/flowgen's NetFlow v9 (four
# exporters) into `collect --store DIR --clickhouse URL` of a private
# clickhouse-server (tests/clickhouse/server.sh), with exporters and
# networks named (quotes, a backslash, "--", "/*", UTF-8), and the IPv4
# and IPv6 NetFlow v9 of two shared captures (when ../shared is there).
# Then, for each
# query of the table below, `nagare query --store DIR ARGS` and `nagare
# query --clickhouse URL ARGS` must give the same standard output, the same
# standard error and the same exit status: top-N of integer, address
# (whole and cut to prefixes), string, time and either keys by every
# order, aggregates, pairs (with "other") and conversations (-B), time series (with their "other"; from the rollups
# where they answer, which a row added to flows_1h alone shows at the
# end), listings with a limit in every format, and bad filters' messages.
# The JSON summaries' totals and group counts must be the same too (their
# scan statistics are the store's own).  Then `nagare
# serve` on each: /api/v1/top, /api/v1/flows (pages: limit and offset),
# /api/v1/summary, /api/v1/series (with "other" and the reverse
# direction), /api/v1/pairs (edges with "other", and Sankeys) and
# /api/v1/complete (key prefixes of every key kind, hostile ones among
# them) give the same JSON but for the scan statistics and times; and a
# ClickHouse request past the time limit answers 503 as the store's does.  The test fails when too few of its answers hold rows (a table of
# empty answers would prove nothing).
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
# shellcheck source=_http.sh
. "$here/_http.sh"
# shellcheck source=_clickhouse.sh
. "$here/_clickhouse.sh"
cpid= spid1= spid2= spid3=
ch_e2e_stop() { # the collector and servers still running; the server thawed (it may be stopped)
	for p in $cpid $spid1 $spid2 $spid3; do kill "$p" 2>/dev/null || true; done
	kill -CONT "${CH_PID:-0}" 2>/dev/null || true
	ch_kill9
}
ch_e2e_begin test_clickhouse_query
[ -x "$flowgen" ] || { echo "test_clickhouse_query: no $flowgen (build target flowgen)" >&2; exit 1; }

ch_start "$work/ch"
url="http://127.0.0.1:$CH_HTTP/nagare"

cp "$here/../clickhouse/hostile.yaml" "$work/nagare.yaml"
port=$(ch_free_port)
NAGARE_CH_BATCH_MS=1000 "$NG_BIN" collect --store "$work/store" --clickhouse "$url" \
	--config "$work/nagare.yaml" --listen "127.0.0.1:$port" --workers 1 --no-http \
	>"$work/collect.log" 2>&1 &
cpid=$!
for _ in $(seq 100); do grep -q 'listening on' "$work/collect.log" && break; sleep 0.1; done
ASAN_OPTIONS=detect_leaks=0 "$flowgen" --records 40000 --rate 30000 --port "$port" --exporters 4 >"$work/gen.out" 2>&1
# IPv6 flows too (flowgen sends IPv4 only): softflowd's NetFlow v9 of
# IPv4 and IPv6 from the shared captures (Graylog's and Akvorado's test
# data), their UDP payloads sent in order from 127.0.0.1
captures=${NG_TESTDATA:-$here/../../../shared/testdata}/captures
v6=0
if [ -f "$captures/graylog2-server/netflow9.pcap" ]; then
	for f in graylog2-server/netflow9.pcap akvorado/icmp-template.pcap akvorado/icmp-data.pcap; do
		python3 - "$captures/$f" "$port" <<'PY'
import socket, struct, sys
# a classic pcap's UDP payloads (Ethernet, VLAN, Linux cooked, raw IP)
data = open(sys.argv[1], "rb").read()
e = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
link = struct.unpack(e + "I", data[20:24])[0]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
off = 24
while off + 16 <= len(data):
    incl = struct.unpack(e + "I", data[off + 8:off + 12])[0]
    pkt, off = data[off + 16:off + 16 + incl], off + 16 + incl
    p = {1: 14, 113: 16, 101: 0, 12: 0}.get(link)
    if p is None:
        continue
    if link == 1:
        while struct.unpack(">H", pkt[p - 2:p])[0] == 0x8100:
            p += 4
    v = pkt[p] >> 4
    if v == 4 and pkt[p + 9] == 17:
        u = p + (pkt[p] & 15) * 4
    elif v == 6 and pkt[p + 6] == 17:
        u = p + 40
    else:
        continue
    s.sendto(pkt[u + 8:], ("127.0.0.1", int(sys.argv[2])))
PY
		sleep 0.3
	done
	v6=1
else
	echo "note: no shared captures at $captures: IPv6 flows left out"
fi
sleep 1
kill -TERM "$cpid"
wait "$cpid" || true
cpid=
total=$(ch_client --query 'SELECT count() FROM nagare.flows')
ngtotal=$("$NG_BIN" query --store "$work/store" -q -s proto -n 0 -o csv --no-header |
	awk -F, '{f += $(NF-5)} END {print f + 0}')
[ "$total" = "$ngtotal" ] && [ "$total" -gt 30000 ] && r=0 || r=1
check $r "the same rows in the store and in ClickHouse ($ngtotal, $total)"
if [ "$v6" = 1 ]; then
	n6=$(ch_client --query "SELECT count() FROM nagare.flows WHERE ip_version = 6")
	[ "$n6" -gt 0 ] && r=0 || r=1
	check $r "IPv6 flows among them ($n6)"
fi

# The same query on both: stdout, stderr and status, byte for byte.  A
# listing's flows of one millisecond are the one exception: the store
# keeps their arrival order, which ClickHouse does not have (backend.h);
# there the lines must be the same and in the same order but within the
# runs of one flow_start (the first time column of a table and of CSV, the
# "flow_start" of NDJSON and JSON), counted in `ties`.
nonempty=0 ties=0
same_but_ties() { # same_but_ties NG CH: 0 when so
	python3 - "$1" "$2" <<'PY'
import re, sys
a, b = (open(f, encoding="utf-8").read().splitlines() for f in sys.argv[1:3])
def start(l):
    m = re.search(r'"flow_start":"([^"]+)"', l)
    if m:
        return m.group(1)
    f = l.split(",")
    return f[1] if len(f) > 2 and "T" in f[1] else l[:23]
if len(a) != len(b) or [start(l) for l in a] != [start(l) for l in b]:
    sys.exit(1)
i = 0
while i < len(a):
    j = i
    while j < len(a) and start(a[j]) == start(a[i]):
        j += 1
    if sorted(a[i:j]) != sorted(b[i:j]):
        sys.exit(1)
    i = j
PY
}
same() { # same ARGS...
	local s1=0 s2=0 how="byte for byte"
	"$NG_BIN" query --store "$work/store" "$@" >"$work/ng.out" 2>"$work/ng.err" || s1=$?
	"$NG_BIN" query --clickhouse "$url" "$@" >"$work/ch.out" 2>"$work/ch.err" || s2=$?
	local ok=1
	if cmp -s "$work/ng.err" "$work/ch.err" && [ "$s1" = "$s2" ]; then
		if cmp -s "$work/ng.out" "$work/ch.out"; then
			ok=0
		elif [[ " $* " != *" -s "* && " $* " != *" -A "* && " $* " != *" -I "* ]] &&
			same_but_ties "$work/ng.out" "$work/ch.out"; then
			ok=0 how="but the order of flows of one millisecond"
			ties=$((ties + 1))
		fi
	fi
	if [ $ok = 0 ]; then
		check 0 "query $* ($(wc -l <"$work/ng.out") lines, status $s1, $how)"
		[ "$s1" = 0 ] && [ "$(wc -l <"$work/ng.out")" -gt 2 ] && nonempty=$((nonempty + 1))
	else
		check 1 "query $*: status $s1 vs $s2"
		diff "$work/ng.out" "$work/ch.out" | head -10 >&2 || true
		diff "$work/ng.err" "$work/ch.err" | head -5 >&2 || true
	fi
	return 0
}
# OPTIONS|FILTER
queries=(
	"-s srcip -n 10|"
	"-s dstip/bytes -n 5 -o csv|"
	"-O bytes -s srcip4/24 -n 10|"
	"-O bps -s dstip4/16 -n 8 -o csv|proto tcp"
	"-O packets -s srcip4/8,dstport -n 10 -o ndjson|"
	"-s ip/flows -n 10|"
	"-s port/pps -n 10 -o csv|"
	"-s proto,dstport/bpp -n 0 -o csv|"
	"-s srcas/bps -n 10|proto udp"
	"-s inif,outif/packets -n 0 -o csv|exporter 127.0.1.1"
	"-s exporter/bytes -o csv|"
	"-s exporter_name/bytes -n 0 -o csv|"
	"-s src_net/bytes -n 0 -o csv|"
	"-s dst_net,proto/packets -n 0|"
	"-s flow_start/bytes -n 10 -o csv|"
	"-s flow_end/flows -n 5 -o csv|not port 443"
	"-s srcas,dstas/pps -n 15 -o csv|bytes > 1k"
	"-s conv/bytes -n 10 -o csv|dst net 10.128.0.0/9"
	"-s dstport/flows -n 10 -o json|src net-name \"o'brien \\ lab -- x /*y*/\""
	"-s srcip,exporter_name/bytes -n 5 -o json|dst net-name \"büro 東京\""
	"-I 1h -o csv|"
	"-I 1h -s proto/bytes -n 3 -o csv|"
	"-I 5m -s srcip -n 3 -o json|proto udp"
	"-I 1d -s exporter_name -n 0 -o csv|"
	"-I 1h -s exporter_name,proto/bytes -n 3 -o csv|not proto tcp"
	"-I 10m -s srcas -n 4 -o csv|"
	"-I 1h -s dstport -n 5|"
	"-I 2h -s proto -n 2 -o csv --no-rollups|"
	"-I 30m -s ip/packets -n 2|"
	"-I 2h -O bps -s srcip4/16,dstport -n 4 -o csv|dst net 10.0.0.0/9"
	"-s srcip6/48 -n 0 -o csv|inet6"
	"-O bytes -s dstip6/64,srcip4/24 -n 0 -o csv|exporter 127.0.0.1"
	"-O bps -s srcip6/1,srcip4/1 -n 0|"
	"-s ip -n 0 -o json|inet6"
	"-n 0 -o csv|inet6"
	"-A srcip4/16,dstport -n 20 -o csv|"
	"-A proto -O bytes -o csv|"
	"-n 20|"
	"-n 20 -o csv|proto tcp"
	"-n 7 -o ndjson|src port > 1024 and dst net 10.0.0.0/9"
	"-n 5 -o json|exporter_name lab-b"
	"-n 0 -o csv|bytes > 2M"
	"--pairs srcip,dstip -n 10|"
	"--pairs srcas,dstport -O bytes -n 5 -o csv|proto udp"
	"--pairs exporter_name,src_net -O packets -n 3 -o json|"
	"--pairs srcip4/24,dstas -O bps -n 4 -o csv|"
	"--pairs inif,outif -n 0 -o csv|exporter 127.0.1.2"
	"--pairs srcip,srcport -n 3|inet6"
	"--pairs ip,dstip -n 3|"
	"-B -n 10|"
	"-B -n 5 -o csv|proto tcp"
	"-B -O bytes -n 10 -o json|src net 10.0.0.0/9"
	"-B -A srcip,dstip -n 10 -o csv|"
	"-B -A srcas,dstas,proto -O packets -n 0 -o csv|"
	"-B -n 5 -o csv|inet6"
	"-s srcip|proto tcp and"
	"-s srcip|port 99999"
	"-s srcip|src net 10.0.0.0/33"
	"-s srcip|frobnicate 7"
	"-s nosuchfield|"
)
for qq in "${queries[@]}"; do
	IFS='|' read -r opts filt <<<"$qq"
	read -ra optv <<<"$opts"
	if [ -n "$filt" ]; then same "${optv[@]}" -q "$filt"; else same "${optv[@]}" -q; fi
done
[ "$nonempty" -ge 20 ] && r=0 || r=1
check $r "$nonempty of ${#queries[@]} answers hold rows ($ties listings the same but for ties)"

# the JSON summaries: totals, time window and groups (not the scan's own)
summ() { python3 -c 'import json,sys; d=json.load(sys.stdin)["summary"]; print({k: d[k] for k in ("flows","packets","bytes","first","last","groups","groups_exact")})'; }
for args in "-s srcip4/24 -n 3" "-s ip -n 3 proto udp" "-s exporter_name -n 2" "-s dstport -n 1 port 443"; do
	# shellcheck disable=SC2086
	a=$("$NG_BIN" query --store "$work/store" $args -o json | summ)
	# shellcheck disable=SC2086
	b=$("$NG_BIN" query --clickhouse "$url" $args -o json | summ)
	[ "$a" = "$b" ] && r=0 || r=1
	check $r "summary of $args: $a vs $b"
done

# nagare serve over each: the dashboards' calls give the same JSON
"$NG_BIN" serve --store "$work/store" --http 127.0.0.1:0 >"$work/serve1.log" 2>&1 &
spid1=$!
"$NG_BIN" serve --clickhouse "$url" --http 127.0.0.1:0 >"$work/serve2.log" 2>&1 &
spid2=$!
u1=$(wait_url "$work/serve1.log")
u2=$(wait_url "$work/serve2.log")
# the answers but their scan statistics and times; a page of flows also
# but its totals (the store's cover the segments it read, backend.h)
norm() { python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d.get("summary") or d
drop = ["rows_scanned", "segments_read", "segments_skipped", "segments_pruned", "segments_corrupt",
        "segments_damaged", "segments_rollup", "bytes_read", "elapsed_s", "scan", "quarantined"]
if sys.argv[1].startswith("flows"):
    drop += ["flows", "packets", "bytes", "first", "last"]
for k in drop:
    s.pop(k, None)
print(json.dumps(d, sort_keys=True))' "$1"; }
# the range of the flows, in epoch seconds (the API's default is the last hour)
range=$("$NG_BIN" query --store "$work/store" -s proto -n 1 -o json | python3 -c '
import datetime, json, sys
s = json.load(sys.stdin)["summary"]
t = lambda x: datetime.datetime.strptime(x, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()
print("from=%d&to=%d" % (int(t(s["first"])), int(t(s["last"])) + 2))')
for path in "top?field=srcip&limit=5" "top?field=dstport&order=bytes&limit=10&filter=proto%20tcp" \
	"top?field=srcip4/24&order=bps&limit=5" "top?field=exporter_name&limit=4" \
	"flows?limit=10" "flows?limit=10&offset=5&filter=proto%20udp" "flows?limit=3&offset=40" \
	"summary?filter=not%20port%20443" "series?interval=3600" \
	"series?interval=3600&field=proto&limit=3&order=bytes" \
	"series?interval=1800&field=dstas&limit=4&bidirectional=1&filter=src%20as%2064512" \
	"series?interval=7200&field=srcip4/24&limit=2&filter=proto%20udp" \
	"pairs?src=srcip&dst=dstip&limit=10" "pairs?src=srcas&dst=dstport&order=bytes&filter=proto%20udp" \
	"pairs?src=exporter_name&dst=dst_net&limit=3&order=packets" \
	"pairs?fields=srcas,exporter,dstas&limit=3" "pairs?fields=srcip4/24,dstport&limit=5&order=bytes" \
	"pairs?fields=exporter_name,proto&limit=2&order=bps&filter=not%20port%20443" \
	"complete?field=src_net&prefix=o" "complete?field=exporter_name&prefix=LAB" \
	"complete?field=dst_net&prefix=b%C3%BC" "complete?field=srcas&prefix=645&limit=5" \
	"complete?field=dstport&prefix=4&order=bytes" "complete?field=proto&prefix=1" \
	"complete?field=srcip&prefix=10.1&limit=20" "complete?field=dstip&prefix=2001:" \
	"complete?field=srcmac&prefix=0" "complete?field=flow_start&prefix=20&limit=3" \
	"complete?field=srcip4/24&prefix=10.&limit=5" "complete?field=ip&prefix=10.12" \
	"complete?field=exporter_name,exporter&prefix=o%27" \
	"complete?field=src_net&prefix=%27)%20OR%201%3D1%20--" "complete?field=srcas&prefix=1%27%20OR%20%271" \
	"complete?field=exporter_name&prefix=%5C" "complete?field=src_net&prefix=x%00y"; do
	a=$(curl -sf "${u1}api/v1/$path&$range" | norm "$path") || a="error"
	b=$(curl -sf "${u2}api/v1/$path&$range" | norm "$path") || b="error"
	[ "$a" = "$b" ] && [ "$a" != error ] && r=0 || r=1
	check $r "GET /api/v1/$path: the same JSON (${#a} bytes)"
	[ "$r" = 0 ] || { echo "store: ${a:0:300}" >&2; echo "clickhouse: ${b:0:300}" >&2; }
done
# completions that match something, so that the table above proves more
# than empty answers
for path in "complete?field=src_net&prefix=o" "complete?field=srcip&prefix=10.1" \
	"complete?field=srcas&prefix=645"; do
	n=$(curl -sf "${u2}api/v1/$path&$range" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["rows"]))') || n=0
	[ "$n" -gt 0 ] && r=0 || r=1
	check $r "GET /api/v1/$path on ClickHouse: $n values"
done

# A ClickHouse request past the API's time limit answers as the store's
# deadline does: 503 "query time limit reached" with the same hint.  The
# server is stopped (SIGSTOP) for the request, so that it cannot answer
# within `serve --timeout 1`.
"$NG_BIN" serve --clickhouse "$url" --timeout 1 --http 127.0.0.1:0 >"$work/serve3.log" 2>&1 &
spid3=$!
u3=$(wait_url "$work/serve3.log")
kill -STOP "$CH_PID"
for path in "top?field=srcip" "pairs?src=srcip&dst=dstip" "pairs?fields=srcas,dstas" \
	"complete?field=srcip&prefix=1" "series?interval=3600&field=proto"; do
	code=$(curl -s -o "$work/t.json" -w '%{http_code}' "${u3}api/v1/$path&$range")
	msg=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("error"), "|", d.get("hint"))' "$work/t.json" 2>/dev/null) || msg=
	[ "$code" = 503 ] && [ "$msg" = "query time limit reached | the limit is 1000 ms: narrow the time range or the filter" ] && r=0 || r=1
	check $r "GET /api/v1/$path with ClickHouse stopped: $code $msg"
done
kill -CONT "$CH_PID"
kill "$spid3" 2>/dev/null || true

# The rollups answered the series above (query_sql.h): a row added to
# flows_1h alone (protocol 250, 1000 flows, in the second hour of the
# data) shows in the hourly total series, but not with --no-rollups,
# whose answer stays the store's.
start=$(sed -E 's/^from=([0-9]+)&.*/\1/' <<<"$range")
hour_ms=$(( (start / 3600 + 1) * 3600000 ))
ch_client --query "INSERT INTO nagare.flows_1h (date, time, protocol, flows, packets, bytes) VALUES (toDate(intDiv($hour_ms, 86400000)), $hour_ms, 250, 1000, 1, 1)"
"$NG_BIN" query --store "$work/store" -I 1h -o csv -q >"$work/s.ng"
"$NG_BIN" query --clickhouse "$url" -I 1h -o csv -q >"$work/s.ch"
"$NG_BIN" query --clickhouse "$url" -I 1h -o csv -q --no-rollups >"$work/s.rows"
cmp -s "$work/s.ng" "$work/s.rows" && ! cmp -s "$work/s.ng" "$work/s.ch" && r=0 || r=1
check $r "the hourly series read flows_1h (a row added there shows: $(diff "$work/s.ng" "$work/s.ch" | grep -c '^>') bucket changed), --no-rollups reads flows"

echo "test_clickhouse_query: $fails failures"
[ "$fails" = 0 ]
