#!/usr/bin/env bash
# test_package.sh — the Debian package, as a new user gets it:
#   1. dpkg-buildpackage -b -us -uc on a copy of the tree (web/dist must be
#      built: scripts/setup), then lintian on the .deb (tags printed; an
#      error fails);
#   2. the .deb's contents: the binary with the dashboards embedded, the
#      unit, the sysusers.d and sysctl.d files (the latter equal to
#      `nagare doctor --sysctl-conf`), the conffile, man page, completion;
#   3. `apt install ./nagare_*.deb` (a throwaway CI machine, root; the package is
#      purged at the end unless NG_KEEP_PACKAGE=1), then
#      `systemd-analyze verify` on the installed unit;
#   4. the installed /usr/bin/nagare run the way the unit runs it (as the
#      user nagare, --config /etc/nagare/nagare.yaml, no --store: the
#      default store /var/lib/nagare), fed by softflowd replaying a
#      capture on loopback, then queried with no --store, and its
#      dashboards fetched over HTTP;
#   5. the unit's notifications and journal lines (tests/e2e/service.py)
#      with the installed binary.
# systemd is not PID 1 in the CI container, so the unit is verified, not
# started (docs/service.md).  Needs root, dpkg-dev, debhelper, lintian,
# softflowd, python3 (scripts/setup).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
say() { printf 'test_package: %s\n' "$*"; }
die() { say "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { say "skipped: needs root (dpkg -i)"; exit 0; }
for c in dpkg-buildpackage dh lintian softflowd systemd-analyze python3 curl; do
	command -v $c >/dev/null || die "$c not installed (scripts/setup)"
done
[ -f "$repo/web/dist/index.html" ] || die "web/dist is missing: run scripts/setup first"
if dpkg-query -W -f='${Status}' nagare 2>/dev/null | grep -q 'install ok installed'; then
	die "a nagare package is installed already; this test installs and purges its own"
fi

tmp=$(mktemp -d /tmp/ng-package-XXXXXX)
collector=
sysctl_saved=()
cleanup() {
	[ -n "$collector" ] && kill "$collector" 2>/dev/null && wait "$collector" 2>/dev/null
	# the package's postinst applies 60-nagare.conf: give the machine back
	# the kernel settings it had, for the tests and benchmarks after this one
	[ ${#sysctl_saved[@]} -gt 0 ] && sysctl -q -w "${sysctl_saved[@]}" || true
	if [ "${NG_KEEP_PACKAGE:-0}" != 1 ]; then
		dpkg --purge nagare >/dev/null 2>&1 || true
		rm -rf /var/lib/nagare
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# 1. build
t0=$(date +%s)
mkdir "$tmp/src"
tar -C "$repo" --exclude='./build*' --exclude=./.git --exclude=./web/node_modules \
	--exclude=./bench/data --exclude='./obj-*' --exclude=./debian/nagare --exclude=./debian/.debhelper \
	-cf - . | tar -C "$tmp/src" -xf -
(cd "$tmp/src" && DEB_BUILD_OPTIONS="parallel=2 nocheck" dpkg-buildpackage -b -us -uc >"$tmp/build.log" 2>&1) ||
	{ tail -30 "$tmp/build.log"; die "dpkg-buildpackage failed"; }
deb=$(ls "$tmp"/nagare_*.deb)
say "built $(basename "$deb") in $(($(date +%s) - t0)) s"
lintian --fail-on error --tag-display-limit 0 "$deb" >"$tmp/lintian.log" 2>&1 || { cat "$tmp/lintian.log"; die "lintian errors"; }
sed -i '/running with root privileges/d' "$tmp/lintian.log"
say "lintian: $(grep -c . "$tmp/lintian.log" || true) tags (docs/service.md explains each)"; sed 's/^/  /' "$tmp/lintian.log"

# 2. contents
dpkg-deb -c "$deb" >"$tmp/contents"
for f in ./usr/bin/nagare ./lib/systemd/system/nagare.service ./usr/lib/sysusers.d/nagare.conf \
	./usr/lib/sysctl.d/60-nagare.conf ./etc/nagare/nagare.yaml ./usr/share/man/man1/nagare.1.gz \
	./usr/share/bash-completion/completions/nagare ./usr/share/doc/nagare/copyright \
	./usr/share/nagare/fetch-ip-location-db; do
	grep -q " $f\$" "$tmp/contents" || { cat "$tmp/contents"; die "$f not in the package"; }
done
dpkg-deb -I "$deb" conffiles | grep -qx /etc/nagare/nagare.yaml || die "nagare.yaml is not a conffile"
say "contents: binary, unit, sysusers, sysctl, conffile, man page, completion"

# 3. install, verify the unit
for k in $("$tmp/src/obj-x86_64-linux-gnu/nagare" doctor --sysctl-conf | sed -n 's/^\([a-z0-9_.]*\) = .*/\1/p'); do
	sysctl_saved+=("$k=$(sysctl -n "$k")")
done
# as README says: apt install ./nagare_*.deb (every dependency is installed
# already, so apt fetches nothing)
DEBIAN_FRONTEND=noninteractive apt-get install -y "$deb" \
	>"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; die "apt install failed"; }
getent passwd nagare >/dev/null || die "no user nagare after install"
"/usr/bin/nagare" doctor --sysctl-conf | cmp - /usr/lib/sysctl.d/60-nagare.conf ||
	die "60-nagare.conf differs from nagare doctor --sysctl-conf"
systemd-analyze verify /lib/systemd/system/nagare.service >"$tmp/verify.log" 2>&1 ||
	{ cat "$tmp/verify.log"; die "systemd-analyze verify failed"; }
[ -s "$tmp/verify.log" ] && { cat "$tmp/verify.log"; die "systemd-analyze verify warned"; }
say "installed; systemd-analyze verify: clean; 60-nagare.conf = doctor --sysctl-conf"

# 4. run it as the unit does, fed by softflowd
install -d -o nagare -g nagare -m 0750 /var/lib/nagare # what StateDirectory= does
port=$(python3 -c 'import socket;s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
hport=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
setpriv --reuid nagare --regid nagare --init-groups env -u NAGARE_STORE HOME=/var/lib/nagare \
	/usr/bin/nagare collect --config /etc/nagare/nagare.yaml --listen "127.0.0.1:$port" \
	--http "127.0.0.1:$hport" --stats-interval 1 >"$tmp/collect.log" 2>&1 &
collector=$!
for _ in $(seq 100); do grep -q 'listening on' "$tmp/collect.log" && break; sleep 0.1; done
grep -q '^nagare collect: store /var/lib/nagare (default: the service.s store)$' "$tmp/collect.log" ||
	{ cat "$tmp/collect.log"; die "the service's store was not the default"; }
# a known mix of TCP, UDP and ICMP (make_traffic.sh, as test_exporters.sh);
# softflowd reads it, exports every flow as NetFlow v9 and exits
"$here/make_traffic.sh" "$tmp/traffic.pcap" >"$tmp/traffic.log" 2>&1 || { cat "$tmp/traffic.log"; die "make_traffic.sh failed"; }
softflowd -r "$tmp/traffic.pcap" -n "127.0.0.1:$port" -v 9 -T full -6 >"$tmp/softflowd.log" 2>&1 ||
	{ cat "$tmp/softflowd.log"; die "softflowd failed"; }
sleep 1
kill -TERM $collector; wait $collector || die "collector exited non-zero: $(tail -5 "$tmp/collect.log")"
collector=
rows=$(/usr/bin/nagare query --format csv -s proto 2>"$tmp/query.err" | tail -n +2 | wc -l)
grep -q '^nagare query: store /var/lib/nagare (default: the service.s store)$' "$tmp/query.err" ||
	{ cat "$tmp/query.err"; die "query did not take the service's store"; }
flows=$(/usr/bin/nagare query --format csv -n 100000 2>/dev/null | tail -n +2 | wc -l)
[ "$flows" -gt 0 ] || die "no flows stored from softflowd ($(cat "$tmp/softflowd.log"))"
say "softflowd -> installed nagare: $flows flows in /var/lib/nagare, $rows protocols; queried with no --store"

# the dashboards are in the binary: serve the store and fetch the page
setpriv --reuid nagare --regid nagare --init-groups /usr/bin/nagare serve --http "127.0.0.1:$hport" >"$tmp/serve.log" 2>&1 &
collector=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$hport/" -o "$tmp/index.html" && break; sleep 0.1; done
grep -q '<script' "$tmp/index.html" || die "no dashboards at http://127.0.0.1:$hport/"
grep -qi 'not built' "$tmp/index.html" && die "the package's binary has no dashboards"
kill -TERM $collector; wait $collector || true
collector=
say "dashboards served by the installed binary ($(wc -c <"$tmp/index.html") bytes of index.html)"

# 5. notifications and journal with the installed binary
python3 "$here/service.py" --bin /usr/bin/nagare
say "ok in $(($(date +%s) - t0)) s"
