# tests/clickhouse/server.sh — a private clickhouse-server for one test,
# sourced by the tests and benchmarks that need ClickHouse (Debian's
# clickhouse-server, scripts/setup): its own config file, data directory
# and loopback ports under a directory the test owns.  Nothing of the
# machine's own server (/etc/clickhouse-server, /var/lib/clickhouse) is
# read or written.
#
#   ch_start DIR          writes DIR/config.xml and DIR/users.xml, starts
#                         the server on free loopback ports; sets CH_HTTP
#                         (port), CH_TCP, CH_PID, CH_DIR; waits until it
#                         answers (returns 1 after 60 s)
#   ch_stop               SIGTERM, waits for the exit
#   ch_kill9              SIGKILL, no wait for anything but the exit
#   ch_restart            starts it again on the same ports and data
#   ch_client ARGS...     clickhouse-client against it
#   ch_have               whether clickhouse-server and -client are installed
#   CH_EXTRA_XML          more of config.xml, written by ch_start (the
#                         <remote_servers> of tests/clickhouse/cluster.sh)
#
# The keys of config.xml are those of Debian's 18.16
# (/etc/clickhouse-server/config.xml) and are still read by later releases.

ch_have() {
	command -v clickhouse-server >/dev/null 2>&1 && command -v clickhouse-client >/dev/null 2>&1
}

ch_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

ch_write_config() {
	local d=$1
	mkdir -p "$d/data" "$d/tmp" "$d/user_files" "$d/format_schemas" "$d/log"
	cat >"$d/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
    <logger>
        <level>warning</level>
        <log>$d/log/server.log</log>
        <errorlog>$d/log/error.log</errorlog>
        <size>10M</size>
        <count>2</count>
    </logger>
    <http_port>$CH_HTTP</http_port>
    <tcp_port>$CH_TCP</tcp_port>
    <interserver_http_port>$CH_INTER</interserver_http_port>
    <listen_host>127.0.0.1</listen_host>
    <max_connections>256</max_connections>
    <keep_alive_timeout>2</keep_alive_timeout>
    <max_concurrent_queries>50</max_concurrent_queries>
    <uncompressed_cache_size>67108864</uncompressed_cache_size>
    <mark_cache_size>67108864</mark_cache_size>
    <path>$d/data/</path>
    <tmp_path>$d/tmp/</tmp_path>
    <user_files_path>$d/user_files/</user_files_path>
    <format_schema_path>$d/format_schemas/</format_schema_path>
    <users_config>$d/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
    <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
    <max_session_timeout>3600</max_session_timeout>
    <default_session_timeout>60</default_session_timeout>
${CH_EXTRA_XML:-}
</yandex>
XML
	cat >"$d/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <max_memory_usage>2000000000</max_memory_usage>
            <load_balancing>random</load_balancing>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
XML
}

ch_launch() {
	clickhouse-server --config-file="$CH_DIR/config.xml" >>"$CH_DIR/log/stdout.log" 2>&1 &
	CH_PID=$!
	local i
	for i in $(seq 600); do
		if curl -s "http://127.0.0.1:$CH_HTTP/?query=SELECT%201" 2>/dev/null | grep -q '^1$'; then
			return 0
		fi
		if ! kill -0 "$CH_PID" 2>/dev/null; then
			echo "clickhouse-server exited; its log:" >&2
			tail -20 "$CH_DIR/log/error.log" "$CH_DIR/log/stdout.log" >&2 2>/dev/null
			return 1
		fi
		sleep 0.1
	done
	echo "clickhouse-server did not answer in 60 s" >&2
	return 1
}

ch_start() {
	CH_DIR=$1
	CH_HTTP=$(ch_free_port)
	CH_TCP=$(ch_free_port)
	CH_INTER=$(ch_free_port)
	ch_write_config "$CH_DIR"
	ch_launch
}

ch_restart() {
	ch_launch
}

ch_stop() {
	[ -n "${CH_PID:-}" ] || return 0
	kill "$CH_PID" 2>/dev/null || true
	local i
	for i in $(seq 300); do
		kill -0 "$CH_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$CH_PID" 2>/dev/null || true
	wait "$CH_PID" 2>/dev/null || true
	CH_PID=
}

ch_kill9() {
	[ -n "${CH_PID:-}" ] || return 0
	kill -9 "$CH_PID" 2>/dev/null || true
	wait "$CH_PID" 2>/dev/null || true
	CH_PID=
}

ch_client() {
	clickhouse-client --host 127.0.0.1 --port "$CH_TCP" "$@"
}
