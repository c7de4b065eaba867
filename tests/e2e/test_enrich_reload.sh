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
exec python3 "$here/enrich_reload.py"
