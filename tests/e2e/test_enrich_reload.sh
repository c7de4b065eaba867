#!/usr/bin/env bash
# test_enrich_reload.sh — enrichment tables replaced under a steady stream
# (file replacement, then SIGHUP): sent = stored, records after each swap
# carry the new database's values.  See enrich_reload.py.  Exit 77: skipped.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NG_BIN=${NG_BIN:-$here/../../build/nagare}
export NG_TESTDATA=${NG_TESTDATA:-$here/../../../shared/testdata}
[ -r "$NG_TESTDATA/mmdb/GeoIP2-City-Test.mmdb" ] ||
	{ echo "test_enrich_reload: skipped: $NG_TESTDATA/mmdb absent"; exit 77; }
# A database that cannot be used stops the start, naming the file and the
# fault; --geoip-optional starts without it, saying so.
work=$(mktemp -d /tmp/ng_e2e_enrich_err.XXXXXX)
trap 'rm -rf "$work"' EXIT
for db in /nonexistent.mmdb "$NG_TESTDATA/mmdb/MaxMind-DB-test-broken-pointers-24.mmdb" \
	"$NG_TESTDATA/mmdb/GeoIP2-City-Test-Invalid-Node-Count.mmdb"; do
	if timeout 20 "$NG_BIN" collect --store "$work/s" --listen 127.0.0.1:0 --geoip-db "$db" \
		>"$work/out" 2>&1; then
		echo "test_enrich_reload: collect started with $db"; exit 1
	fi
	grep -q "enrichment: $db: " "$work/out" || { cat "$work/out"; exit 1; }
	timeout -s INT 2 "$NG_BIN" collect --store "$work/s" --listen 127.0.0.1:0 \
		--geoip-db "$db" --geoip-optional >"$work/out" 2>&1 || true
	grep -q "warn: $db: .*running WITHOUT" "$work/out" && grep -q "listening on" "$work/out" ||
		{ cat "$work/out"; exit 1; }
	echo "refused, then optional: $(grep -o "$db: [^;]*" "$work/out" | head -1)"
done
python3 "$here/enrich_reload.py"
python3 "$here/enrich_reload.py" --store # enriched at the store's flush
