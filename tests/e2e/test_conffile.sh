#!/usr/bin/env bash
# test_conffile.sh — packaging/nagare.yaml (the package's
# /etc/nagare/nagare.yaml) names every key the configuration parser knows,
# and with its options uncommented it is a configuration the parser takes.
#
# The parser's own lists are the reference: an unknown key in each
# section makes it name every key of that section ("unknown key 'x' (a,
# b, ...)", core/config.c).  Option lines are "#key: value" (no space
# after '#'), list items "#  - key: value"; prose is "# Text".
# NG_BIN: the binary (default build/nagare).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${NG_BIN:-$here/../../build/nagare}
conf=${NG_CONFFILE:-$here/../../packaging/nagare.yaml}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
keys_of() { # SECTION: the keys the parser lists for it
	if [ "$1" = top ]; then printf 'nagare_no_such_section: 1\n' >"$tmp/bad.yaml"
	else printf '%s:\n  nagare_no_such_key: 1\n' "$1" >"$tmp/bad.yaml"; fi
	"$bin" doctor --config "$tmp/bad.yaml" --no-http -q 2>&1 >/dev/null |
		sed -nE 's/.*unknown (key|section) .nagare_no_such_[a-z]+. \((.*)\)$/\2/p' | tr -d ' ' | tr ',' '\n' || true
}
n=0
for section in top collect enrich limits clickhouse; do
	keys=$(keys_of "$section")
	[ -n "$keys" ] || { echo "test_conffile: the parser listed no keys for $section" >&2; exit 1; }
	for k in $keys; do
		n=$((n + 1))
		if ! grep -Eq "^ *#( +- )?$k:" "$conf"; then
			echo "test_conffile: $conf has no '#$k:' ($section)" >&2
			fail=1
		fi
	done
done
sed -E 's/^( *)#([a-z_]| +- | {4,}[a-z_])/\1\2/; /^ *#/d' "$conf" >"$tmp/all.yaml"
if "$bin" doctor --config "$tmp/all.yaml" --no-http -q 2>&1 >/dev/null | grep "all.yaml"; then
	echo "test_conffile: $conf with every option uncommented does not load" >&2
	fail=1
fi
[ $fail = 0 ] && echo "test_conffile: ok: $n keys of the parser, all in $conf; uncommented it loads"
exit $fail
