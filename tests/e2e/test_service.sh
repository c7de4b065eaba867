#!/usr/bin/env bash
# test_service.sh — nagare collect as the systemd unit runs it (service.py):
# sd_notify READY/WATCHDOG/RELOADING/STOPPING, journal priorities, and the
# default store with no --store.  NG_BIN: the binary (default build/nagare).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NG_BIN=${NG_BIN:-$here/../../build/nagare}
exec python3 "$here/service.py" --bin "$NG_BIN" "$@"
