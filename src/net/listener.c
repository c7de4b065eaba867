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

#ifndef SO_RXQ_OVFL
#define SO_RXQ_OVFL 40
#endif

const uint16_t ng_listen_default_ports[4] = {2055, 4739, 6343, 9995};

struct sock {
	int fd;
	uint16_t port;
	size_t rcvbuf;
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
};

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
static int bind_one(int family, const uint8_t *addr, uint16_t port, bool dual, const char **step)
{
	int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*step = "socket";
		return -1;
	}
	int one = 1, zero = 0;
	if (family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, dual ? &zero : &one, sizeof one) < 0) {
		*step = "setsockopt(IPV6_V6ONLY)";
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
	return fd;
fail:;
	int e = errno;
	close(fd);
	errno = e;
	return -1;
}

static int add_socket(ng_listener *l, const struct bind_addr *b, const char *spec, char *err,
                      size_t errlen)
{
	static const uint8_t any[16] = {0};
	const char *step = "";
	int fd;
	if (b->family == AF_UNSPEC) {
		fd = bind_one(AF_INET6, any, b->port, true, &step);
		/* No IPv6 on this host (disabled module or sysctl): IPv4 alone. */
		if (fd < 0 && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL)) {
			ng_info("%s: IPv6 unavailable (%s), listening on IPv4 only", spec,
			        strerror(errno));
			fd = bind_one(AF_INET, any, b->port, false, &step);
		}
	} else {
		bool dual = b->family == AF_INET6 && !memcmp(b->addr, any, 16);
		fd = bind_one(b->family, b->addr, b->port, dual, &step);
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
	s->rcvbuf = grow_rcvbuf(fd);
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
		if (l->socks[i].rcvbuf < least)
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

ng_listener *ng_listener_open(const char *const *specs, size_t n, char *err, size_t errlen)
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
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		snprintf(err, errlen, "epoll_create1: %s", strerror(errno));
		goto fail;
	}
	setup_buffers(l);
	for (size_t i = 0; i < nsock; i++) {
		struct bind_addr b = {.family = AF_UNSPEC};
		char spec[160];
		if (n) {
			snprintf(spec, sizeof spec, "%s", specs[i]);
			if (!parse_spec(specs[i], &b, err, errlen))
				goto fail;
		} else {
			b.port = ng_listen_default_ports[i];
			snprintf(spec, sizeof spec, ":%u", b.port);
		}
		if (add_socket(l, &b, spec, err, errlen) < 0)
			goto fail;
	}
	warn_rcvbuf(l);
	return l;
fail:
	ng_listener_close(l);
	return NULL;
}

void ng_listener_close(ng_listener *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		close(l->socks[i].fd);
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

int ng_listener_recv(ng_listener *l, int timeout_ms, const ng_datagram **out)
{
	struct epoll_event ev[16];
	*out = l->dgs;
	int ne = epoll_wait(l->epfd, ev, (int)(sizeof ev / sizeof ev[0]), timeout_ms);
	if (ne < 0)
		return errno == EINTR ? 0 : -1;
	size_t got = 0;
	for (int i = 0; i < ne && got < NG_LISTEN_BATCH; i++)
		got = drain(l, &l->socks[ev[i].data.u64], got);
	/* One clock read per batch: the datagrams arrived within the wait. */
	uint64_t now = ng_now_ms();
	for (size_t i = 0; i < got; i++)
		l->dgs[i].time_received = now;
	return (int)got;
}

void ng_listener_get_stats(const ng_listener *l, ng_listener_stats *st)
{
	*st = l->st;
}
