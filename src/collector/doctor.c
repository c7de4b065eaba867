/*
 * doctor.c — the checks of `nagare doctor` (doctor.h).
 *
 * Kernel.  A UDP socket's receive buffer absorbs the bursts exporters send
 * when their flow caches expire; nagare asks NG_LISTEN_RCVBUF (64 MiB) a
 * socket, and the kernel grants at most net.core.rmem_max unless the
 * process has CAP_NET_ADMIN (SO_RCVBUFFORCE: root has it, the service
 * does not).  net.core.netdev_max_backlog bounds the packets queued per
 * CPU before the protocol stack (a burst past it is dropped before any
 * socket, seen only in /proc/net/softnet_stat); net.ipv4.udp_mem (pages)
 * is the memory all UDP sockets may hold before the kernel squeezes each
 * to net.ipv4.udp_rmem_min.  The ElastiFlow guide's values are used where
 * they are what nagare needs; net.core.rmem_default (262144 there) is
 * not checked: it sizes sockets that ask for nothing, and nagare asks.
 * No reboot is needed: `sysctl --system` applies the file.
 *
 * Clock.  adjtimex(2) says whether a time daemon has the kernel clock
 * synchronised (STA_UNSYNC clear); flows are dated by the exporters and
 * checked against the receive time (collect.max_future), so a clock hours
 * off makes good flows "implausible".
 *
 * State.  What a running (or the last) collector wrote to
 * STORE/state/exporters.json: the limits that were hit (docs/security.md),
 * kernel drops, rows the store could not take, flows outside the time
 * window; and the files `nagare fsck` quarantined.
 */
#include "collector/doctor.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include "clickhouse/cluster.h"
#include "clickhouse/schema.h"
#include "collector/collector.h"
#include "core/timefmt.h"
#include "enrich/enrich.h"
#include "net/listener.h"
#include "store/exporters.h"
#include "store/store.h"

#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)
#define DB_OLD_DAYS 60 /* a GeoIP/ASN database older than this: refresh it */

typedef struct doc {
	const ng_doctor_opts *o;
	ng_doctor_fn fn;
	void *arg;
	ng_doc_level worst;
	char lines[2048]; /* the sysctl file's lines that fix what is low */
	size_t nlines;
} doc;

/* One finding, printf-style for `what`. */
__attribute__((format(printf, 5, 6))) static void say(doc *d, ng_doc_level l, const char *check,
                                                      const char *fix, const char *fmt, ...)
{
	char what[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (l > d->worst)
		d->worst = l;
	d->fn(l, check, what, l == NG_DOC_OK ? NULL : fix, d->arg);
}

const char *ng_doc_level_name(ng_doc_level l)
{
	return l == NG_DOC_OK ? "ok" : l == NG_DOC_WARN ? "warn" : "fail";
}

/* proc_root + rel ("proc/sys/net/core/rmem_max") into buf. */
static const char *proc_path(const doc *d, const char *rel, char *buf, size_t len)
{
	const char *root = d->o->proc_root && *d->o->proc_root ? d->o->proc_root : "";
	snprintf(buf, len, "%s/%s", root, rel);
	return buf;
}

/* Up to n unsigned numbers of file rel (under proc_root); returns how
 * many were read. */
static int read_nums(const doc *d, const char *rel, uint64_t *v, int n)
{
	char p[4200];
	FILE *f = fopen(proc_path(d, rel, p, sizeof p), "r");
	if (!f)
		return 0;
	int k = 0;
	while (k < n && fscanf(f, "%" SCNu64, &v[k]) == 1)
		k++;
	fclose(f);
	return k;
}

static void add_line(doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_line(doc *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(d->lines + d->nlines, sizeof d->lines - d->nlines, fmt, ap);
	va_end(ap);
	if (k > 0 && d->nlines + (size_t)k < sizeof d->lines)
		d->nlines += (size_t)k;
}

/* ---- kernel ----------------------------------------------------------------- */

static const struct {
	const char *key, *rel;
	uint64_t want;
	const char *why;
} sysctls[] = {
    {"net.core.rmem_max", "proc/sys/net/core/rmem_max", 64 * MIB,
     "the largest receive buffer a socket may ask for: nagare asks 64 MiB a socket for the "
     "bursts exporters send when their caches expire, and without CAP_NET_ADMIN (the "
     "service) gets at most this"},
    {"net.core.netdev_max_backlog", "proc/sys/net/core/netdev_max_backlog", 4096,
     "packets a CPU queues before the protocol stack: a burst past it is dropped before any "
     "socket sees it"},
    {"net.ipv4.udp_rmem_min", "proc/sys/net/ipv4/udp_rmem_min", 131072,
     "the receive buffer each UDP socket keeps when UDP memory is under pressure"},
};

size_t ng_doctor_sysctl_conf(char *buf, size_t len)
{
	size_t off = 0;
#define PUT(...)                                                                                   \
	do {                                                                                       \
		int k_ = snprintf(buf + off, off < len ? len - off : 0, __VA_ARGS__);              \
		off += k_ > 0 ? (size_t)k_ : 0;                                                    \
	} while (0)
	PUT("# 60-nagare.conf — the kernel settings `nagare doctor` checks, at the values\n"
	    "# nagare needs (generated by `nagare doctor --sysctl-conf`).\n"
	    "# Applied at boot by systemd-sysctl, now by `sysctl --system`; override a\n"
	    "# value in " NG_DOCTOR_SYSCTL_FILE ".\n");
	for (size_t i = 0; i < sizeof sysctls / sizeof sysctls[0]; i++)
		PUT("\n# %s\n%s = %" PRIu64 "\n", sysctls[i].why, sysctls[i].key, sysctls[i].want);
	PUT("\n# net.ipv4.udp_mem (pages) is sized by the kernel from the machine's memory;\n"
	    "# `nagare doctor` says when it is too small for the sockets of the\n"
	    "# configuration and gives the line to add to " NG_DOCTOR_SYSCTL_FILE ".\n");
#undef PUT
	return off;
}

static void check_sysctls(doc *d)
{
	char fix[256];
	snprintf(fix, sizeof fix, "raise it: the lines below, in " NG_DOCTOR_SYSCTL_FILE);
	for (size_t i = 0; i < sizeof sysctls / sizeof sysctls[0]; i++) {
		uint64_t v;
		char check[96];
		snprintf(check, sizeof check, "sysctl %s", sysctls[i].key);
		if (read_nums(d, sysctls[i].rel, &v, 1) != 1) {
			say(d, NG_DOC_WARN, check,
			    "check that /proc is mounted; in a network namespace of its own the "
			    "kernel shows only some of the host's settings: run doctor on the host",
			    "cannot be read");
			continue;
		}
		if (v >= sysctls[i].want) {
			say(d, NG_DOC_OK, check, NULL, "%" PRIu64 " (at least %" PRIu64 ")", v,
			    sysctls[i].want);
			continue;
		}
		say(d, NG_DOC_WARN, check, fix, "%" PRIu64 ", below %" PRIu64 ": %s", v,
		    sysctls[i].want, sysctls[i].why);
		add_line(d, "%s = %" PRIu64 "\n", sysctls[i].key, sysctls[i].want);
	}
	/* udp_mem: pages, "min pressure max"; every socket at its full buffer
	 * must fit under pressure */
	uint64_t m[3];
	const size_t socks = d->o->nlisten ? d->o->nlisten : 4;
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	const uint64_t need = socks * NG_LISTEN_RCVBUF / page;
	if (read_nums(d, "proc/sys/net/ipv4/udp_mem", m, 3) != 3) {
		say(d, NG_DOC_WARN, "sysctl net.ipv4.udp_mem", "check that /proc is mounted",
		    "cannot be read");
	} else if (m[1] >= need && m[2] >= need) {
		say(d, NG_DOC_OK, "sysctl net.ipv4.udp_mem", NULL,
		    "%" PRIu64 " %" PRIu64 " %" PRIu64 " pages (%zu sockets of 64 MiB need %" PRIu64
		    ")",
		    m[0], m[1], m[2], socks, need);
	} else {
		say(d, NG_DOC_WARN, "sysctl net.ipv4.udp_mem", fix,
		    "%" PRIu64 " %" PRIu64 " %" PRIu64 " pages: %zu sockets of 64 MiB need %" PRIu64
		    " before the kernel squeezes every UDP socket",
		    m[0], m[1], m[2], socks, need);
		add_line(d, "net.ipv4.udp_mem = %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", m[0],
		         m[1] > need ? m[1] : need, m[2] > need ? m[2] : need);
	}
}

/* What the kernel grants a socket nagare opens now, as this process. */
static void check_granted(doc *d)
{
	static const char *const spec[] = {"127.0.0.1:0"};
	char err[256];
	ng_listener *l = ng_listener_open(spec, 1, err, sizeof err);
	if (!l) {
		say(d, NG_DOC_WARN, "receive buffer", NULL, "no test socket: %s", err);
		return;
	}
	const size_t got = ng_listener_rcvbuf(l, 0);
	ng_listener_close(l);
	const bool root = geteuid() == 0;
	if (got >= NG_LISTEN_RCVBUF)
		say(d, NG_DOC_OK, "receive buffer", NULL,
		    "a socket opened now is granted %zu MiB%s", got / MIB,
		    root ? " (as root: SO_RCVBUFFORCE passes net.core.rmem_max; a service without "
		           "CAP_NET_ADMIN gets at most rmem_max)"
		         : "");
	else
		say(d, NG_DOC_WARN, "receive buffer",
		    "raise net.core.rmem_max (above), or run with CAP_NET_ADMIN",
		    "a socket opened now is granted %zu KiB of the %u MiB nagare asks: bursts past "
		    "it are dropped by the kernel (counted as drops)",
		    got / 1024, NG_LISTEN_RCVBUF >> 20);
}

/* ---- clock ------------------------------------------------------------------ */

/* The first process under proc_root/proc for which want(d, pid, comm,
 * arg) is true: its pid (the /proc entry's name) and command name (its
 * comm, "?" when unreadable) into pid[32] and comm[64].  False when none
 * is (or none is visible to this user). */
static bool find_process(const doc *d,
                         bool (*want)(const doc *d, const char *pid, const char *comm, void *arg),
                         void *arg, char pid[32], char comm[64])
{
	char p[4200];
	DIR *dir = opendir(proc_path(d, "proc", p, sizeof p));
	bool found = false;
	struct dirent *e;
	while (dir && !found && (e = readdir(dir))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		char rel[300], cp[4200];
		snprintf(rel, sizeof rel, "proc/%.31s/comm", e->d_name);
		snprintf(comm, 64, "?");
		FILE *f = fopen(proc_path(d, rel, cp, sizeof cp), "r");
		if (f) {
			if (fgets(comm, 64, f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		if (want(d, e->d_name, comm, arg)) {
			snprintf(pid, 32, "%.31s", e->d_name);
			found = true;
		}
	}
	if (dir)
		closedir(dir);
	return found;
}

/* find_process predicate: a time daemon's command name. */
static bool is_time_daemon(const doc *d, const char *pid, const char *comm, void *arg)
{
	static const char *const names[] = {
	    "chronyd", "ntpd", "systemd-timesyn", "openntpd", "ntpsec", "timemaster", "ptp4l"};
	(void)d, (void)pid, (void)arg;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(comm, names[i]))
			return true;
	return false;
}

/* The running time daemon's name into buf, or false when none is seen. */
static bool time_daemon(const doc *d, char *buf, size_t len)
{
	char pid[32], comm[64];
	if (!find_process(d, is_time_daemon, NULL, pid, comm))
		return false;
	snprintf(buf, len, "%s", comm);
	return true;
}

static void check_clock(doc *d)
{
	struct timex tx = {0};
	const int st = adjtimex(&tx);
	const int err = errno;
	char daemon[64];
	const bool have = time_daemon(d, daemon, sizeof daemon);
	const bool synced = st >= 0 && st != TIME_ERROR && !(tx.status & STA_UNSYNC);
	if (st < 0) /* the unit's ProtectClock= (a seccomp filter) refuses adjtimex */
		say(d, NG_DOC_OK, "clock", NULL,
		    "not readable here (adjtimex: %s, as under the service's ProtectClock=); "
		    "`nagare doctor` outside the service checks it%s%s",
		    strerror(err), have ? "; a time daemon runs: " : "", have ? daemon : "");
	else if (synced)
		say(d, NG_DOC_OK, "clock", NULL, "synchronised%s%s (estimated error %ld ms)",
		    have ? " by " : "", have ? daemon : "", tx.esterror / 1000);
	else if (have)
		say(d, NG_DOC_WARN, "clock", "wait for it to synchronise, or check its sources",
		    "%s runs but the kernel clock is not synchronised yet", daemon);
	else
		say(d, NG_DOC_WARN, "clock",
		    "install and enable a time daemon (chrony or systemd-timesyncd): flows are "
		    "checked against the receive time (collect.max_future), so a clock that is off "
		    "marks good flows implausible",
		    "not synchronised, and no time daemon runs");
}

/* ---- store ------------------------------------------------------------------ */

static const char *fs_name(long type, ng_doc_level *l)
{
	*l = NG_DOC_OK;
	switch ((unsigned long)type) {
	case 0xEF53: return "ext4";
	case 0x58465342: return "xfs";
	case 0x9123683E: return "btrfs";
	case 0x2FC12FC1: return "zfs";
	case 0x794C7630: return "overlayfs";
	case 0x01021994: *l = NG_DOC_WARN; return "tmpfs (memory: lost at reboot)";
	case 0x6969: *l = NG_DOC_WARN; return "nfs (a network file system)";
	case 0xFF534D42: *l = NG_DOC_WARN; return "cifs (a network file system)";
	case 0x65735546: *l = NG_DOC_WARN; return "fuse";
	default: return "another file system";
	}
}

static void check_store(doc *d)
{
	const char *dir = d->o->store;
	char probe[4200];
	snprintf(probe, sizeof probe, "%s", dir);
	bool exists = access(dir, F_OK) == 0;
	if (!exists) { /* the nearest existing parent: where it will be made */
		char *slash;
		while (access(probe, F_OK) && (slash = strrchr(probe, '/')) && slash != probe)
			*slash = 0;
		if (access(probe, F_OK))
			snprintf(probe, sizeof probe, ".");
	}
	if (access(probe, W_OK))
		say(d, NG_DOC_FAIL, "store", "give the user that runs nagare write access",
		    "%s is not writable (%s)", probe, strerror(errno));
	else
		say(d, NG_DOC_OK, "store", NULL, "%s %s", dir,
		    exists ? "exists and is writable" : "does not exist yet: collect makes it");
	struct statfs sf;
	struct statvfs sv;
	if (statfs(probe, &sf) || statvfs(probe, &sv)) {
		say(d, NG_DOC_WARN, "store file system", NULL, "cannot be read: %s",
		    strerror(errno));
		return;
	}
	ng_doc_level fl;
	const char *fs = fs_name(sf.f_type, &fl);
	say(d, fl, "store file system",
	    "put the store on a local disk file system (ext4, xfs): segments are published by "
	    "fsync and rename",
	    "%s", fs);
	const uint64_t total = (uint64_t)sv.f_blocks * sv.f_frsize;
	const uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	const double pct = total ? 100.0 * (double)avail / (double)total : 0;
	const ng_doc_level l = avail < 256 * MIB              ? NG_DOC_FAIL
	                       : avail < 2 * GIB || pct < 5.0 ? NG_DOC_WARN
	                                                      : NG_DOC_OK;
	say(d, l, "store space",
	    "free space, or bound the store: --retention AGE / --max-size SIZE (collect.retention, "
	    "collect.max_size)",
	    "%.1f GiB free of %.1f GiB (%.0f %%)", (double)avail / (double)GIB,
	    (double)total / (double)GIB, pct);
}

/* ---- state of the last run ---------------------------------------------------- */

static void check_limits(doc *d, const ng_limit_stats *l)
{
	bool any = false;
	for (int i = 0; i < NG_LC_COUNT; i++) {
		const ng_limit_counter *c = &ng_limit_counters[i];
		const uint64_t v = ng_limit_stat(l, i);
		if (c->gauge || !v)
			continue;
		char check[96];
		snprintf(check, sizeof check, "limit %s", c->name);
		say(d, NG_DOC_WARN, check,
		    "a flood or spoofed senders hit a bound and it held; if it is your own network "
		    "grown past the default, raise the limit it names under `limits:` in the "
		    "configuration (docs/security.md, Bounded state)",
		    "%" PRIu64 ": %s", v, c->doc);
		any = true;
	}
	if (!any)
		say(d, NG_DOC_OK, "limits", NULL,
		    "no limit hit (%" PRIu64 " exporters, %" PRIu64 " domains, %" PRIu64
		    " templates held)",
		    l->exporters, l->domains, l->templates);
}

static void check_state(doc *d)
{
	char path[4200], err[512];
	snprintf(path, sizeof path, "%s/state/exporters.json", d->o->store);
	ng_exporters_file f;
	if (ng_exporters_load(path, &f, err, sizeof err) < 0) {
		if (errno == ENOENT)
			say(d, NG_DOC_OK, "collector state", NULL,
			    "none yet (no collector has run on this store)");
		else
			say(d, NG_DOC_WARN, "collector state",
			    "it is rewritten by the next collector run", "%s", err);
		return;
	}
	const uint64_t age_s = (ng_now_ms() - f.updated_ms) / 1000;
	say(d, NG_DOC_OK, "collector state", NULL, "written %" PRIu64 " s ago, %zu exporters",
	    age_s, f.n);
	check_limits(d, &f.limits);
	if (f.listener.drops)
		say(d, NG_DOC_WARN, "kernel drops",
		    "raise net.core.rmem_max (above) or give the collector more CPU",
		    "%" PRIu64 " datagrams dropped by the kernel before nagare read them",
		    f.listener.drops);
	else
		say(d, NG_DOC_OK, "kernel drops", NULL, "none of %" PRIu64 " datagrams",
		    f.listener.datagrams);
	if (f.store.dropped)
		say(d, NG_DOC_WARN, "store drops", "check the disk: the collector's log says why",
		    "%" PRIu64 " rows the store could not take", f.store.dropped);
	uint64_t implausible = 0;
	for (size_t i = 0; i < f.n; i++)
		implausible += f.rows[i].time_implausible;
	if (implausible)
		say(d, NG_DOC_WARN, "flow times",
		    "check the exporters' clocks (and this one's); `nagare query 'anomaly time'` "
		    "lists them",
		    "%" PRIu64
		    " flows dated outside the time window (collect.max_past, max_future)",
		    implausible);
	ng_exporters_free(&f);
	uint64_t qbytes, q = ng_store_quarantined(d->o->store, &qbytes);
	if (q)
		say(d, NG_DOC_WARN, "quarantine",
		    "look at them, then delete DIR/quarantine (no query reads them)",
		    "%" PRIu64 " damaged files (%" PRIu64 " bytes) moved aside by `nagare fsck`", q,
		    qbytes);
}

/* ---- ports, databases, HTTP --------------------------------------------------- */

/* The inode of the socket bound to local `port` in /proc/net/<proto>
 * (udp, udp6, tcp, tcp6), 0 when none. */
static unsigned long port_inode(const doc *d, const char *proto, unsigned port)
{
	char p[4200], rel[64], line[512];
	unsigned long inode = 0;
	snprintf(rel, sizeof rel, "proc/net/%s", proto);
	FILE *f = fopen(proc_path(d, rel, p, sizeof p), "r");
	while (f && !inode && fgets(line, sizeof line, f)) {
		unsigned lp;
		unsigned long ino;
		char local[80];
		if (sscanf(line, " %*d: %79s %*s %*x %*s %*s %*s %*d %*d %lu", local, &ino) == 2 &&
		    strchr(local, ':') && sscanf(strchr(local, ':') + 1, "%x", &lp) == 1 &&
		    lp == port && ino)
			inode = ino;
	}
	if (f)
		fclose(f);
	return inode;
}

/* find_process predicate: process `pid` holds socket `arg`
 * ("socket:[INODE]"). */
static bool holds(const doc *d, const char *pid, const char *comm, void *arg)
{
	const char *want = arg;
	char p[4200], rel[300];
	(void)comm;
	snprintf(rel, sizeof rel, "proc/%.32s/fd", pid);
	DIR *fds = opendir(proc_path(d, rel, p, sizeof p));
	struct dirent *fe;
	bool found = false;
	while (fds && !found && (fe = readdir(fds))) {
		char link[4500], target[128];
		snprintf(link, sizeof link, "%s/%.64s", p, fe->d_name);
		ssize_t k = readlink(link, target, sizeof target - 1);
		if (k > 0) {
			target[k] = 0;
			found = !strcmp(target, want);
		}
	}
	if (fds)
		closedir(fds);
	return found;
}

/* The process holding local `port` of /proc/net/<proto> into who[len]
 * ("nagare (pid 123)"); false when none is found (or not visible). */
static bool port_holder(const doc *d, const char *proto, unsigned port, char *who, size_t len)
{
	const unsigned long inode = port_inode(d, proto, port);
	if (!inode)
		return false;
	char want[64], pid[32], comm[64];
	snprintf(want, sizeof want, "socket:[%lu]", inode);
	if (!find_process(d, holds, want, pid, comm))
		return false;
	snprintf(who, len, "%.63s (pid %.31s)", comm, pid);
	return true;
}

/* The port of "ADDR:PORT", ":PORT" or "PORT"; 0 when none. */
static unsigned spec_port(const char *spec)
{
	const char *c = strrchr(spec, ':');
	return (unsigned)strtoul(c ? c + 1 : spec, NULL, 10);
}

static void check_port(doc *d, const char *spec)
{
	char check[128], err[256], who[128];
	snprintf(check, sizeof check, "port udp %s", spec);
	const char *const one[] = {spec};
	ng_listener *l = ng_listener_open(one, 1, err, sizeof err);
	if (l) {
		ng_listener_close(l);
		say(d, NG_DOC_OK, check, NULL, "free");
		return;
	}
	const unsigned port = spec_port(spec);
	if (port_holder(d, "udp", port, who, sizeof who) ||
	    port_holder(d, "udp6", port, who, sizeof who)) {
		if (!strncmp(who, "nagare ", 7))
			say(d, NG_DOC_OK, check, NULL, "in use by %s: a collector runs", who);
		else
			say(d, NG_DOC_FAIL, check, "stop it, or listen elsewhere (--listen)",
			    "in use by %s", who);
		return;
	}
	say(d, NG_DOC_FAIL, check, "choose another address (--listen)", "%s", err);
}

static void check_ports(doc *d)
{
	static const char *const defaults[] = {":2055", ":4739", ":6343", ":9995"};
	const char *const *v = d->o->nlisten ? d->o->listen : defaults;
	const size_t n = d->o->nlisten ? d->o->nlisten : 4;
	for (size_t i = 0; i < n; i++)
		check_port(d, v[i]);
}

static void check_db(doc *d, const char *what, const char *path)
{
	char check[64], err[512], type[128];
	uint64_t built;
	snprintf(check, sizeof check, "database %s", what);
	if (ng_geodb_probe(path, &built, type, sizeof type, err, sizeof err)) {
		say(d, NG_DOC_FAIL, check, "check the path and the file (collect refuses to start)",
		    "%s", err);
		return;
	}
	const uint64_t days = ((uint64_t)time(NULL) - built) / 86400;
	char when[32];
	time_t t = (time_t)built;
	strftime(when, sizeof when, "%Y-%m-%d", gmtime(&t));
	say(d, days > DB_OLD_DAYS ? NG_DOC_WARN : NG_DOC_OK, check,
	    "download a newer release of the database (the default ones: run scripts/setup "
	    "or /usr/share/nagare/fetch-ip-location-db again; docs/enrichment.md)",
	    "%s: %s, built %s (%" PRIu64 " days ago)", path, type, when, days);
}

/* Each file of the list `l` ("A,B": one per address family). */
static void check_db_list(doc *d, const char *what, const char *l)
{
	char one[4096];
	for (const char *p = l; *p;) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		snprintf(one, sizeof one, "%.*s", (int)n, p);
		check_db(d, what, one);
		p += n + (c ? 1 : 0);
	}
}

static void check_dbs(doc *d)
{
	const ng_config *c = d->o->cfg;
	if (!c || (!c->geoip_db && !c->asn_db)) {
		say(d, NG_DOC_OK, "databases", NULL,
		    "none configured and no default ones installed (no GeoIP or ASN "
		    "enrichment; scripts/setup or /usr/share/nagare/fetch-ip-location-db "
		    "installs DB-IP Lite city and the ip-location-db ASN ranges)");
		return;
	}
	if (c->geoip_db)
		check_db_list(d, "geoip", c->geoip_db);
	if (c->asn_db && (!c->geoip_db || strcmp(c->asn_db, c->geoip_db)))
		check_db_list(d, "asn", c->asn_db);
}

static void check_http(doc *d)
{
	if (d->o->http_off) {
		say(d, NG_DOC_OK, "http", NULL, "off");
		return;
	}
	const char *addr = d->o->http ? d->o->http : "127.0.0.1:8080";
	if (ng_http_is_loopback(addr))
		say(d, NG_DOC_OK, "http", NULL,
		    "%s: this machine only; requests must name a loopback Host (DNS rebinding "
		    "refused)%s",
		    addr, d->o->http_token ? ", and carry the token" : "");
	else if (d->o->http_token)
		say(d, NG_DOC_OK, "http", NULL, "%s: every request needs the token", addr);
	else
		say(d, NG_DOC_WARN, "http",
		    "set http_token (or NAGARE_HTTP_TOKEN) so the token survives restarts",
		    "%s is reachable from the network and no token is configured: collect makes "
		    "one at each start and prints it",
		    addr);
}

/* The schema of the server of c: this nagare's version, every column. */
static void check_ch_schema(doc *d, ng_ch_client *c)
{
	unsigned v, nmiss;
	char miss[256], err[NG_CH_ERR_MAX + 64];
	if (ng_ch_schema_check(c, &v, &nmiss, miss, sizeof miss, err, sizeof err) < 0)
		say(d, NG_DOC_FAIL, "clickhouse schema", "check the user's rights", "%s", err);
	else if (v == 0)
		say(d, NG_DOC_WARN, "clickhouse schema",
		    "run `nagare clickhouse init` (collect makes it at start too)",
		    "database %s at %s has no nagare schema yet", ng_ch_database(c),
		    ng_ch_base_url(c));
	else if (v > NG_CH_SCHEMA_VERSION)
		say(d, NG_DOC_FAIL, "clickhouse schema", "upgrade nagare",
		    "database %s at %s has schema version %u, newer than this nagare's %d",
		    ng_ch_database(c), ng_ch_base_url(c), v, NG_CH_SCHEMA_VERSION);
	else if (v < NG_CH_SCHEMA_VERSION || nmiss)
		say(d, NG_DOC_WARN, "clickhouse schema",
		    "run `nagare clickhouse init` (collect upgrades it at start too)",
		    "database %s at %s: schema version %u, %u columns missing (%s)",
		    ng_ch_database(c), ng_ch_base_url(c), v, nmiss, miss);
	else
		say(d, NG_DOC_OK, "clickhouse schema", NULL,
		    "database %s at %s: version %u, current", ng_ch_database(c), ng_ch_base_url(c),
		    v);
}

/* ClickHouse (docs/clickhouse.md): the server answers (in a cluster,
 * every server of it), the schema is this nagare's, and (from the last
 * collector's state) inserts keep up. */
static void check_clickhouse(doc *d)
{
	const ng_config *cfg = d->o->cfg;
	if (d->o->clickhouse_off)
		return;
	const char *url = d->o->clickhouse ? d->o->clickhouse : cfg ? cfg->clickhouse.url : NULL;
	if (!url)
		return;
	const ng_cfg_clickhouse *h = cfg ? &cfg->clickhouse : NULL;
	ng_ch_conn conn = {.url = url,
	                   .database = h ? h->database : NULL,
	                   .user = h ? h->user : NULL,
	                   .password = h ? h->password : NULL,
	                   .ca_file = h ? h->ca_file : NULL,
	                   .cert_file = h ? h->cert_file : NULL,
	                   .key_file = h ? h->key_file : NULL,
	                   .timeout_ms = 5000};
	char err[NG_CH_ERR_MAX + 64];
	ng_ch_client *c = ng_ch_open(&conn, err, sizeof err);
	if (!c) {
		say(d, NG_DOC_FAIL, "clickhouse", "fix clickhouse.url or --clickhouse", "%s", err);
		return;
	}
	ng_ch_server sv;
	if (ng_ch_detect(c, &sv, err, sizeof err) < 0) {
		say(d, NG_DOC_FAIL, "clickhouse",
		    "start clickhouse-server, or check the URL, user and password", "%s", err);
		ng_ch_close(c);
		return;
	}
	say(d, NG_DOC_OK, "clickhouse", NULL, "%s answers, version %s", ng_ch_base_url(c),
	    sv.version);
	if (h && h->cluster) {
		/* every server of the cluster answers, and holds the schema */
		ng_ch_cluster *cc = ng_ch_cluster_open(
		    &conn, h->cluster, (const char *const *)h->nodes, h->nnodes, err, sizeof err);
		if (!cc)
			say(d, NG_DOC_FAIL, "clickhouse cluster",
			    "start the server named, or list the servers' URLs in clickhouse.nodes",
			    "%s", err);
		else
			say(d, NG_DOC_OK, "clickhouse cluster", NULL,
			    "%s: %u shards, %zu servers, every one answers", cc->name, cc->shards,
			    cc->n);
		for (size_t i = 0; cc && i < cc->n; i++)
			check_ch_schema(d, cc->node[i].c);
		ng_ch_cluster_free(cc);
	} else {
		check_ch_schema(d, c);
	}
	ng_ch_close(c);
	if (!d->o->store)
		return;
	char path[4200];
	snprintf(path, sizeof path, "%s/state/exporters.json", d->o->store);
	ng_exporters_file f;
	if (ng_exporters_load(path, &f, err, sizeof err) < 0)
		return;
	if (f.has_clickhouse) {
		const ng_sink_stats *x = &f.clickhouse;
		if (x->dropped_rows)
			say(d, NG_DOC_FAIL, "clickhouse inserts",
			    "raise clickhouse.spool_max, or see why ClickHouse refused (the log)",
			    "%" PRIu64 " rows were dropped with the spool full", x->dropped_rows);
		else if (x->spool_files || x->lag_ms > 60000)
			say(d, NG_DOC_WARN, "clickhouse inserts",
			    "ClickHouse is down or slower than the flows: see the collector's log",
			    "behind: %" PRIu64 " batches spooled (%" PRIu64 " bytes), lag %" PRIu64
			    " s",
			    x->spool_files, x->spool_bytes, x->lag_ms / 1000);
		else
			say(d, NG_DOC_OK, "clickhouse inserts", NULL,
			    "keeping up: %" PRIu64 " rows sent, lag %" PRIu64
			    " ms, nothing spooled",
			    x->rows_sent, x->lag_ms);
	}
	ng_exporters_free(&f);
}

ng_doc_level ng_doctor_run(const ng_doctor_opts *o, ng_doctor_fn fn, void *arg, char **sysctl_lines)
{
	doc d = {.o = o, .fn = fn, .arg = arg};
	check_sysctls(&d);
	check_granted(&d);
	check_clock(&d);
	if (o->store)
		check_store(&d);
	if (o->store && o->state)
		check_state(&d);
	if (o->ports)
		check_ports(&d);
	check_dbs(&d);
	check_http(&d);
	check_clickhouse(&d);
	if (sysctl_lines)
		*sysctl_lines = d.nlines ? strdup(d.lines) : NULL;
	return d.worst;
}
