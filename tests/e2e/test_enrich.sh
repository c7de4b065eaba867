#!/usr/bin/env bash
# test_enrich.sh — enrichment end to end: a loopback traffic capture
# (make_traffic.sh) has its addresses rewritten by tcprewrite to addresses
# of MaxMind's test databases, softflowd exports it as IPFIX to `nagare
# collect --geoip-db GeoIP2-City-Test --asn-db GeoLite2-ASN-Test --config`,
# and every flow must come out enriched with the values of the databases'
# source JSON, in the NDJSON output and through `nagare query` (filters on
# string fields, -s srccountry).
#
#   127.0.0.1 as source      → 81.2.69.142    GB EU London         (City JSON ::81.2.69.142/127)
#   127.0.0.1 as destination → 1.0.0.1        AS15169 Google Inc.  (ASN JSON 1.0.0.0/24)
#   ::1 as source            → 2001:480:10::1 US NA San Diego      (City JSON 2001:480:10::/48)
#   ::1 as destination       → 2001:1700::9   AS6730 Sunrise Communications AG (ASN JSON 2001:1700::/27)
#
# NG_BIN: the nagare binary; NG_TESTDATA: the shared test data.  Needs root
# (capture).  Exit 77: skipped.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NG_BIN=${NG_BIN:-$here/../../build/nagare}
NG_TESTDATA=${NG_TESTDATA:-$here/../../../shared/testdata}
mmdb=$NG_TESTDATA/mmdb

skip() { echo "test_enrich: skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root to capture packets"
[ -r "$mmdb/GeoIP2-City-Test.mmdb" ] || skip "$mmdb absent"
for tool in softflowd tcprewrite tcpdump python3; do
	command -v "$tool" >/dev/null || { echo "test_enrich: $tool missing: run scripts/setup" >&2; exit 1; }
done
if [ -z "${NG_E2E_NETNS:-}" ] && unshare -n true 2>/dev/null; then
	NG_E2E_NETNS=1 exec unshare -n -- bash "$0" "$@"
fi
[ "${NG_E2E_NETNS:-}" = 1 ] && ip link set lo up

work=$(mktemp -d /tmp/ng_e2e_enrich.XXXXXX)
collector=
cleanup() {
	[ -n "$collector" ] && kill "$collector" 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

bash "$here/make_traffic.sh" "$work/lo.pcap" >"$work/traffic.log" 2>&1 ||
	{ cat "$work/traffic.log"; exit 1; }
tcprewrite --infile="$work/lo.pcap" --outfile="$work/pub.pcap" --fixcsum \
	--srcipmap='127.0.0.1/32:81.2.69.142/32,[::1]/128:[2001:480:10::1]/128' \
	--dstipmap='127.0.0.1/32:1.0.0.1/32,[::1]/128:[2001:1700::9]/128'

cat >"$work/nagare.yaml" <<YAML
# exporter and interface names come from here; databases from the flags
enrich:
  exporters:
    - address: 127.0.0.1
      name: lab-softflowd
  networks:
    - {prefix: 81.2.69.128/25, name: london-office, role: branch, site: uk}
YAML

port=$((20000 + RANDOM % 20000))
"$NG_BIN" collect --store "$work/store" --listen "127.0.0.1:$port" --json "$work/flows.ndjson" \
	--config "$work/nagare.yaml" --geoip-db "$mmdb/GeoIP2-City-Test.mmdb" \
	--asn-db "$mmdb/GeoLite2-ASN-Test.mmdb" >"$work/collect.log" 2>&1 &
collector=$!
for _ in $(seq 50); do grep -q "listening on" "$work/collect.log" && break; sleep 0.1; done
grep -q "enrichment: GeoIP" "$work/collect.log" || { cat "$work/collect.log"; exit 1; }

softflowd -r "$work/pub.pcap" -n "127.0.0.1:$port" -v 10 -T full -6 >"$work/softflowd.log" 2>&1
sleep 1
kill -TERM "$collector"
wait "$collector"
collector=

python3 - "$work/flows.ndjson" <<'PY'
import json, sys
flows = [json.loads(l) for l in open(sys.argv[1])]
want = {
    "81.2.69.142": dict(src_country="GB", src_continent="EU", src_city="London",
                        src_net="london-office", src_net_role="branch", src_net_site="uk"),
    "2001:480:10::1": dict(src_country="US", src_continent="NA", src_city="San Diego"),
    "1.0.0.1": dict(dst_as=15169, dst_as_name="Google Inc.", dst_country=""),
    "2001:1700::9": dict(dst_as=6730, dst_as_name="Sunrise Communications AG"),
}
seen = {k: 0 for k in want}
bad = 0
for f in flows:
    for addr_key in ("src_addr", "dst_addr"):
        a = f[addr_key]
        if a not in want:
            continue
        if not (addr_key == "src_addr") == next(iter(want[a])).startswith("src"):
            continue
        seen[a] += 1
        for k, v in want[a].items():
            if f[k] != v:
                bad += 1
                print(f"flow {f['src_addr']} -> {f['dst_addr']}: {k}={f[k]!r}, want {v!r}")
    if f["exporter_name"] != "lab-softflowd":
        bad += 1
        print("exporter_name", f["exporter_name"])
    if f["dst_addr"] in ("1.0.0.1", "2001:1700::9") and not f["as_source"] & 2:
        bad += 1
        print("as_source", f["as_source"])
print("NDJSON:", len(flows), "flows;", seen)
if bad or not flows or not all(seen.values()):
    sys.exit("test_enrich: NDJSON enrichment wrong")
PY

q() { "$NG_BIN" query --store "$work/store" -q --no-header -o csv "$@"; }
nd=$(wc -l <"$work/flows.ndjson")
gb=$(python3 -c "import json,sys; print(sum(json.loads(l)['src_country']=='GB' for l in open(sys.argv[1])))" "$work/flows.ndjson")
got=$("$NG_BIN" query --store "$work/store" -o ndjson src country GB 2>/dev/null | wc -l)
echo "query 'src country GB': $got flows (NDJSON says $gb of $nd)"
[ "$got" = "$gb" ] && [ "$gb" -gt 0 ] || { echo "test_enrich: query filter on src country wrong"; exit 1; }
got=$("$NG_BIN" query --store "$work/store" -o ndjson dst as 15169 2>/dev/null | wc -l)
echo "query 'dst as 15169': $got flows"
[ "$got" -gt 0 ] || exit 1
for f in "dst asname google" "src net-name london-office" "src city 'san diego'"; do
	# unquoted: the words (quotes included) go to the filter parser
	got=$("$NG_BIN" query --store "$work/store" -o ndjson $f 2>/dev/null | wc -l)
	echo "query '$f': $got flows"
	[ "$got" = "$gb" ] || { echo "test_enrich: query '$f' wrong (want $gb)"; exit 1; }
done
"$NG_BIN" query --store "$work/store" -s srccountry 2>&1 | tee "$work/stat.txt"
grep -q "GB" "$work/stat.txt" && grep -q "US" "$work/stat.txt" ||
	{ echo "test_enrich: -s srccountry lacks GB or US"; exit 1; }
"$NG_BIN" query --store "$work/store" -o ndjson -n 1 src country US 2>/dev/null |
	python3 -c "import json,sys; f=json.loads(sys.stdin.readline()); assert f['src_city']=='San Diego', f; print('stored:', f['src_addr'], f['src_country'], f['src_city'], f['dst_as'], f['dst_as_name'])"

# The same flows to a collector without NDJSON output, which enriches at
# the store's flush, column by column (docs/enrichment.md): it must store
# what the per-record path stored, field for field (times aside: they come
# from the export and the arrival).
port=$((20000 + RANDOM % 20000))
"$NG_BIN" collect --store "$work/store2" --listen "127.0.0.1:$port" \
	--config "$work/nagare.yaml" --geoip-db "$mmdb/GeoIP2-City-Test.mmdb" \
	--asn-db "$mmdb/GeoLite2-ASN-Test.mmdb" >"$work/collect2.log" 2>&1 &
collector=$!
for _ in $(seq 50); do grep -q "listening on" "$work/collect2.log" && break; sleep 0.1; done
softflowd -r "$work/pub.pcap" -n "127.0.0.1:$port" -v 10 -T full -6 >>"$work/softflowd.log" 2>&1
sleep 1
kill -TERM "$collector"
wait "$collector"
collector=
"$NG_BIN" query --store "$work/store" -o ndjson >"$work/rows.ndjson" 2>/dev/null
"$NG_BIN" query --store "$work/store2" -o ndjson >"$work/cols.ndjson" 2>/dev/null
python3 - "$work/rows.ndjson" "$work/cols.ndjson" <<'PY'
import json, sys
def load(p):
    out = []
    for l in open(p):
        f = json.loads(l)
        for k in ("time_received", "flow_start", "flow_end"):
            f.pop(k)
        out.append(json.dumps(f, sort_keys=True))
    return sorted(out)
rows, cols = load(sys.argv[1]), load(sys.argv[2])
print(f"enriched at the flush: {len(cols)} flows, in place: {len(rows)}")
if not rows or rows != cols:
    for a, b in zip(rows, cols):
        if a != b:
            print("in place:", a, "\nat flush:", b)
            break
    sys.exit("test_enrich: the store's flush enriched differently")
PY
echo "test_enrich: OK"
