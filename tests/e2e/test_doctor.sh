#!/usr/bin/env bash
# test_doctor.sh — `nagare doctor` against independent readings (see
# doctor.py): sysctl -n for the kernel settings, a fake proc/sys root that
# is tuned, a port this test holds, limits a collector hit as `nagare
# status` reports them, a MaxMind test database's own metadata.
#
# NG_BIN: the nagare binary (default build/nagare).  Not in a network
# namespace of its own: a new namespace does not show the host's
# net.core.netdev_max_backlog, which is what doctor must read (127.0.0.2-4,
# on lo in every namespace, are the only addresses it sends from).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NG_BIN=${NG_BIN:-$here/../../build/nagare}
export NG_TESTDATA=${NG_TESTDATA:-$here/../../../shared/testdata}
command -v python3 >/dev/null || { echo "test_doctor: python3 not installed" >&2; exit 1; }
echo "test_doctor: NG_BIN=$NG_BIN"
exec python3 "$here/doctor.py" --bin "$NG_BIN" "$@"
