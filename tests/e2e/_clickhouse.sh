# tests/e2e/_clickhouse.sh — sourced by the e2e scripts of private
# ClickHouse servers (test_clickhouse*.sh), after their server script
# (tests/clickhouse/server.sh or cluster.sh); not a test itself
# (scripts/test skips _*.sh).
#
# ch_e2e_begin NAME: skips the test (exit 0, saying so) when
# clickhouse-server or clickhouse-client is not installed (scripts/setup
# installs them); makes the work directory $work (/tmp/NAME.XXXXXX) and,
# at exit, kills the processes in the array pids, calls the script's
# ch_e2e_stop (its servers: ch_kill9, chc_kill_all), waits for its
# children, prints the end of $work/collect*.log when a check failed, and
# removes $work (kept when NG_KEEP is set).  check STATUS WHAT and
# eq A B WHAT count failures in fails.
ch_e2e_begin() {
	ch_e2e_name=$1
	if ! ch_have; then
		echo "$ch_e2e_name: skipped: clickhouse-server / clickhouse-client not installed (scripts/setup)"
		exit 0
	fi
	work=$(mktemp -d "/tmp/$ch_e2e_name.XXXXXX")
	pids=()
	fails=0
	trap ch_e2e_cleanup EXIT
}

ch_e2e_cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	ch_e2e_stop
	wait 2>/dev/null || true
	if [ "${fails:-1}" != 0 ]; then
		echo "--- collector logs" >&2
		tail -30 "$work"/collect*.log >&2 2>/dev/null || true
	fi
	[ -n "${NG_KEEP:-}" ] && echo "kept $work" >&2 || rm -rf "$work"
}

check() { # check STATUS WHAT
	if [ "$1" = 0 ]; then echo "ok: $2"; else echo "FAIL: $2"; fails=$((fails + 1)); fi
}

eq() { # eq A B WHAT
	if [ "$1" = "$2" ]; then check 0 "$3 ($1 = $2)"; else check 1 "$3 ($1 != $2)"; fi
}
