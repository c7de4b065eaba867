# tests/clickhouse/cluster.sh — two private clickhouse-servers on loopback
# as the two shards (one replica each) of the cluster `two_shards`, for
# the tests that need a ClickHouse cluster (tests/e2e/test_clickhouse_
# cluster.sh).  Sourced; uses tests/clickhouse/server.sh for each server
# (its own config, data directory and ports under DIR/s1 and DIR/s2), with
# the same <remote_servers> in both configurations:
#
#   <two_shards>
#     <shard><replica> 127.0.0.1, server 1's TCP port </replica></shard>
#     <shard><replica> 127.0.0.1, server 2's TCP port </replica></shard>
#   </two_shards>
#
# Each server tells itself from the other by its TCP port (system.clusters'
# is_local: the address is one of its own and the port its tcp_port).
# No ZooKeeper: the local tables are plain MergeTree, and the shards'
# DDL is sent to each server (docs/clickhouse.md, "Cluster").
#
#   chc_start DIR        both servers; sets CH1_HTTP CH1_TCP CH2_HTTP CH2_TCP
#   chc_stop N           SIGTERM server N (1 or 2), waits for its exit
#   chc_restart N        starts server N again (same ports, same data)
#   chc_kill_all         SIGKILL both
#   chc_client N ARGS... clickhouse-client against server N
#
# The keys are those of Debian's 18.16 (config.xml's remote_servers) and
# are still read by later releases.

# shellcheck source=server.sh
. "$(dirname "${BASH_SOURCE[0]}")/server.sh"

CHC_CLUSTER=two_shards

# chc_load N / chc_save N: server N's variables in and out of server.sh's
chc_load() {
	eval "CH_HTTP=\$CH$1_HTTP CH_TCP=\$CH$1_TCP CH_INTER=\$CH$1_INTER CH_DIR=\$CH$1_DIR CH_PID=\$CH$1_PID"
}
chc_save() {
	eval "CH$1_HTTP=\$CH_HTTP CH$1_TCP=\$CH_TCP CH$1_INTER=\$CH_INTER CH$1_DIR=\$CH_DIR CH$1_PID=\$CH_PID"
}

chc_start() {
	local d=$1 n
	for n in 1 2; do
		eval "CH${n}_HTTP=\$(ch_free_port) CH${n}_TCP=\$(ch_free_port) CH${n}_INTER=\$(ch_free_port) CH${n}_DIR=$d/s$n CH${n}_PID="
	done
	CH_EXTRA_XML="    <remote_servers>
        <$CHC_CLUSTER>
            <shard><replica><host>127.0.0.1</host><port>$CH1_TCP</port></replica></shard>
            <shard><replica><host>127.0.0.1</host><port>$CH2_TCP</port></replica></shard>
        </$CHC_CLUSTER>
    </remote_servers>"
	for n in 1 2; do
		chc_load $n
		ch_write_config "$CH_DIR"
		ch_launch || return 1
		chc_save $n
	done
	CH_EXTRA_XML=
}

chc_stop() {
	chc_load "$1"
	ch_stop
	chc_save "$1"
}

chc_restart() {
	chc_load "$1"
	ch_launch || return 1
	chc_save "$1"
}

chc_kill_all() {
	local n
	for n in 1 2; do
		[ -n "$(eval echo "\${CH${n}_DIR:-}")" ] || continue
		chc_load $n
		ch_kill9
		chc_save $n
	done
}

chc_client() {
	local n=$1
	shift
	clickhouse-client --host 127.0.0.1 --port "$(eval echo "\$CH${n}_TCP")" "$@"
}
