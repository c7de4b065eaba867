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
# an exporter state file of two rows, the layout store/exporters.c writes
mkdir -p "$work/exporters"
cat >"$work/exporters/two-rows.json" <<'EOF'
{"format":"nagare-exporters/1","updated":"2026-12-01T21:57:34.839Z","updated_ms":1796162254839,"started":"2026-12-01T21:55:20.426Z","started_ms":1796162120426,
"listener":{"datagrams":673341,"bytes":918000740,"drops":0,"truncated":0,"errors":0},
"store":{"rows":20000000,"segments":171,"bytes":332953887,"errors":0,"dropped":0},
"exporters":[
{"exporter":"127.0.1.14","domain":14,"version":9,"protocol":"NetFlow v9","packets":19068,"bytes":25996404,"records":566370,"options_records":3,"templates":189,"lost":2,"template_misses":1,"held":1,"errors":{"unknown_version":0,"set_overrun":4,"template_limit":1},"errors_total":5,"first_seen":"2026-12-01T21:55:20.797Z","first_seen_ms":1796162120797,"last_seen":"2026-12-01T21:57:34.111Z","last_seen_ms":1796162254111,"sampling_rate":1,"sampling_source":"none","lost_samples":0,"counter_samples":0,"discards":0},
{"exporter":"2001:db8::1","domain":0,"version":80,"protocol":"sFlow v5","packets":5,"bytes":6000,"records":40,"options_records":0,"templates":0,"lost":1,"template_misses":0,"held":0,"errors":{},"errors_total":0,"first_seen":"","first_seen_ms":0,"last_seen":"2026-12-01T21:57:34.111Z","last_seen_ms":1796162254111,"sampling_rate":512,"sampling_source":"sflow","lost_samples":3,"counter_samples":7,"discards":2}
]}
EOF
# saved views: a views file and a POST body (http/views.c)
mkdir -p "$work/views"
printf 'nagare-views/1\nbusy hour\t/?v=1&from=-1h&tz=utc\ndns\t/top?v=1&field=dstport\n' >"$work/views/file.txt"
printf '{"name":"busy hour","state":"\\/?v=1\\u0026from=-1h"}' >"$work/views/body.json"
# DNS answers to PTR questions (query/ptr.c): a name behind a compression
# pointer, an NXDOMAIN, a pointer loop
mkdir -p "$work/ptr"
python3 - "$work/ptr" <<'PY'
import struct, sys
q = b"".join(bytes([len(l)]) + l for l in b"1.2.0.10.in-addr.arpa".split(b".")) + b"\0"
name = b"\x06host-a\x04test\x03lan\x00"
ans = (struct.pack("!6H", 1, 0x8580, 1, 1, 0, 0) + q + struct.pack("!HH", 12, 1) +
       b"\xc0\x0c" + struct.pack("!HHIH", 12, 1, 300, len(name)) + name)
open(sys.argv[1] + "/answer.bin", "wb").write(ans)
open(sys.argv[1] + "/nxdomain.bin", "wb").write(struct.pack("!6H", 2, 0x8583, 1, 0, 0, 0) + q +
                                                 struct.pack("!HH", 12, 1))
open(sys.argv[1] + "/loop.bin", "wb").write(ans[:-len(name)] + b"\xc0" + bytes([len(ans) - len(name)]))
PY
# ASN CSV ranges (enrich/geocsv.c): rows as ip-location-db writes them
mkdir -p "$work/geocsv"
printf '1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."\n2.26.200.0,2.26.215.255,201907,"LLC ""SPUTNIK"""\r\n2001:200::,2001:200:1b9:ffff:ffff:ffff:ffff:ffff,2500,WIDE Project\n' >"$work/geocsv/asn.csv"
# hostile filters for fuzz_ch_filter (quotes, backslashes, comments,
# control bytes, UTF-8, huge numbers, SQL in values)
mkdir -p "$work/ch_filter"
i=0
for f in "src net-name \"'; DROP TABLE flows; --\"" "exporter_name = '\\\\'" \
	"service ~ \"/* x */\" or country 'J\"P'" "host ::ffff:39.92.39.92 and mac 27:5c:00:ff:2d:2d" \
	"bytes > 18446744073709551615 and as in [4294967295 0]" "dst asname \"東京 \377\001\"" \
	"not (port 80 or net 10.0.0.0/8) and bps > 1M and dscp 46 and flags SA"; do
	printf '%s' "$f" >"$work/ch_filter/$i"
	i=$((i + 1))
done
# fuzz_ch_exporters: the three RowBinary answers of /api/v1/exporters
# over ClickHouse (http/exporters_ch.c) separated by NGCH: two rows of
# flows_1h (an IPv4-mapped and an IPv6 exporter, one named with a quote),
# their last seen, two interfaces
mkdir -p "$work/ch_exporters"
python3 - "$work/ch_exporters/two-rows" <<'PY'
import ipaddress, struct, sys
def s(b): return bytes([len(b)]) + b
a = ipaddress.ip_address("::ffff:127.0.1.1").packed
b = ipaddress.ip_address("2001:db8::1").packed
u = lambda *v: b"".join(struct.pack("<Q", x) for x in v)
rows = a + u(1, 9, 8400, 96401, 71431867, 1, 0) + s(b"lab-a") + b + u(0, 80, 40, 5, 6000, 512, 4) + s(b"o'hare \\ edge")
seen = a + u(1796162254111) + b + u(1796162000000)
ifs = a + u(1) + s(b"et-0/0/1") + a + u(2) + s(b'uplink "core"')
open(sys.argv[1], "wb").write(b"\x00\x00" + rows + b"NGCH" + seen + b"NGCH" + ifs)
PY
# fuzz_ch_one: the JSONCompact answer of the one statement
# (query/ch_exec.c) for the first key set (srcip4/24,dstport, limit 5),
# as 18.16 writes it: quoted UInt64, UInt16 a number, totals, the groups
mkdir -p "$work/ch_one"
printf '\000{"meta":[],"data":[["0","281472812449792",443,"1","2","3","40","5000"]],"totals":["0","0",0,"1","2","3","40","5000"],"rows":1,"rows_before_limit_at_least":1,"statistics":{}}' >"$work/ch_one/one-row"
printf '\001{"data":[["0A000001FFFF00000000000000000000","5","9","2","3","4"]],"totals":["00000000000000000000000000000000","5","9","2","3","4"],"rows_before_limit_at_least":7}' >"$work/ch_one/addr"
found=0
ran=0
for bin in "$build"/fuzz_*; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin")
	case $name in
	fuzz_v5) seeds=$work/v5 ;;
	fuzz_v9) seeds=$work/v9 ;;
	fuzz_ipfix | fuzz_stream) seeds=$work/ipfix ;;
	fuzz_templates) seeds=$work/templates ;;
	fuzz_exporters) seeds=$work/exporters ;;
	fuzz_views) seeds=$work/views ;;
	fuzz_ptr) seeds=$work/ptr ;;
	fuzz_geocsv) seeds=$work/geocsv ;;
	fuzz_ch_filter) seeds=$work/ch_filter ;;
	fuzz_ch_exporters) seeds=$work/ch_exporters ;;
	fuzz_ch_one) seeds=$work/ch_one ;;
	*) seeds=$work/other_$name ;;
	esac
	mkdir -p "$seeds" "$work/corpus_$name"
	# a target's dictionary of tokens (fuzz_filter.dict: the filter keywords)
	dict=
	[ -f "$here/$name.dict" ] && dict=-dict=$here/$name.dict
	[ "$name" = fuzz_ch_filter ] && dict=-dict=$here/fuzz_filter.dict
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
