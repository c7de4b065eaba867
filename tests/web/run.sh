#!/usr/bin/env bash
# run.sh — the browser tests of the dashboards (dashboards.mjs, time.mjs,
# sankey.mjs: the Sankey and click-through, filterterm.mjs first;
# complete.mjs: the filter box; theme.mjs: themes, palette, keyboard;
# then the Visualize page: visualize.mjs) against `nagare collect`
# holding a store of known flows (fixture.sh).  Their shared harness is
# harness.mjs.
#
# NG_BIN: the nagare binary, built with the dashboards embedded (web/dist
# present when cmake ran).  NG_WEB_OUT: where screenshots go (default
# out/web under the repository).  Needs root (the fixture captures
# packets), node, Debian's chromium and web/node_modules (scripts/setup).
# Exit 77: skipped.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
export NG_BIN=${NG_BIN:-$repo/build/nagare}
out=${NG_WEB_OUT:-$repo/out/web}

skip() { echo "web: skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root to capture the fixture's packets (sudo scripts/test)"
command -v node >/dev/null || skip "node not installed: run scripts/setup"
[ -x "${NG_CHROMIUM:-/usr/bin/chromium}" ] || skip "chromium not installed: run scripts/setup"
[ -d "$repo/web/node_modules/playwright-core" ] || skip "web/node_modules missing: run scripts/setup (npm ci in web/)"
for tool in softflowd tcpdump python3 curl; do
	command -v "$tool" >/dev/null || { echo "web: $tool not installed: run scripts/setup" >&2; exit 1; }
done

# A private network namespace (loopback only) when unshare allows: the
# fixture's UDP port and the HTTP port meet nobody else's.
if [ -z "${NG_E2E_NETNS:-}" ] && unshare -n true 2>/dev/null; then
	NG_E2E_NETNS=1 exec unshare -n -- bash "$0" "$@"
fi
[ "${NG_E2E_NETNS:-}" = 1 ] && ip link set lo up

# web/src/format.js and filterterm.js alone first (node only; every
# filter term the pages make parsed by $NG_BIN)
node "$here/format.mjs"
node "$here/filterterm.mjs" --bin "$NG_BIN"

work=$(mktemp -d /tmp/test_web.XXXXXX)
cleanup() {
	# the collector is fixture.sh's child, not ours: `wait` does not wait
	# for it, so watch its pid go (a maintenance round may be writing into
	# the store while it stops) before removing the store
	if [ -f "$work/collect.pid" ]; then
		pid=$(cat "$work/collect.pid")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	fi
	wait 2>/dev/null || true
	if [ "${keep:-1}" = 1 ]; then echo "web: work dir kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

"$here/fixture.sh" "$work"
url=$(cat "$work/url")
page=$(curl -s "$url" || true)
if [[ $page == *"dashboards were not built"* ]]; then
	echo "web: FAIL: $NG_BIN has no dashboards embedded: build web/ (npm ci && npm run build), then re-run cmake" >&2
	exit 1
fi
rm -rf "$out"
node "$here/dashboards.mjs" --url "$url" --bin "$NG_BIN" --store "$work/store" --out "$out"
# time: drag-zoom, step, zones, auto-refresh; saved and shared views
node "$here/time.mjs" --url "$url" --bin "$NG_BIN" --store "$work/store" --out "$out"
node "$here/sankey.mjs" --url "$url" --bin "$NG_BIN" --store "$work/store" --out "$out"
# the filter box (completion, recent filters, the bad column in the box)
# and GET /api/v1/complete; themes, palette, keyboard, widths
node "$here/complete.mjs" --url "$url" --bin "$NG_BIN" --store "$work/store" --out "$out"
node "$here/theme.mjs" --url "$url" --bin "$NG_BIN" --store "$work/store" --out "$out"
# the Visualize page (it adds flows of a day earlier: after dashboards.mjs)
NG_WEB_UDP=${NG_WEB_UDP:-29055} node "$here/visualize.mjs" --url "$url" --bin "$NG_BIN" --store "$work/store" --out "$out"
keep=0
