/*
 * listener.c — UDP receive sockets, batched (see listener.h).
 *
 * Why the socket options:
 *   - IPV6_V6ONLY=0 on "::" so one socket takes both families; IPv4
 *     senders then appear as ::ffff:a.b.c.d, already the flow record's form
 *     (ipv6(7)).  Some collectors bind "::" with the distribution default
 *     (often V6ONLY=1 on BSDs, sysctl on Linux) and silently lose IPv4.
 *   - A large receive buffer absorbs the bursts exporters send when their
 *     cache expires; the kernel caps SO_RCVBUF at net.core.rmem_max, and
 *     SO_RCVBUFFORCE (CAP_NET_ADMIN) goes past it.
 *   - SO_RXQ_OVFL makes the kernel attach the socket's drop count to each
 *     datagram, so loss before the collector is visible, not silent.
 *
 * TCP and SCTP (RFC 7011 §10.4, §10.2): a listening socket per address;
 * each connection accepted gets a slot of l->conns, a session id (1, 2,
 * …, never 0: 0 is UDP) and a reassembler (net/reasm.h).  Its reads are
 * cut at message ends (recv of what the current message still needs, so
 * two per message), and a whole message is copied into a free slot of the
 * batch, so one recv batch mixes datagrams and messages.  The epoll key
 * says which: a socket index below l->n, or CONN_TAG | slot.  The UDP
 * path pays one comparison for it.  SCTP sockets are one-to-one style
 * (SOCK_STREAM, RFC 6458 §4): a message read in pieces arrives in order,
 * as over TCP.  Refusals, idle closes and lost framing are counted in
 * ng_listener_stats.
 */
#include "net/listener.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/addr.h"
#include "core/log.h"
#include "core/timefmt.h"
#include "net/reasm.h"
#include "net/reuseport.h"

#ifndef IPPROTO_SCTP
#define IPPROTO_SCTP 132
#endif

#ifndef SO_RXQ_OVFL
#define SO_RXQ_OVFL 40
#endif

const uint16_t ng_listen_default_ports[4] = {2055, 4739, 6343, 9995};

enum sock_kind { K_UDP, K_TCP, K_SCTP };

struct sock {
	int fd;
	enum sock_kind kind;
	uint16_t port;
	size_t rcvbuf;
	int family;    /* of the bound address */
	uint32_t ovfl; /* last SO_RXQ_OVFL value seen */
	char name[64];
};

/* Control buffer for one datagram: the SO_RXQ_OVFL uint32. */
#define CTRL_LEN CMSG_SPACE(sizeof(uint32_t))

struct ng_listener {
	struct sock *socks;
	size_t n;
	int epfd;
	uint8_t *buf; /* NG_LISTEN_BATCH × NG_LISTEN_DGRAM_MAX */
	struct mmsghdr msgs[NG_LISTEN_BATCH];
	struct iovec iov[NG_LISTEN_BATCH];
	struct sockaddr_storage from[NG_LISTEN_BATCH];
	union {
		char buf[CTRL_LEN];
		struct cmsghdr align;
	} ctrl[NG_LISTEN_BATCH];
	ng_datagram dgs[NG_LISTEN_BATCH];
	ng_listener_stats st;
	bool warned_rcvbuf;
	bool reuseport; /* UDP sockets bound with SO_REUSEPORT (workers) */
	/* TCP/SCTP connections: slots [0, ncap), fd -1 when free */
	struct conn *conns;
	size_t ncap, nconn;
	ng_stream_limits lim;
	uint32_t next_session;
	uint64_t next_sweep; /* ms: the next idle check */
	ng_session_end *ended;
	size_t nended;
};

/* One TCP connection / SCTP association. */
struct conn {
	int fd;
	uint32_t session;
	uint8_t addr[16]; /* peer, IPv4-mapped */
	uint16_t port;
	uint64_t last_ms; /* last byte received, collector clock */
	ng_reasm r;
};

#define ng_likely_udp(x) __builtin_expect(!!(x), 1)

/* epoll key of connection slot i */
#define CONN_TAG (1ull << 63)

/* One address to bind, parsed from a --listen spec. */
struct bind_addr {
	int family;       /* AF_INET, AF_INET6, or AF_UNSPEC: both families */
	uint8_t addr[16]; /* network order; 4 bytes used for AF_INET */
	uint16_t port;
};

static bool parse_port(const char *s, uint16_t *port)
{
	char *end;
	if (!*s)
		return false;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v > 65535 || *s == '-' || *s == '+')
		return false;
	*port = (uint16_t)v;
	return true;
}

/* Parses "A.B.C.D:PORT", "[V6]:PORT", ":PORT", "PORT".  Writes why not
 * into err[errlen] and returns false when the spec is none of these. */
static bool parse_spec(const char *spec, struct bind_addr *b, char *err, size_t errlen)
{
	char host[128];
	const char *port;
	memset(b, 0, sizeof *b);
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof host) {
			snprintf(err, errlen, "listen address '%s': expected [IPV6]:PORT", spec);
			return false;
		}
		memcpy(host, spec + 1, (size_t)(close - spec - 1));
		host[close - spec - 1] = 0;
		port = close + 2;
		b->family = AF_INET6;
		if (inet_pton(AF_INET6, host, b->addr) != 1) {
			snprintf(err, errlen, "listen address '%s': '%s' is not an IPv6 address",
			         spec, host);
			return false;
		}
	} else {
		const char *colon = strrchr(spec, ':');
		if (colon && strchr(spec, ':') != colon) {
			snprintf(err, errlen,
			         "listen address '%s': write IPv6 addresses in brackets, e.g. "
			         "[::1]:2055",
			         spec);
			return false;
		}
		size_t hlen = colon ? (size_t)(colon - spec) : 0;
		port = colon ? colon + 1 : spec;
		b->family = AF_UNSPEC;
		if (hlen) {
			if (hlen >= sizeof host) {
				snprintf(err, errlen, "listen address '%s': address too long",
				         spec);
				return false;
			}
			memcpy(host, spec, hlen);
			host[hlen] = 0;
			b->family = AF_INET;
			if (inet_pton(AF_INET, host, b->addr) != 1) {
				snprintf(err, errlen,
				         "listen address '%s': '%s' is not an IPv4 address (names "
				         "are not resolved)",
				         spec, host);
				return false;
			}
		}
	}
	if (!parse_port(port, &b->port)) {
		snprintf(err, errlen, "listen address '%s': '%s' is not a port (0-65535)", spec,
		         port);
		return false;
	}
	return true;
}

static long read_rmem_max(void)
{
	long v = -1;
	FILE *f = fopen("/proc/sys/net/core/rmem_max", "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Asks for the big receive buffer; returns what was granted, bytes. */
static size_t grow_rcvbuf(int fd)
{
	int want = (int)NG_LISTEN_RCVBUF;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof want) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof want);
	int got = 0;
	socklen_t len = sizeof got;
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len) < 0)
		return 0;
	/* Linux doubles the value set (bookkeeping overhead) and reports the
	 * doubled figure; half of it is what data may use (socket(7)). */
	return (size_t)got / 2;
}

static void sock_name(const struct sockaddr_storage *ss, char *buf, size_t len, uint16_t *port)
{
	char a[INET6_ADDRSTRLEN] = "?";
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof a);
		*port = ntohs(s6->sin6_port);
		snprintf(buf, len, "[%s]:%u", a, *port);
	} else {
		const struct sockaddr_in *s4 = (const void *)ss;
		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof a);
		*port = ntohs(s4->sin_port);
		snprintf(buf, len, "%s:%u", a, *port);
	}
}

/*
 * Creates and binds one socket.  Returns the fd, or -1 with errno set
 * (errno of the step that failed; `*step` names it).
 */
static int bind_one(int family, const uint8_t *addr, uint16_t port, bool dual, enum sock_kind kind,
                    bool reuseport, const char **step)
{
	int type = kind == K_UDP ? SOCK_DGRAM : SOCK_STREAM;
	int fd =
	    socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, kind == K_SCTP ? IPPROTO_SCTP : 0);
	if (fd < 0) {
		*step = "socket";
		return -1;
	}
	int one = 1, zero = 0;
	/* a restarted collector binds again while old connections linger */
	if (kind != K_UDP)
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, dual ? &zero : &one, sizeof one) < 0) {
		*step = "setsockopt(IPV6_V6ONLY)";
		goto fail;
	}
	/* the sockets of the workers share the address (reuseport.h) */
	if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0) {
		*step = "setsockopt(SO_REUSEPORT)";
		goto fail;
	}
	/* Drop counts are a nicety: an old kernel without them still receives. */
	(void)setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one);
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (void *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, addr, 16);
		sl = sizeof *s6;
	} else {
		struct sockaddr_in *s4 = (void *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, addr, 4);
		sl = sizeof *s4;
	}
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		*step = "bind";
		goto fail;
	}
	if (kind != K_UDP && listen(fd, 128) < 0) {
		*step = "listen";
		goto fail;
	}
	return fd;
fail:;
	int e = errno;
	close(fd);
	errno = e;
	return -1;
}

static int add_socket(ng_listener *l, const struct bind_addr *b, enum sock_kind kind,
                      const char *spec, char *err, size_t errlen)
{
	static const uint8_t any[16] = {0};
	const char *step = "";
	int fd;
	if (b->family == AF_UNSPEC) {
		fd = bind_one(AF_INET6, any, b->port, true, kind, l->reuseport, &step);
		/* No IPv6 on this host (disabled module or sysctl): IPv4 alone. */
		if (fd < 0 && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL)) {
			ng_info("%s: IPv6 unavailable (%s), listening on IPv4 only", spec,
			        strerror(errno));
			fd = bind_one(AF_INET, any, b->port, false, kind, l->reuseport, &step);
		}
	} else {
		bool dual = b->family == AF_INET6 && !memcmp(b->addr, any, 16);
		fd = bind_one(b->family, b->addr, b->port, dual, kind, l->reuseport, &step);
	}
	if (fd < 0 && kind == K_SCTP && !strcmp(step, "socket") &&
	    (errno == EPROTONOSUPPORT || errno == ESOCKTNOSUPPORT || errno == EAFNOSUPPORT)) {
		snprintf(err, errlen,
		         "cannot listen on %s: this kernel has no SCTP (socket: %s); load it with "
		         "'modprobe sctp', or use tcp://",
		         spec, strerror(errno));
		return -1;
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s: %s%s", spec, step, strerror(errno),
		         errno == EADDRINUSE ? " (another collector on this port?)" : "");
		return -1;
	}
	struct sock *s = &l->socks[l->n];
	memset(s, 0, sizeof *s);
	s->fd = fd;
	struct sockaddr_storage ss = {0};
	socklen_t sl = sizeof ss;
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	sock_name(&ss, s->name, sizeof s->name, &s->port);
	s->family = ss.ss_family;
	s->kind = kind;
	if (kind != K_UDP) {
		/* "tcp://127.0.0.1:4739": the name says the transport */
		char n[sizeof s->name];
		snprintf(n, sizeof n, "%s://%.54s", kind == K_TCP ? "tcp" : "sctp", s->name);
		memcpy(s->name, n, sizeof n);
	}
	s->rcvbuf = kind == K_UDP ? grow_rcvbuf(fd) : NG_LISTEN_RCVBUF;
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = l->n};
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		snprintf(err, errlen, "cannot listen on %s: epoll_ctl: %s", spec, strerror(errno));
		close(fd);
		return -1;
	}
	l->n++;
	return 0;
}

static void warn_rcvbuf(ng_listener *l)
{
	size_t least = SIZE_MAX;
	for (size_t i = 0; i < l->n; i++)
		if (l->socks[i].kind == K_UDP && l->socks[i].rcvbuf < least)
			least = l->socks[i].rcvbuf;
	if (!l->n || least >= NG_LISTEN_RCVBUF)
		return;
	long rmax = read_rmem_max();
	char rtext[32] = "unknown";
	if (rmax >= 0)
		snprintf(rtext, sizeof rtext, "%ld", rmax);
	ng_warn("UDP receive buffer is %zu KiB, not the %u MiB asked: net.core.rmem_max is %s; "
	        "bursts beyond the buffer are dropped. Raise it with "
	        "'sysctl -w net.core.rmem_max=%u' (or run as root)",
	        least >> 10, NG_LISTEN_RCVBUF >> 20, rtext, NG_LISTEN_RCVBUF);
}

static void setup_buffers(ng_listener *l)
{
	for (size_t i = 0; i < NG_LISTEN_BATCH; i++) {
		l->iov[i].iov_base = l->buf + i * NG_LISTEN_DGRAM_MAX;
		l->iov[i].iov_len = NG_LISTEN_DGRAM_MAX;
	}
}

/* "tcp://", "sctp://", "udp://" or nothing (UDP): the kind, and the
 * address after the scheme. */
static const char *strip_scheme(const char *spec, enum sock_kind *kind)
{
	static const struct {
		const char *p;
		enum sock_kind k;
	} schemes[] = {{"udp://", K_UDP}, {"tcp://", K_TCP}, {"sctp://", K_SCTP}};
	*kind = K_UDP;
	for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
		if (!strncmp(spec, schemes[i].p, strlen(schemes[i].p))) {
			*kind = schemes[i].k;
			return spec + strlen(schemes[i].p);
		}
	return spec;
}

/* The connection slots and the ended list, for the first stream address. */
static int conns_alloc(ng_listener *l)
{
	l->ncap = l->lim.conns;
	l->conns = calloc(l->ncap, sizeof *l->conns);
	/* a call closes at most the connections open before it and those it
	 * accepts (64 for each of 16 events) */
	l->ended = calloc(l->ncap + 16 * 64, sizeof *l->ended);
	if (!l->conns || !l->ended)
		return -1;
	for (size_t i = 0; i < l->ncap; i++)
		l->conns[i].fd = -1;
	return 0;
}

/* The address of spec i for worker `first` (NULL: the first worker, or
 * the only one): a later worker binds the port and family the first one
 * got (port 0 resolved, IPv6 fallen back to IPv4).  Returns 0 with *skip
 * set for a TCP/SCTP address a later worker does not open, or -1 with
 * err. */
static int spec_addr(const char *const *specs, size_t n, size_t i, const ng_listener *first,
                     struct bind_addr *b, enum sock_kind *kind, char *spec, size_t speclen,
                     bool *skip, char *err, size_t errlen)
{
	*b = (struct bind_addr){.family = AF_UNSPEC};
	*kind = K_UDP;
	*skip = false;
	if (n) {
		const char *a = strip_scheme(specs[i], kind);
		snprintf(spec, speclen, "%s", specs[i]);
		if (!parse_spec(a, b, err, errlen))
			return -1;
	} else {
		b->port = ng_listen_default_ports[i];
		snprintf(spec, speclen, ":%u", b->port);
	}
	if (!first)
		return 0;
	*skip = *kind != K_UDP;
	b->port = first->socks[i].port;
	if (b->family == AF_UNSPEC && first->socks[i].family == AF_INET)
		b->family = AF_INET; /* the first found no IPv6 */
	return 0;
}

/* One worker's listener: every address of specs for the first (first
 * NULL), the UDP ones only for the others, bound with SO_REUSEPORT when
 * there are several workers.  NULL with err on failure. */
static ng_listener *open_worker(const char *const *specs, size_t n, const ng_listener *first,
                                bool reuseport, char *err, size_t errlen)
{
	size_t nsock = n ? n : sizeof ng_listen_default_ports / sizeof ng_listen_default_ports[0];
	ng_listener *l = calloc(1, sizeof *l);
	if (l)
		l->epfd = -1;
	if (!l || !(l->socks = calloc(nsock, sizeof *l->socks)) ||
	    !(l->buf = malloc((size_t)NG_LISTEN_BATCH * NG_LISTEN_DGRAM_MAX))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	l->reuseport = reuseport;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		snprintf(err, errlen, "epoll_create1: %s", strerror(errno));
		goto fail;
	}
	setup_buffers(l);
	ng_listener_set_stream_limits(l, NULL);
	for (size_t i = 0; i < nsock; i++) {
		struct bind_addr b;
		char spec[160];
		enum sock_kind kind;
		bool skip;
		if (spec_addr(specs, n, i, first, &b, &kind, spec, sizeof spec, &skip, err,
		              errlen) < 0)
			goto fail;
		if (skip)
			continue;
		if (kind != K_UDP && !l->conns && conns_alloc(l) < 0) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		if (add_socket(l, &b, kind, spec, err, errlen) < 0)
			goto fail;
	}
	if (!first)
		warn_rcvbuf(l);
	return l;
fail:
	ng_listener_close(l);
	return NULL;
}

ng_listener *ng_listener_open(const char *const *specs, size_t n, char *err, size_t errlen)
{
	return open_worker(specs, n, NULL, false, err, errlen);
}

int ng_listener_open_workers(const char *const *specs, size_t n, unsigned workers,
                             ng_listener **out, char *err, size_t errlen)
{
	if (workers < 1 || workers > NG_REUSEPORT_MAX) {
		snprintf(err, errlen, "workers must be 1 to %u, not %u", NG_REUSEPORT_MAX, workers);
		return -1;
	}
	memset(out, 0, workers * sizeof *out);
	for (unsigned w = 0; w < workers; w++) {
		out[w] = open_worker(specs, n, w ? out[0] : NULL, workers > 1, err, errlen);
		if (!out[w])
			goto fail;
	}
	/* the group's sockets are in bind order: worker w's is index w */
	for (size_t i = 0; workers > 1 && i < out[0]->n; i++)
		if (out[0]->socks[i].kind == K_UDP &&
		    ng_reuseport_attach(out[0]->socks[i].fd, workers) < 0) {
			snprintf(err, errlen,
			         "cannot share %s between %u workers: SO_ATTACH_REUSEPORT_CBPF: %s",
			         out[0]->socks[i].name, workers, strerror(errno));
			goto fail;
		}
	return 0;
fail:
	for (unsigned w = 0; w < workers; w++) {
		ng_listener_close(out[w]);
		out[w] = NULL;
	}
	return -1;
}

void ng_listener_close(ng_listener *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		close(l->socks[i].fd);
	for (size_t i = 0; i < l->ncap; i++)
		if (l->conns[i].fd >= 0) {
			close(l->conns[i].fd);
			ng_reasm_free(&l->conns[i].r);
		}
	free(l->conns);
	free(l->ended);
	if (l->epfd >= 0)
		close(l->epfd);
	free(l->socks);
	free(l->buf);
	free(l);
}

size_t ng_listener_count(const ng_listener *l)
{
	return l->n;
}

char *ng_listener_name(const ng_listener *l, size_t i, char *buf, size_t len)
{
	snprintf(buf, len, "%s", i < l->n ? l->socks[i].name : "?");
	return buf;
}

uint16_t ng_listener_port(const ng_listener *l, size_t i)
{
	return i < l->n ? l->socks[i].port : 0;
}

size_t ng_listener_rcvbuf(const ng_listener *l, size_t i)
{
	return i < l->n ? l->socks[i].rcvbuf : 0;
}

/* The kernel's drop counter arrives with each datagram; it is cumulative
 * per socket, so the difference to the last value is new loss. */
static void note_drops(ng_listener *l, struct sock *s, struct msghdr *mh)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SO_RXQ_OVFL)
			continue;
		uint32_t v;
		memcpy(&v, CMSG_DATA(c), sizeof v);
		l->st.drops += (uint32_t)(v - s->ovfl);
		s->ovfl = v;
	}
}

static void to_datagram(ng_datagram *dg, const struct sockaddr_storage *from, const uint8_t *data,
                        size_t len)
{
	memset(dg, 0, sizeof *dg);
	dg->data = data;
	dg->len = len;
	if (from->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)from;
		memcpy(dg->exporter, &s6->sin6_addr, 16);
		dg->exporter_port = ntohs(s6->sin6_port);
	} else {
		const struct sockaddr_in *s4 = (const void *)from;
		ng_addr_from_v4(dg->exporter, (const uint8_t *)&s4->sin_addr);
		dg->exporter_port = ntohs(s4->sin_port);
	}
}

/* Reads what socket `s` holds into slots [got, NG_LISTEN_BATCH); returns
 * the new fill. */
static size_t drain(ng_listener *l, struct sock *s, size_t got)
{
	size_t room = NG_LISTEN_BATCH - got;
	for (size_t i = got; i < NG_LISTEN_BATCH; i++) {
		struct msghdr *mh = &l->msgs[i].msg_hdr;
		memset(mh, 0, sizeof *mh);
		mh->msg_name = &l->from[i];
		mh->msg_namelen = sizeof l->from[i];
		mh->msg_iov = &l->iov[i];
		mh->msg_iovlen = 1;
		mh->msg_control = l->ctrl[i].buf;
		mh->msg_controllen = CTRL_LEN;
	}
	int r = recvmmsg(s->fd, l->msgs + got, (unsigned)room, MSG_DONTWAIT, NULL);
	if (r < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			l->st.errors++;
		return got;
	}
	size_t out = got;
	for (size_t i = got; i < got + (size_t)r; i++) {
		struct msghdr *mh = &l->msgs[i].msg_hdr;
		note_drops(l, s, mh);
		if (mh->msg_flags & MSG_TRUNC) {
			l->st.truncated++;
			continue;
		}
		/* Compact over a dropped slot: slot `out` takes datagram i and
		 * its buffer, so a later drain into slots past `out` cannot
		 * overwrite it. */
		if (out != i) {
			void *b = l->iov[out].iov_base;
			l->iov[out].iov_base = l->iov[i].iov_base;
			l->iov[i].iov_base = b;
		}
		to_datagram(&l->dgs[out], &l->from[i], l->iov[out].iov_base, l->msgs[i].msg_len);
		l->st.datagrams++;
		l->st.bytes += l->msgs[i].msg_len;
		out++;
	}
	return out;
}

/* ---- TCP and SCTP ---- */

void ng_listener_set_stream_limits(ng_listener *l, const ng_stream_limits *lim)
{
	ng_stream_limits v = lim ? *lim : (ng_stream_limits){0};
	if (!v.conns)
		v.conns = NG_STREAM_CONNS;
	if (!v.conns_per_source)
		v.conns_per_source = NG_STREAM_CONNS_PER_SOURCE;
	if (!v.idle_ms)
		v.idle_ms = NG_STREAM_IDLE_MS;
	if (l->ncap && v.conns > l->ncap)
		v.conns = (unsigned)l->ncap; /* the slots were allocated at open */
	l->lim = v;
}

size_t ng_listener_ended(const ng_listener *l, const ng_session_end **out)
{
	*out = l->ended;
	return l->nended;
}

size_t ng_listener_conns(const ng_listener *l)
{
	return l->nconn;
}

/* Closes connection `c` and lists its session as ended. */
static void conn_close(ng_listener *l, struct conn *c)
{
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	ng_reasm_free(&c->r);
	ng_session_end *e = &l->ended[l->nended++]; /* sized in conns_alloc */
	e->session = c->session;
	memcpy(e->exporter, c->addr, 16);
	l->nconn--;
}

/* Connections open from `addr`. */
static size_t conns_from(const ng_listener *l, const uint8_t addr[16])
{
	size_t k = 0;
	for (size_t i = 0; i < l->ncap; i++)
		k += l->conns[i].fd >= 0 && !memcmp(l->conns[i].addr, addr, 16);
	return k;
}

/* Takes on a connection of listening socket `s`, within the bounds. */
static void conn_accept(ng_listener *l, int fd, const struct sockaddr_storage *from, uint64_t now)
{
	ng_datagram peer;
	to_datagram(&peer, from, NULL, 0);
	if (l->nconn >= l->lim.conns) {
		l->st.conns_refused++;
		close(fd);
		return;
	}
	if (conns_from(l, peer.exporter) >= l->lim.conns_per_source) {
		l->st.conns_refused_source++;
		close(fd);
		return;
	}
	size_t i = 0;
	while (l->conns[i].fd >= 0)
		i++; /* nconn < conns <= ncap: a slot is free */
	struct conn *c = &l->conns[i];
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = CONN_TAG | i};
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		l->st.errors++;
		close(fd);
		return;
	}
	c->fd = fd;
	c->session = ++l->next_session ? l->next_session : ++l->next_session;
	memcpy(c->addr, peer.exporter, 16);
	c->port = peer.exporter_port;
	c->last_ms = now;
	ng_reasm_init(&c->r);
	l->nconn++;
	l->st.conns_accepted++;
}

/* Accepts what listening socket `s` has waiting (64 at most a call). */
static void accept_all(ng_listener *l, struct sock *s, uint64_t now)
{
	for (int k = 0; k < 64; k++) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof from;
		int fd =
		    accept4(s->fd, (struct sockaddr *)&from, &fl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				l->st.errors++;
			return;
		}
		conn_accept(l, fd, &from, now);
	}
}

/* Reads connection `c` into batch slots [got, NG_LISTEN_BATCH), a whole
 * message per slot, until it has nothing more or the batch is full;
 * closes it at its end, on an error or on lost framing.  Returns the new
 * fill. */
static size_t conn_read(ng_listener *l, struct conn *c, size_t got, uint64_t now)
{
	while (got < NG_LISTEN_BATCH) {
		size_t want;
		uint8_t *dst = ng_reasm_dst(&c->r, &want);
		ssize_t k = recv(c->fd, dst, want, MSG_DONTWAIT);
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return got;
		if (k <= 0) {
			if (k < 0 && errno != ECONNRESET)
				l->st.errors++;
			if (ng_reasm_partial(&c->r))
				l->st.conns_cut++;
			conn_close(l, c);
			return got;
		}
		c->last_ms = now;
		const uint8_t *msg;
		size_t len;
		int rc = ng_reasm_got(&c->r, (size_t)k, &msg, &len);
		if (rc < 0) {
			if (rc == NG_REASM_BAD)
				l->st.conns_bad++;
			else
				l->st.errors++;
			conn_close(l, c);
			return got;
		}
		if (rc == NG_REASM_MESSAGE) {
			ng_datagram *dg = &l->dgs[got];
			memcpy(l->iov[got].iov_base, msg, len);
			memset(dg, 0, sizeof *dg);
			dg->data = l->iov[got].iov_base;
			dg->len = len;
			memcpy(dg->exporter, c->addr, 16);
			dg->exporter_port = c->port;
			dg->session = c->session;
			l->st.datagrams++;
			l->st.bytes += len;
			got++;
		}
	}
	return got;
}

/* Closes the connections quiet for lim.idle_ms; once a second at most. */
static void sweep_idle(ng_listener *l, uint64_t now)
{
	if (now < l->next_sweep)
		return;
	l->next_sweep = now + 1000;
	for (size_t i = 0; i < l->ncap && l->nconn; i++) {
		struct conn *c = &l->conns[i];
		if (c->fd >= 0 && now - c->last_ms >= l->lim.idle_ms) {
			l->st.conns_idle++;
			conn_close(l, c);
		}
	}
}

/* A stream event: a listening socket's or a connection's. */
static size_t stream_event(ng_listener *l, uint64_t key, size_t got, uint64_t now)
{
	if (key & CONN_TAG) {
		struct conn *c = &l->conns[key & ~CONN_TAG];
		/* closed earlier in this call (idle sweep): the event is stale */
		return c->fd >= 0 ? conn_read(l, c, got, now) : got;
	}
	accept_all(l, &l->socks[key], now);
	return got;
}

int ng_listener_recv(ng_listener *l, int timeout_ms, const ng_datagram **out)
{
	struct epoll_event ev[16];
	*out = l->dgs;
	l->nended = 0;
	int ne = epoll_wait(l->epfd, ev, (int)(sizeof ev / sizeof ev[0]), timeout_ms);
	if (ne < 0)
		return errno == EINTR ? 0 : -1;
	size_t got = 0;
	uint64_t now = l->ncap ? ng_now_ms() : 0;
	for (int i = 0; i < ne && got < NG_LISTEN_BATCH; i++) {
		uint64_t key = ev[i].data.u64;
		if (ng_likely_udp(key < l->n && l->socks[key].kind == K_UDP))
			got = drain(l, &l->socks[key], got);
		else
			got = stream_event(l, key, got, now);
	}
	if (l->nconn)
		sweep_idle(l, now);
	/* One clock read per batch: the datagrams arrived within the wait. */
	now = ng_now_ms();
	for (size_t i = 0; i < got; i++)
		l->dgs[i].time_received = now;
	return (int)got;
}

void ng_listener_get_stats(const ng_listener *l, ng_listener_stats *st)
{
	*st = l->st;
}
