# tests/e2e/_http.sh — sourced by the e2e scripts that talk to nagare's
# HTTP server (test_api.sh, test_views.sh); not a test itself (scripts/test
# skips _*.sh).
#
# wait_url LOG: prints the first http://…/ URL that `nagare collect --http`
# or `nagare serve` wrote to LOG (its start-up line), waiting up to 10 s;
# returns 1, with LOG on stderr, when none appears.
wait_url() {
	for _ in $(seq 100); do
		u=$(grep -o 'http://[^ ]*/' "$1" | head -1 || true)
		[ -n "$u" ] && { echo "$u"; return 0; }
		sleep 0.1
	done
	echo "$(basename "$0" .sh): no URL in $1:" >&2
	cat "$1" >&2
	return 1
}
