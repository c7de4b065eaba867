#!/usr/bin/env bash
# test_clickhouse_filter.sh — nagare's filters compiled to ClickHouse SQL
# (query/filter_sql.h) select the same rows in a real, private
# clickhouse-server as the embedded engine does in the store.
#
# bench/flowgen sends NetFlow v9 (four exporters, a day of flows) to
# `collect --store DIR --clickhouse URL` (both get every row), with a
# configuration that names the exporters and two networks, one of them
# with a name of quotes, backslashes and a comment marker, the other with
# UTF-8.  Then for each filter of the table below,
#
#   SELECT count(), sum(bytes) FROM nagare.flows WHERE <ch_where FILTER>
#
# run with clickhouse-client, equals the flows and bytes of
# `nagare query --store DIR -q -s proto -n 0 -o csv FILTER` (summed over
# its rows).  The table covers every kind of term; values taken from the
# stored flows (an address, an AS, interfaces) make the terms match
# something, and the test fails when too few of its filters match rows
# (a table of empty answers would prove nothing).  Then top-N statistics
# (query/top_sql.h: `-s KEYS/ORDER -n N FILTER`, integer keys, ranked by
# flows, packets or bytes): the same rows in the same order (keys, first
# and last seen, flows, packets, bytes) as `nagare query`'s.
#
# NG_BIN: the nagare binary (default build/nagare); ch_where is taken from
# beside it; NG_FLOWGEN: the generator (default build/bench/flowgen).  Loopback only.  Skips (exit 0,
# saying so) without clickhouse-server (scripts/setup installs it).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NG_BIN=${NG_BIN:-$here/../../build/nagare}
bindir=$(dirname "$NG_BIN")
where=$bindir/ch_where
# the generator of the plain build (as test_clickhouse.sh's nfgen): a
# sanitizer build's flowgen reports its own allocations at exit
flowgen=${NG_FLOWGEN:-$here/../../build/bench/flowgen}
[ -x "$flowgen" ] || flowgen=$bindir/bench/flowgen
# shellcheck source=../clickhouse/server.sh
. "$here/../clickhouse/server.sh"
# shellcheck source=_clickhouse.sh
. "$here/_clickhouse.sh"
cpid=
ch_e2e_stop() { [ -n "$cpid" ] && kill "$cpid" 2>/dev/null || true; ch_kill9; }
ch_e2e_begin test_clickhouse_filter
for b in "$where" "$flowgen"; do
	[ -x "$b" ] || { echo "test_clickhouse_filter: no $b (build targets ch_where, flowgen)" >&2; exit 1; }
done

ch_start "$work/ch"
url="http://127.0.0.1:$CH_HTTP/nagare"
q() { ch_client --query "$1"; }

cp "$here/../clickhouse/hostile.yaml" "$work/nagare.yaml"
port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
NAGARE_CH_BATCH_MS=1000 "$NG_BIN" collect --store "$work/store" --clickhouse "$url" \
	--config "$work/nagare.yaml" --listen "127.0.0.1:$port" --workers 1 --no-http \
	>"$work/collect.log" 2>&1 &
cpid=$!
for _ in $(seq 100); do grep -q 'listening on' "$work/collect.log" && break; sleep 0.1; done
ASAN_OPTIONS=detect_leaks=0 "$flowgen" --records 60000 --rate 30000 --port "$port" --exporters 4 >"$work/gen.out" 2>&1
sleep 1
kill -TERM "$cpid"
wait "$cpid" || true
cpid=

total=$("$NG_BIN" query --store "$work/store" -q -s proto -n 0 -o csv --no-header |
	awk -F, '{f += $(NF-5)} END {print f + 0}')
chtotal=$(q 'SELECT count() FROM nagare.flows')
[ "$total" = "$chtotal" ] && [ "$total" -gt 50000 ] && r=0 || r=1
check $r "the same rows in the store and in ClickHouse ($total, $chtotal)"

# string literals (clickhouse/sql.c) read back by the server as the same
# bytes: quotes, backslashes, NUL, control bytes, UTF-8, invalid UTF-8
for hex in "" 27 5c 00 275c27 27272727 5c5c5c00 0001020708090a0b0c0d1b1f7f \
	e69db1e4baac fffe80c328 2d2d202f2a20 5c7832375c78 "$(printf 'x%.0s' {1..64} | od -An -v -tx1 | tr -d ' \n')"; do
	lit=$("$where" --literal "$hex")
	got=$(q "SELECT lower(hex($lit))")
	[ "$got" = "$hex" ] && r=0 || r=1
	check $r "literal $lit: the server reads ${got:-(empty)}"
done

# values of stored flows, so that the terms on them match rows
IFS=, read -r a b as inif outif < <("$NG_BIN" query --store "$work/store" -q -n 1 -o ndjson |
	python3 -c 'import json,sys; r=json.loads(sys.stdin.readline()); print(",".join(str(r[k]) for k in ("src_addr","dst_addr","src_as","in_if","out_if")))')
echo "values from the store: src $a dst $b as $as in_if $inif out_if $outif"

filters=(
	"any"
	"proto tcp"
	"proto udp and dst port 53"
	"not proto tcp and not proto udp"
	"port 443"
	"src port > 1024 and dst port < 1024"
	"dst port in [80 443 8080 53]"
	"net 10.0.0.0/8"
	"src net 10.0.0.0/9"
	"dst net 10.128.0.0 255.128.0.0"
	"not dst net 10.0.0.0/8"
	"src host $a"
	"host $b or host $a"
	"ip in [$a $b 10.0.0.0/16]"
	"src as $as"
	"as $as or dst as < 100"
	"as in [$as 1 2 3]"
	"in if $inif"
	"out if $outif"
	"if $inif"
	"exporter 127.0.1.1"
	"exporter != 127.0.1.2"
	"router ip 127.0.1.3"
	"exporter in [127.0.1.1 127.0.1.4]"
	"next ip 10.0.0.1"
	"bytes > 10k"
	"packets >= 10"
	"bytes > 1M or packets < 3"
	"duration > 1000"
	"bpp > 500"
	"pps > 10"
	"bps > 1M"
	"flags S"
	"flags SA and not flags F"
	"tos 0"
	"dscp > 0"
	"src mask 24"
	"dst mask > 16"
	"inet"
	"inet6"
	"exporter_name lab-b"
	"exporter_name ~ LAB"
	"exporter_name = \"o'hare \\ edge\""
	"src net-name \"o'brien \\ lab -- x /*y*/\""
	"src net-name \"o'brien\""
	"dst net-name \"büro 東京\""
	"net-role site-b"
	"src net-role != site-a"
	"src net-name \"'; DROP TABLE flows; --\""
	"exporter_name '\\'"
	"(port 80 or port 443) and not (proto udp or src net 10.0.0.0/8)"
	"not (exporter 127.0.1.1 or exporter 127.0.1.2) and bytes > 1k"
	"flows 1"
	"flows > 1"
)
matched=0
for f in "${filters[@]}"; do
	if ! sql=$("$where" "$f" 2>"$work/where.err"); then
		check 1 "'$f' compiles: $(cat "$work/where.err")"
		continue
	fi
	ch=$(q "SELECT count(), sum(bytes) FROM nagare.flows WHERE $sql FORMAT CSV" 2>&1) || ch="error: $ch"
	ng=$("$NG_BIN" query --store "$work/store" -q -s proto -n 0 -o csv --no-header "$f" |
		awk -F, '{f += $(NF-5); b += $(NF-3)} END {printf "%d,%d\n", f, b}')
	[ "$ch" = "$ng" ] && r=0 || r=1
	check $r "$f: ClickHouse $ch, nagare $ng"
	[ "${ng%%,*}" != 0 ] && [ "${ng%%,*}" != "$total" ] && matched=$((matched + 1))
done
# top-N (query/top_sql.h): the same rows, in the same order, as -s KEYS/ORDER
tops=(
	"dstport|bytes|10|proto tcp"
	"srcas,dstport|flows|10|not port 443"
	"proto|packets|0|any"
	"inif|bytes|5|exporter 127.0.1.1"
	"dstport|flows|20|bytes > 1k and net 10.0.0.0/9"
	"srcport|packets|7|src net-name \"o'brien\" and proto udp"
)
for t in "${tops[@]}"; do
	IFS='|' read -r keys order n f <<<"$t"
	sql=$("$where" --top "$keys" "$order" "$n" "$f") || { check 1 "top $t compiles"; continue; }
	q "$sql FORMAT CSV" >"$work/top.ch" 2>&1 || true
	"$NG_BIN" query --store "$work/store" -q -s "$keys/$order" -n "$n" -o csv --no-header "$f" \
		>"$work/top.ng"
	python3 - "$work/top.ch" "$work/top.ng" "$(($(tr -cd , <<<"$keys" | wc -c) + 1))" <<'PY' >"$work/top.cmp"
import csv, datetime, sys
k = int(sys.argv[3])
def ms(t):
    d = datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    return str(round(d.timestamp() * 1000))
ch = [r for r in csv.reader(open(sys.argv[1]))]
ng = [r[2:2 + k] + [ms(r[0]), ms(r[1])] + r[2 + k:5 + k] for r in csv.reader(open(sys.argv[2]))]
print("same" if ch == ng and ng else "differ: %d vs %d rows; first %s vs %s" % (len(ch), len(ng), ch[:1], ng[:1]))
PY
	[ "$(cat "$work/top.cmp")" = same ] && r=0 || r=1
	check $r "-s $keys/$order -n $n '$f': $(wc -l <"$work/top.ng") rows, $(cat "$work/top.cmp")"
done

[ "$matched" -ge 35 ] && r=0 || r=1
check $r "$matched of ${#filters[@]} filters match some rows but not all"
# the hostile values reached the server as values: the table is there
[ "$(q 'SELECT count() FROM nagare.flows')" = "$chtotal" ] && r=0 || r=1
check $r "nagare.flows is still whole"
echo "test_clickhouse_filter: $fails failures"
[ "$fails" = 0 ]
