#!/usr/bin/env bash
# test_clickhouse.sh — nagare writing to a real, private clickhouse-server
# (docs/clickhouse.md), checked with clickhouse-client against the same
# server:
#
#   1. schema: `nagare clickhouse init` twice is idempotent (one
#      schema_version row, the tables and views); a column dropped by
#      hand (an older nagare's schema) is reported by `nagare doctor` and
#      added back by init.
#   2. nothing lost, nothing doubled: bench/nfgen sends NetFlow v9 at a
#      fixed rate to `collect --store DIR --clickhouse URL` (both); in the
#      middle ClickHouse is stopped and started again, then killed with
#      SIGKILL while an INSERT runs, then frozen (SIGSTOP) during an insert
#      past nagare's 2 s time-out and let go (SIGCONT): it commits the
#      insert nagare gave up on.  After the stop, count() and
#      sum(bytes) in ClickHouse equal the store's (`nagare query`) and the
#      count equals what the generator sent; the per-minute rollup sums
#      the same; `nagare status` shows the retries.
#   3. a spool that fills up counts what it drops: `collect --clickhouse`
#      alone (no store) with ClickHouse down and a small spool; then
#      ClickHouse back and a second collector run replays the spool:
#      ClickHouse's count + the dropped rows nagare counted = sent.
#
# NG_BIN: the nagare binary (default build/nagare); NG_NFGEN: the
# generator (default build/bench/nfgen).  Loopback only.  Skips (exit 0,
# saying so) without clickhouse-server (scripts/setup installs it).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NG_BIN=${NG_BIN:-$here/../../build/nagare}
NG_NFGEN=${NG_NFGEN:-$here/../../build/bench/nfgen}
[ -x "$NG_NFGEN" ] || NG_NFGEN=$(dirname "$NG_BIN")/bench/nfgen
# shellcheck source=../clickhouse/server.sh
. "$here/../clickhouse/server.sh"
# shellcheck source=_clickhouse.sh
. "$here/_clickhouse.sh"
ch_e2e_stop() { ch_kill9; }
ch_e2e_begin test_clickhouse
[ -x "$NG_NFGEN" ] || { echo "test_clickhouse: no generator at $NG_NFGEN (build target nfgen)" >&2; exit 1; }

ch_start "$work/ch"
url="http://127.0.0.1:$CH_HTTP/nagare"
q() { ch_client --query "$1"; }

# ---- 1. schema --------------------------------------------------------------
"$NG_BIN" clickhouse init "$url" >"$work/init1.out"
"$NG_BIN" clickhouse init "$url" >"$work/init2.out"
cat "$work/init1.out"
eq "$(q 'SELECT count() FROM nagare.schema_version')" 1 "init twice: one schema_version row"
tables=$(q "SELECT name FROM system.tables WHERE database = 'nagare' ORDER BY name FORMAT TSV" | tr '\n' ' ')
eq "$tables" "exporters exporters_mv flows flows_1h flows_1h_mv flows_1m flows_1m_mv interfaces interfaces_in_mv interfaces_out_mv schema_version " "the tables and views"
ncols=$(q "SELECT count() FROM system.columns WHERE database = 'nagare' AND table = 'flows'")
nfields=$(python3 - "$here/../../src/core/field.c" <<'PY'
import re, sys
print(len(re.findall(r'^\s*F\(NG_F_', open(sys.argv[1]).read(), re.M)))
PY
)
eq "$ncols" "$((nfields + 2))" "flows: one column per field, date and batch_id"
q 'ALTER TABLE nagare.flows DROP COLUMN application'
doc=$("$NG_BIN" doctor --no-http --clickhouse "$url" 2>&1 | grep 'clickhouse schema' || true)
echo "$doc"
echo "$doc" | grep -q 'warn.*1 columns missing (application)' && r=0 || r=1
check $r "doctor: the dropped column is reported"
"$NG_BIN" clickhouse init "$url" >/dev/null 2>"$work/init3.err"
eq "$(q "SELECT type FROM system.columns WHERE database = 'nagare' AND table = 'flows' AND name = 'application'")" \
	"$(q "SELECT type FROM system.columns WHERE database = 'nagare' AND table = 'flows' AND name = 'service'")" \
	"init adds the column back, typed as the other strings"
grep -q 'lacks column application' "$work/init3.err" && r=0 || r=1
check $r "init says what it added"

# ---- 2. nothing lost, nothing doubled ---------------------------------------
port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# bench/clickhouse-outage runs this part at the issue's 200 000 records/s
# for 120 s with a 60 s outage (NG_CH_RATE, NG_CH_SECONDS, NG_CH_OUTAGE)
rate=${NG_CH_RATE:-20000}
secs=${NG_CH_SECONDS:-14}
outage=${NG_CH_OUTAGE:-5}
hport=$(ch_free_port)
# a 2 s request time-out, for the SIGSTOP below
printf 'clickhouse:\n  timeout: 2s\n' >"$work/ch.yaml"
NAGARE_CH_BATCH_MS=1000 "$NG_BIN" collect --store "$work/store" --clickhouse "$url" \
	--config "$work/ch.yaml" --listen "127.0.0.1:$port" --http "127.0.0.1:$hport" --workers 1 \
	--stats-interval 1 >"$work/collect.log" 2>&1 &
cpid=$!
pids+=("$cpid")
for _ in $(seq 100); do grep -q 'listening on' "$work/collect.log" && break; sleep 0.1; done
"$NG_NFGEN" --port "$port" --rate "$rate" --seconds "$secs" --sources 4 >"$work/gen.out" 2>&1 &
gpid=$!
pids+=("$gpid")
sleep 5
t0=$SECONDS
ch_stop
echo "ClickHouse stopped at 5 s (its stop took $((SECONDS - t0)) s)"
sleep "$outage"
ch_restart
echo "ClickHouse started again"
# SIGKILL while an INSERT of nagare's runs
sleep 1
killed=0
for _ in $(seq 400); do
	if curl -s "http://127.0.0.1:$CH_HTTP/" --data-binary \
		"SELECT count() FROM system.processes WHERE query LIKE 'INSERT INTO nagare.flows (%'" | grep -q '^[1-9]'; then
		ch_kill9
		killed=1
		break
	fi
	sleep 0.01
done
check $((1 - killed)) "ClickHouse killed (SIGKILL) during an insert"
sleep 1
ch_restart
echo "ClickHouse started again after the kill"
# a time-out after ClickHouse may have committed: SIGSTOP during an
# insert (nagare's request times out after 2 s), SIGCONT 4 s later (the
# server ends the insert and commits it): the check before the resend
# must find the batch there and not send it again
# (frozen once the batch's rows are in flows and while the insert still
# runs, its materialized views or its reply pending: then the server has
# committed what nagare times out on, every time; stopping at any moment
# of the insert sometimes froze it before the commit, and there was
# nothing for the check to find)
sleep 1
stopped=0
chq() { curl -s "http://127.0.0.1:$CH_HTTP/" --data-binary "$1"; }
for _ in $(seq 2000); do
	qid=$(chq "SELECT query_id FROM system.processes WHERE query LIKE 'INSERT INTO nagare.flows (%' LIMIT 1")
	if [ -n "$qid" ]; then
		bid=$(python3 -c 'import sys; print(int(sys.argv[1].split("-")[1], 16))' "$qid" 2>/dev/null || true)
		if [ -n "$bid" ] && chq "SELECT count() FROM nagare.flows WHERE batch_id = $bid" | grep -q '^[1-9]' &&
			chq "SELECT count() FROM system.processes WHERE query_id = '$qid'" | grep -q '^[1-9]'; then
			kill -STOP "$CH_PID"
			stopped=1
			echo "ClickHouse frozen with batch $qid in flows, its insert still running"
			break
		fi
	fi
	sleep 0.005
done
check $((1 - stopped)) "ClickHouse stopped (SIGSTOP) during an insert"
sleep 4
kill -CONT "$CH_PID"
wait "$gpid" || true
echo "generator: $(cat "$work/gen.out")"
sent=$(sed -n 's/.*sent records=\([0-9]*\).*/\1/p' "$work/gen.out")
# until nothing waits (the counters of --stats-interval 1), or 60 s
sleep 2
for _ in $(seq 600); do
	python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["clickhouse"]["queued_rows"] != 0)' \
		"$work/store/state/exporters.json" 2>/dev/null && break
	sleep 0.1
done
sleep 1.5 # the live counters: published once a second
metrics=$(curl -s "http://127.0.0.1:$hport/metrics" | grep '^nagare_clickhouse_rows_sent_total ' || true)
echo "$metrics"
api=$(curl -s "http://127.0.0.1:$hport/api/v1/exporters" | python3 -c 'import json,sys; print(json.load(sys.stdin)["clickhouse"]["rows_sent"])' || true)
kill -TERM "$cpid"
wait "$cpid" || true
tail -3 "$work/collect.log"
ch=$(q 'SELECT count(), sum(bytes) FROM nagare.flows FORMAT TSV')
store=$("$NG_BIN" query --store "$work/store" -s proto -o json | python3 -c '
import json, sys
d = json.load(sys.stdin)["summary"]
print("%d\t%d" % (d["flows"], d["bytes"]))')
echo "generator: $sent records; store: $store; ClickHouse: $ch"
eq "$ch" "$store" "ClickHouse count() and sum(bytes) = the store's"
eq "${ch%%	*}" "$sent" "ClickHouse count() = records sent"
eq "$metrics" "nagare_clickhouse_rows_sent_total $api" "/metrics and /api/v1/exporters agree on the rows sent"
[ "${api:-0}" -gt 0 ] && r=0 || r=1
check $r "/api/v1/exporters: clickhouse.rows_sent ${api:-none}"
eq "$(q 'SELECT count() FROM (SELECT batch_id, flow_start, exporter, src_addr, dst_addr, src_port, dst_port, bytes, count() AS c FROM nagare.flows GROUP BY batch_id, flow_start, exporter, src_addr, dst_addr, src_port, dst_port, bytes HAVING c > 1)')" 0 \
	"no row twice within a batch"
eq "$(q 'SELECT sum(flows), sum(bytes) FROM nagare.flows_1m FORMAT TSV')" "$ch" "flows_1m sums = flows"
eq "$(q 'SELECT sum(flows), sum(bytes) FROM nagare.flows_1h FORMAT TSV')" "$ch" "flows_1h sums = flows"
"$NG_BIN" status --store "$work/store" >"$work/status.out"
grep clickhouse: "$work/status.out"
grep -q 'clickhouse: [1-9][0-9]* rows in' "$work/status.out" && r=0 || r=1
check $r "status shows the rows sent"
retries=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["clickhouse"]["retries"])' "$work/store/state/exporters.json")
[ "$retries" -gt 0 ] && r=0 || r=1
check $r "retries counted ($retries)"
dedup=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["clickhouse"]["deduplicated"])' "$work/store/state/exporters.json")
[ "$dedup" -gt 0 ] && r=0 || r=1
check $r "the batch committed after the time-out was found there, not sent again (deduplicated $dedup)"

# ---- 3. a spool that fills up ------------------------------------------------
t0=$SECONDS
ch_stop
echo "ClickHouse stopped (its stop took $((SECONDS - t0)) s)"
url2="http://127.0.0.1:$CH_HTTP/spooltest"
export NAGARE_STORE="$work/only"
NAGARE_CH_BATCH_MS=500 NAGARE_CH_MEMORY_MAX=1 NAGARE_CH_SPOOL_MAX=12000000 \
	"$NG_BIN" collect --clickhouse "$url2" --listen "127.0.0.1:$port" --no-http --workers 1 \
	>"$work/collect2.log" 2>&1 &
cpid=$!
pids+=("$cpid")
for _ in $(seq 100); do grep -q 'listening on' "$work/collect2.log" && break; sleep 0.1; done
"$NG_NFGEN" --port "$port" --rate 20000 --seconds 4 --sources 2 >"$work/gen2.out" 2>&1
echo "phase 3: generator done at $SECONDS s"
sent2=$(sed -n 's/.*sent records=\([0-9]*\).*/\1/p' "$work/gen2.out")
sleep 6
kill -TERM "$cpid"
wait "$cpid" && rc=0 || rc=$?
[ "$rc" = 1 ] && r=0 || r=1
check $r "collect exits 1 when rows were dropped (exit $rc)"
dropped=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["clickhouse"]["dropped_rows"])' "$work/only/state/exporters.json")
[ "$dropped" -gt 0 ] && r=0 || r=1
check $r "the full spool counted what it dropped ($dropped rows)"
grep -q 'the spool is full' "$work/collect2.log" && r=0 || r=1
check $r "and logged it"
[ -z "$(find "$work/only/flows" -name '*.seg' | head -1)" ] && r=0 || r=1
check $r "--clickhouse alone writes no segment"
ch_restart
NAGARE_CH_BATCH_MS=500 "$NG_BIN" collect --clickhouse "$url2" --listen "127.0.0.1:$port" --no-http \
	--workers 1 >"$work/collect3.log" 2>&1 &
cpid=$!
pids+=("$cpid")
for _ in $(seq 150); do
	[ -z "$(find "$work/only/spool/clickhouse" -name '*.chb' | head -1)" ] && break
	sleep 0.1
done
kill -TERM "$cpid"
wait "$cpid" || true
got=$(q 'SELECT count() FROM spooltest.flows')
echo "sent $sent2, in ClickHouse $got after the replay, dropped $dropped"
eq "$((got + dropped))" "$sent2" "replayed + dropped = sent"

[ "$fails" = 0 ] || { echo "test_clickhouse: $fails checks failed"; exit 1; }
echo "test_clickhouse: all checks passed"
