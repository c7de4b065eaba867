#!/bin/sh
# run.sh [SECONDS] [BUILD_DIR] — run every fuzz target of BUILD_DIR
# (default: build-fuzz next to tests/) for SECONDS each (default 30).
# Builds nothing: configure and build first with
#   CC=clang cmake -S . -B build-fuzz -DNG_FUZZ=ON -DNG_SANITIZE=ON
#   cmake --build build-fuzz -j2
# NetFlow/IPFIX seeds are extracted from the shared capture corpus into a
# temporary directory (seeds.py); nothing is copied into the tree.  A
# finding (crash, sanitizer report, leak, timeout) leaves its input in
# $NG_FUZZ_ARTIFACTS (default /tmp/ng-fuzz-artifacts) and makes the script
# exit 1.
set -u
secs=${1:-30}
here=$(cd "$(dirname "$0")" && pwd)
build=${2:-$here/../../build-fuzz}
artifacts=${NG_FUZZ_ARTIFACTS:-/tmp/ng-fuzz-artifacts}
work=$(mktemp -d /tmp/ng-fuzz-seeds.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$artifacts"
python3 "$here/seeds.py" "$work" >/dev/null || echo "run.sh: no seeds (capture corpus missing?)" >&2
found=0
ran=0
for bin in "$build"/fuzz_*; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin")
	case $name in
	fuzz_v5) seeds=$work/v5 ;;
	fuzz_v9) seeds=$work/v9 ;;
	fuzz_ipfix) seeds=$work/ipfix ;;
	fuzz_templates) seeds=$work/templates ;;
	*) seeds=$work/other_$name ;;
	esac
	mkdir -p "$seeds" "$work/corpus_$name"
	# a target's dictionary of tokens (fuzz_filter.dict: the filter keywords)
	dict=
	[ -f "$here/$name.dict" ] && dict=-dict=$here/$name.dict
	echo "== $name ($secs s)"
	if ! "$bin" $dict -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65535 \
		-artifact_prefix="$artifacts/$name-" -print_final_stats=1 \
		"$work/corpus_$name" "$seeds" >"$work/$name.log" 2>&1; then
		echo "run.sh: $name found a problem; log tail:" >&2
		tail -40 "$work/$name.log" >&2
		found=1
	else
		grep -E 'stat::number_of_executed_units|cov:' "$work/$name.log" | tail -2
	fi
	ran=$((ran + 1))
done
if [ "$ran" = 0 ]; then
	echo "run.sh: no fuzz_* binaries in $build" >&2
	exit 2
fi
exit $found
