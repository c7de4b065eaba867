#!/usr/bin/env bash
# test_clickhouse_cluster.sh — nagare writing to a two-shard ClickHouse
# cluster (docs/clickhouse.md, "Cluster"): two private clickhouse-servers
# on loopback (tests/clickhouse/cluster.sh, cluster `two_shards`, one
# replica a shard, no ZooKeeper), checked with clickhouse-client against
# each of them:
#
#   1. schema: `nagare clickhouse init` with clickhouse.cluster makes on
#      each server the local tables (flows_local …, the views on them) and
#      the Distributed tables named as the one-server schema's (flows …,
#      sharding key cityHash64(exporter)); run twice it is a no-op (no
#      change logged, every table's metadata as it was, one schema_version
#      row a server); a column dropped from server 1's flows and
#      flows_local (an older nagare's schema) is reported by `nagare
#      doctor` and added back to both by init.  `nagare doctor` sees both
#      servers.
#   2. two collectors, each fed by its own exporters (bench/nfgen from
#      127.0.0.1-4 and from 127.0.0.11-14): A writes through the
#      Distributed table of server 1 (insert: distributed), B into server
#      2's local table (insert: local).  Server 2 (shard 2) is stopped in
#      the middle and started again: meanwhile a read through the
#      Distributed table fails with an error (no partial answer), and
#      both collectors keep their batches until it is back.  Then, read
#      through the Distributed tables of EITHER server: count() and
#      sum(bytes) per exporter equal the collectors' own stores (`nagare
#      query -s exporter`; and so does `nagare query --clickhouse` of
#      either server), the count equals what the generators sent, the
#      rollups and the exporters table agree; each shard holds rows, the
#      rows of one exporter lie on one shard: A's on shard
#      cityHash64(exporter) % 2 + 1 (ClickHouse's own function), B's on
#      shard 2; no row twice.
#   3. a shard refusing its part of an insert (a column dropped from its
#      flows_local by hand): the sender makes the schema again on it and
#      sends the batch once; the totals of both servers stay exact.
#
# NG_BIN: the nagare binary (default build/nagare); NG_NFGEN: the
# generator (default build/bench/nfgen).  Loopback only.  Skips (exit 0,
# saying so) without clickhouse-server (scripts/setup installs it).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NG_BIN=${NG_BIN:-$here/../../build/nagare}
NG_NFGEN=${NG_NFGEN:-$here/../../build/bench/nfgen}
[ -x "$NG_NFGEN" ] || NG_NFGEN=$(dirname "$NG_BIN")/bench/nfgen
# shellcheck source=../clickhouse/cluster.sh
. "$here/../clickhouse/cluster.sh"
# shellcheck source=_clickhouse.sh
. "$here/_clickhouse.sh"
ch_e2e_stop() { chc_kill_all; }
ch_e2e_begin test_clickhouse_cluster
[ -x "$NG_NFGEN" ] || { echo "test_clickhouse_cluster: no generator at $NG_NFGEN (build target nfgen)" >&2; exit 1; }
q() { # q SERVER SQL
	chc_client "$1" --query "$2"
}
free_udp() {
	python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

wait_count() { # until server 1's Distributed flows holds N rows, or 60 s, then 2 s more
	for _ in $(seq 300); do
		[ "$(q 1 'SELECT count() FROM nagare.flows' 2>/dev/null)" = "$1" ] && break
		sleep 0.2
	done
	sleep 2 # a row too many would show by then
}

chc_start "$work/ch"
url1="http://127.0.0.1:$CH1_HTTP/nagare"
url2="http://127.0.0.1:$CH2_HTTP/nagare"
# the two servers share a host, so their HTTP ports are listed (nodes:);
# on servers of one HTTP port each, cluster: alone is enough
for m in distributed local; do
	cat >"$work/$m.yaml" <<YAML
clickhouse:
  cluster: $CHC_CLUSTER
  insert: $m
  nodes: [$url1, $url2]
  timeout: 5s
YAML
done

# ---- 1. schema ---------------------------------------------------------------
eq "$(q 1 "SELECT count() FROM system.clusters WHERE cluster = '$CHC_CLUSTER'")" 2 "system.clusters: two shards"
"$NG_BIN" clickhouse init "$url1" --config "$work/distributed.yaml" >"$work/init1.out" 2>"$work/init1.err"
cat "$work/init1.out"
grep -c 'cluster two_shards shard' "$work/init1.out" | grep -qx 2 && r=0 || r=1
check $r "init: both servers"
tables_of() { # the schema of server N: name, engine, metadata time
	q "$1" "SELECT name, engine, metadata_modification_time FROM system.tables WHERE database = 'nagare' ORDER BY name FORMAT TSV"
}
before1=$(tables_of 1)
before2=$(tables_of 2)
sleep 1.1 # a change would show in metadata_modification_time (seconds)
"$NG_BIN" clickhouse init "$url2" --config "$work/local.yaml" >"$work/init2.out" 2>"$work/init2.err"
eq "$(tables_of 1 | md5sum)" "$(echo "$before1" | md5sum)" "init twice: server 1's tables unchanged"
eq "$(tables_of 2 | md5sum)" "$(echo "$before2" | md5sum)" "init twice: server 2's tables unchanged"
grep -Eq 'created|upgraded|adding' "$work/init2.err" && r=1 || r=0
check $r "init twice: the second run changes nothing (nothing logged)"
for n in 1 2; do
	eq "$(q $n 'SELECT count() FROM nagare.schema_version')" 1 "server $n: one schema_version row"
	names=$(q $n "SELECT name FROM system.tables WHERE database = 'nagare' ORDER BY name FORMAT TSV" | tr '\n' ' ')
	eq "$names" "exporters exporters_local exporters_mv flows flows_1h flows_1h_local flows_1h_mv flows_1m flows_1m_local flows_1m_mv flows_local interfaces interfaces_in_mv interfaces_local interfaces_out_mv schema_version " \
		"server $n: local tables, views and Distributed tables"
	eng=$(q $n "SELECT engine FROM system.tables WHERE database = 'nagare' AND name IN ('flows', 'flows_local') ORDER BY name FORMAT TSV" | tr '\n' ' ')
	eq "$eng" "Distributed MergeTree " "server $n: flows is Distributed, flows_local MergeTree"
done
q 1 "SHOW CREATE TABLE nagare.flows" | grep -q "Distributed(\\\\'$CHC_CLUSTER\\\\', \\\\'nagare\\\\', \\\\'flows_local\\\\', cityHash64(exporter))" && r=0 ||
	q 1 "SHOW CREATE TABLE nagare.flows" | grep -q "Distributed('$CHC_CLUSTER', 'nagare', 'flows_local', cityHash64(exporter))" && r=0 || r=1
check $r "flows: Distributed over flows_local, sharded by cityHash64(exporter)"
q 1 "SELECT create_table_query FROM system.tables WHERE database = 'nagare' AND name = 'flows_1m_mv'" | grep -q 'TO nagare.flows_1m_local' && r=0 || r=1
check $r "the rollups' views write into the local tables"
doc=$("$NG_BIN" doctor --no-http --clickhouse "$url1" --config "$work/distributed.yaml" 2>&1 | grep clickhouse || true)
echo "$doc"
echo "$doc" | grep -q "ok    clickhouse cluster: $CHC_CLUSTER: 2 shards, 2 servers" && r=0 || r=1
check $r "doctor: the cluster's servers"
[ "$(echo "$doc" | grep -c 'ok    clickhouse schema: .*version 1, current')" = 2 ] && r=0 || r=1
check $r "doctor: the schema current on both"
# an older nagare's cluster schema (a field added since): init adds the
# column to the local table and to the Distributed table over it
q 1 'ALTER TABLE nagare.flows DROP COLUMN application'
q 1 'ALTER TABLE nagare.flows_local DROP COLUMN application'
doc=$("$NG_BIN" doctor --no-http --clickhouse "$url1" --config "$work/distributed.yaml" 2>&1 | grep 'clickhouse schema' || true)
echo "$doc" | grep -q "warn  clickhouse schema: database nagare at http://127.0.0.1:$CH1_HTTP: .*2 columns missing (application flows_local.application)" && r=0 || r=1
check $r "doctor: the column missing on server 1 is reported"
"$NG_BIN" clickhouse init "$url1" --config "$work/distributed.yaml" >/dev/null 2>"$work/init5.err"
grep lacks "$work/init5.err" | cut -c1-160
for t in flows flows_local; do
	eq "$(q 1 "SELECT type FROM system.columns WHERE database = 'nagare' AND table = '$t' AND name = 'application'")" \
		"$(q 2 "SELECT type FROM system.columns WHERE database = 'nagare' AND table = '$t' AND name = 'application'")" \
		"init adds the column back to server 1's $t, typed as on server 2"
done
# a one-server schema is not turned into a cluster's, nor the reverse
"$NG_BIN" clickhouse init "$url1" >"$work/init3.out" 2>"$work/init3.err" && r=1 || r=0
check $r "init without the cluster refuses the cluster's database: $(cat "$work/init3.err")"

# ---- 2. two collectors, each its own exporters --------------------------------
rate=${NG_CH_RATE:-5000}
secs=${NG_CH_SECONDS:-12}
portA=$(free_udp)
portB=$(free_udp)
start_collector() { # start_collector NAME URL CONFIG PORT
	NAGARE_CH_BATCH_MS=1000 "$NG_BIN" collect --store "$work/store$1" --clickhouse "$2" \
		--config "$3" --listen "127.0.0.1:$4" --no-http --workers 1 --stats-interval 1 \
		>"$work/collect$1.log" 2>&1 &
	pids+=($!)
	eval "cpid$1=\$!"
	for _ in $(seq 100); do grep -q 'listening on' "$work/collect$1.log" && break; sleep 0.1; done
}
start_collector A "$url1" "$work/distributed.yaml" "$portA"
start_collector B "$url2" "$work/local.yaml" "$portB"
grep clickhouse: "$work/collectA.log" "$work/collectB.log" | head -4
"$NG_NFGEN" --port "$portA" --rate "$rate" --seconds "$secs" --sources 4 --exporters 4 \
	--first-exporter 1 --seed 1 >"$work/genA.out" 2>&1 &
genA=$!
"$NG_NFGEN" --port "$portB" --rate "$rate" --seconds "$secs" --sources 4 --exporters 4 \
	--first-exporter 11 --seed 2 >"$work/genB.out" 2>&1 &
genB=$!
pids+=("$genA" "$genB")
sleep 4
chc_stop 2
echo "shard 2 stopped at 4 s"
sleep 1
out=$(q 1 'SELECT count() FROM nagare.flows' 2>&1) && r=1 || r=0
check $r "shard 2 down: a read through the Distributed table fails ($(echo "$out" | head -1 | cut -c1-100))"
sleep 5 # 6 s down: a store flush (every 5 s) falls in it
chc_restart 2
echo "shard 2 started again"
wait "$genA" "$genB" || true
sentA=$(sed -n 's/.*sent records=\([0-9]*\).*/\1/p' "$work/genA.out")
sentB=$(sed -n 's/.*sent records=\([0-9]*\).*/\1/p' "$work/genB.out")
echo "generators: A $sentA records, B $sentB records"
wait_count "$((sentA + sentB))"
kill -TERM "$cpidA" "$cpidB"
wait "$cpidA" || true
wait "$cpidB" || true
tail -n 3 "$work/collectA.log" "$work/collectB.log"
retries=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["clickhouse"]["retries"])' "$work/storeA/state/exporters.json")
[ "$retries" -gt 0 ] && r=0 || r=1
check $r "collector A retried while shard 2 was down ($retries retries)"
partial=$(grep -c 'rows in the cluster (a shard failed): deleting them' "$work/collectA.log" || true)
echo "batches found in part in the cluster, deleted and sent again: $partial"

# per exporter: the collectors' own stores, A's and B's together
store_per_exporter() {
	for c in A B; do
		"$NG_BIN" query --store "$work/store$c" -s exporter -n 100 -o json
	done | json_per_exporter
}
json_per_exporter() { # `query -s exporter -o json` documents on stdin: EXPORTER FLOWS BYTES lines
	python3 -c '
import json, sys
dec = json.JSONDecoder()
text = sys.stdin.read()
i, rows = 0, {}
while i < len(text):
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    doc, i = dec.raw_decode(text, i)
    for r in doc["rows"]:
        rows[r["exporter"]] = (r["flows"], r["bytes"])
for e in sorted(rows):
    print("%s\t%d\t%d" % (e, rows[e][0], rows[e][1]))'
}
store=$(store_per_exporter)
echo "stores:"
echo "$store"
per_exp="SELECT replaceOne(IPv6NumToString(exporter), '::ffff:', '') AS e, count(), sum(bytes) FROM nagare.flows GROUP BY e ORDER BY e FORMAT TSV"
for n in 1 2; do
	got=$(q $n "$per_exp")
	eq "$(echo "$got" | md5sum)" "$(echo "$store" | md5sum)" "server $n, through the Distributed table: count and bytes per exporter = the stores'"
	[ "$got" = "$store" ] || { echo "server $n:"; echo "$got"; }
	eq "$(q $n 'SELECT count() FROM nagare.flows')" "$((sentA + sentB))" "server $n: count() = records sent by both generators"
	eq "$(q $n 'SELECT sum(flows), sum(bytes) FROM nagare.flows_1m FORMAT TSV')" "$(q $n 'SELECT count(), sum(bytes) FROM nagare.flows FORMAT TSV')" "server $n: flows_1m sums = flows"
	eq "$(q $n 'SELECT sum(flows), sum(bytes) FROM nagare.flows_1h FORMAT TSV')" "$(q $n 'SELECT count(), sum(bytes) FROM nagare.flows FORMAT TSV')" "server $n: flows_1h sums = flows"
	eq "$(q $n 'SELECT uniqExact(exporter) FROM nagare.exporters')" 8 "server $n: the exporters table holds the 8 exporters"
done
eq "$(echo "$store" | wc -l)" 8 "the stores saw 8 exporters"
# nagare's own ClickHouse backend through either server: the same answer
for u in "$url1" "$url2"; do
	got=$("$NG_BIN" query --clickhouse "$u" -s exporter -n 100 -o json | json_per_exporter)
	eq "$(echo "$got" | md5sum)" "$(echo "$store" | md5sum)" "nagare query --clickhouse ${u%/nagare} -s exporter = the stores'"
done
# the shards
for n in 1 2; do
	rows=$(q $n 'SELECT count() FROM nagare.flows_local')
	[ "$rows" -gt 0 ] && r=0 || r=1
	check $r "shard $n holds rows ($rows)"
	echo "shard $n: $(q $n "SELECT replaceOne(IPv6NumToString(exporter), '::ffff:', '') AS e, count() FROM nagare.flows_local GROUP BY e ORDER BY e FORMAT TSV" | tr '\t\n' '= ')"
done
e1=$(q 1 "SELECT DISTINCT hex(exporter) FROM nagare.flows_local FORMAT TSV" | LC_ALL=C sort)
e2=$(q 2 "SELECT DISTINCT hex(exporter) FROM nagare.flows_local FORMAT TSV" | LC_ALL=C sort)
eq "$(LC_ALL=C comm -12 <(echo "$e1") <(echo "$e2") | wc -l)" 0 "no exporter's rows on both shards"
eq "$(q 1 "SELECT count() FROM nagare.flows_local WHERE cityHash64(exporter) % 2 != 0")" 0 \
	"shard 1 holds only exporters of cityHash64(exporter) % 2 = 0"
eq "$(q 2 "SELECT count() FROM nagare.flows_local WHERE IPv6NumToString(exporter) IN ('::ffff:127.0.0.1', '::ffff:127.0.0.2', '::ffff:127.0.0.3', '::ffff:127.0.0.4') AND cityHash64(exporter) % 2 != 1")" 0 \
	"A's exporters on shard 2 are those of cityHash64(exporter) % 2 = 1"
eq "$(q 2 "SELECT count() FROM nagare.flows_local WHERE IPv6NumToString(exporter) IN ('::ffff:127.0.0.11', '::ffff:127.0.0.12', '::ffff:127.0.0.13', '::ffff:127.0.0.14')")" "$sentB" \
	"B's rows (insert: local) all on shard 2, its own server"
eq "$(q 1 'SELECT count() FROM (SELECT batch_id, flow_start, exporter, src_addr, dst_addr, src_port, dst_port, bytes, count() AS c FROM nagare.flows GROUP BY batch_id, flow_start, exporter, src_addr, dst_addr, src_port, dst_port, bytes HAVING c > 1)')" 0 \
	"no row twice within a batch"
# ---- 3. a shard refusing its part of an insert --------------------------------
# shard 2's flows_local loses a column (src_port) once collector A runs:
# its next insert through the Distributed table fails on shard 2 (no such
# column, code 16).  The sender makes the schema again (the column added
# back on shard 2) and checks the batch before sending it again: had shard
# 1 kept its part, the batch's rows would be deleted on both shards and
# sent whole (18.16 fails such an insert whole: shard 1 keeps nothing).
# Either way the totals stay exact.
start_collector A "$url1" "$work/distributed.yaml" "$portA"
for _ in $(seq 100); do grep -q 'writing to cluster' "$work/collectA.log" && break; sleep 0.1; done
q 2 'ALTER TABLE nagare.flows_local DROP COLUMN src_port'
"$NG_NFGEN" --port "$portA" --rate "$rate" --seconds 3 --sources 4 --exporters 4 \
	--first-exporter 1 --seed 3 >"$work/genA2.out" 2>&1
sentA2=$(sed -n 's/.*sent records=\([0-9]*\).*/\1/p' "$work/genA2.out")
wait_count "$((sentA + sentB + sentA2))"
kill -TERM "$cpidA"
wait "$cpidA" || true
grep -E 'clickhouse: .*(code 16|lacks column|in the cluster|deleting)' "$work/collectA.log" | cut -c1-220 || true
grep -q 'code 16' "$work/collectA.log" && grep -q 'flows_local lacks column src_port' "$work/collectA.log" && r=0 || r=1
check $r "shard 2 refused its part (code 16) and the sender added the column back"
partial=$(grep -c 'rows in the cluster (a shard failed): deleting them' "$work/collectA.log" || true)
echo "batches found in part in the cluster, deleted and sent again: $partial"
store=$(store_per_exporter)
for n in 1 2; do
	got=$(q $n "$per_exp")
	eq "$(echo "$got" | md5sum)" "$(echo "$store" | md5sum)" "after it, server $n: count and bytes per exporter = the stores'"
	eq "$(q $n 'SELECT count() FROM nagare.flows')" "$((sentA + sentB + sentA2))" "after it, server $n: count() = records sent"
	eq "$(q $n 'SELECT sum(flows), sum(bytes) FROM nagare.flows_1m FORMAT TSV')" "$(q $n 'SELECT count(), sum(bytes) FROM nagare.flows FORMAT TSV')" "after it, server $n: flows_1m sums = flows"
done

# init once more, over the data: still a no-op
before1=$(tables_of 1)
"$NG_BIN" clickhouse init "$url1" --config "$work/distributed.yaml" >/dev/null 2>"$work/init4.err"
eq "$(tables_of 1 | md5sum)" "$(echo "$before1" | md5sum)" "init over the data: server 1's tables unchanged"

[ "$fails" = 0 ] || { echo "test_clickhouse_cluster: $fails checks failed"; exit 1; }
echo "test_clickhouse_cluster: all checks passed"
