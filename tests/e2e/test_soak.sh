#!/usr/bin/env bash
# test_soak.sh — the checks of bench/soak in ~40 s: `nagare collect
# --workers 2` on loopback receives bench/nfgen's NetFlow v9 (8 exporter
# addresses, 16 source IDs) at a modest 50 k records/s; at 20 s it gets
# kill -9 and a new collector is started on the same store.  Fails unless:
# the store passes `nagare fsck` after the kill and at the end; the kill
# lost at most one flush interval of records (rate x (src/store/writer.c
# DUE_MS + the flush thread's 250 ms poll)) and stored none twice; every
# record sent after the restart is stored (counted by `nagare query` and by
# the segment headers, which must agree); the collector exits 0 on
# SIGTERM; RSS stays within 10 % after each process's first 10 s; the log
# names no damaged segment.  The figures are bench/soak's; only the loss
# bound and zero-loss after the restart are correctness, the rate is low
# enough that a busy 2-core machine keeps up.
#
# NG_BIN: the nagare binary (default build/nagare); NG_NFGEN: the generator
# (default the repository's build/bench/nfgen, else bench/nfgen beside
# NG_BIN's build: the generator is not under test, and a sanitizer build
# of it is slow and reports its own exit-time leaks).  Loopback only.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NG_BIN=${NG_BIN:-$here/../../build/nagare}
if [ -z "${NG_NFGEN:-}" ]; then
	NG_NFGEN=$here/../../build/bench/nfgen
	[ -x "$NG_NFGEN" ] || NG_NFGEN=$(dirname "$NG_BIN")/bench/nfgen
fi
command -v python3 >/dev/null || { echo "test_soak: python3 not installed" >&2; exit 1; }
[ -x "$NG_NFGEN" ] || { echo "test_soak: no generator at $NG_NFGEN (build target nfgen)" >&2; exit 1; }
echo "test_soak: NG_BIN=$NG_BIN NG_NFGEN=$NG_NFGEN"
# Under AddressSanitizer, RSS holds the allocator's quarantine of freed
# blocks (up to 256 MiB) and its shadow memory, not the collector's own
# use: the flat-RSS check is then loosened to 50 % (every other check
# holds as is).  bench/soak and the plain build keep the 10 %.
# (ldd's output is read whole first: `ldd | grep -q` under pipefail fails
# when grep exits at the first line and ldd then dies of SIGPIPE, which
# is how CI's sanitizer run once got the 10 % bound.)
rss=()
libs=$(ldd "$NG_BIN" 2>/dev/null || true)
if [[ $libs == *libasan* ]]; then
	echo "test_soak: sanitizer build: RSS within 50 %, not 10 % (ASan quarantine)"
	rss=(--rss-tol 0.5)
fi
exec python3 "$here/../../bench/soak" --nagare "$NG_BIN" --nfgen "$NG_NFGEN" \
	--rate 50k --seconds 40 --kill-at 0.5 --sample 2 --rss-warmup 10 "${rss[@]}" "$@"
