#!/usr/bin/env bash
# test_geo_default.sh — GeoIP and ASN enrichment with nothing configured:
# the stored countries, cities and AS numbers and names of flows from a
# few hundred addresses of the default databases equal mmdblookup's and
# the CSV's (tests/e2e/geo_default.py says how).  NG_BIN: the binary
# (default build/nagare).  Loopback only.  Skips when the default
# databases (scripts/setup) or mmdblookup are missing.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NG_BIN=${NG_BIN:-$here/../../build/nagare}
exec python3 "$here/geo_default.py"
