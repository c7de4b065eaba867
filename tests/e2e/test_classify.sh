#!/usr/bin/env bash
# test_classify.sh — classification rules and configured sampling rates
# end to end: `nagare query -s provider` over stored NetFlow v5 flows
# equals the totals computed from what was sent (tests/e2e/classify.py).
# NG_BIN: the binary (default build/nagare).  Loopback only.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NG_BIN=${NG_BIN:-$here/../../build/nagare}
exec python3 "$here/classify.py"
