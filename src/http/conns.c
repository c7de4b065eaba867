/*
 * conns.c — how many connections the HTTP server holds, and which one
 * goes when there is no room (docs/security.md "HTTP").
 *
 * libmicrohttpd runs a thread per connection (server.c says why), and a
 * connection holds its thread and its slot whatever it does: before this
 * file, 64 TCP connections that sent nothing held all 64 slots for the
 * 60 s time-out, and every other client, /healthz included, was turned
 * away at accept — before any token check, so the token mode fell too.
 * libmicrohttpd's own per-address limit does not help on loopback, where
 * the browser and every local program share 127.0.0.1: it refuses the
 * newcomer, however idle the connections that fill the quota are.
 *
 * So the server keeps its own table of the open connections, each marked
 * busy (a request read and not yet answered to the end) or idle (waiting
 * for a request: just opened, between requests of a keep-alive client, or
 * a client trickling its headers), and applies three rules when a
 * connection arrives (the accept policy callback, on libmicrohttpd's one
 * accepting thread, before the connection exists):
 *
 *   1. a connection idle for longer than the idle time-out (default 10 s)
 *      is closed — libmicrohttpd's own time-out restarts at every byte,
 *      so a client sending a header byte every few seconds would
 *      otherwise live for ever;
 *   2. when the newcomer's client address already has max_per_client
 *      (default 32) connections, that address's connection idle the
 *      longest is closed for it; when none of them is idle, the newcomer
 *      is refused;
 *   3. likewise when max_connections (default 256) are open: the
 *      connection idle the longest of all is closed, else the newcomer is
 *      refused.
 *
 * A busy connection is never closed for room: a request that is running
 * finishes (bounded by the query time limit).  So idle connections, from
 * one address or many, cannot keep a request from getting in; only
 * max_connections requests all in progress at once can, each bounded in
 * time.  A client address is the IPv4 address, or the /64 of an IPv6 one
 * (one host holds a whole /64; ::1 is its own).
 *
 * Closing is shutdown(2) of the connection's socket, from this thread:
 * the connection's own thread wakes on the end of file and closes it the
 * ordinary way.  libmicrohttpd tells us a connection closed (NOTIFY
 * CLOSED) before it closes the descriptor, and we hold the table's lock
 * both there and while shutting one down, so a descriptor shut down is
 * always still the connection's own.  A connection shut down no longer
 * counts; libmicrohttpd's own limit is set at twice ours (server.c) so
 * the ones still closing do not turn newcomers away, and bounds the
 * threads.
 *
 * Costs: a table entry (about 64 bytes) per connection; the accept
 * callback walks the table (at most max_connections entries) once per
 * new connection.  Every eviction and refusal is counted
 * (nagare_http_connections_{evicted,expired,refused}_total) and logged,
 * at most once every 10 s.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "http/http_int.h"

struct ng_http_conn {
	ng_http_conn *next, *prev;
	int fd;
	uint8_t client[16]; /* the address key: IPv4 in the first 4 bytes, or the /64 */
	uint8_t family;
	bool busy, closing;
	uint64_t idle_since; /* monotonic ms: opened, or the last answer sent */
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The client key of a socket address into k[16] and *fam (0 for an
 * unknown family: such connections share one key). */
static void client_key(const struct sockaddr *a, uint8_t k[16], uint8_t *fam)
{
	memset(k, 0, 16);
	*fam = 0;
	if (!a)
		return;
	if (a->sa_family == AF_INET) {
		memcpy(k, &((const struct sockaddr_in *)a)->sin_addr, 4);
		*fam = 4;
	} else if (a->sa_family == AF_INET6) {
		const struct in6_addr *x = &((const struct sockaddr_in6 *)a)->sin6_addr;
		bool whole = IN6_IS_ADDR_LOOPBACK(x) || IN6_IS_ADDR_V4MAPPED(x);
		memcpy(k, x, whole ? 16 : 8); /* a /64 is one host's */
		*fam = 6;
	}
}

/* Writes the client key as text for a log line into buf[len]. */
static const char *key_text(const ng_http_conn *c, char *buf, size_t len)
{
	if (c->family == 4)
		return inet_ntop(AF_INET, c->client, buf, (socklen_t)len);
	if (c->family == 6)
		return inet_ntop(AF_INET6, c->client, buf, (socklen_t)len);
	return "?";
}

int ng_http_conns_init(ng_http_server *s, unsigned max, unsigned per_client, unsigned idle_s)
{
	ng_http_conns *t = &s->conns;
	t->max = max;
	t->per_client = per_client;
	t->idle_ms = (uint64_t)idle_s * 1000;
	return pthread_mutex_init(&t->mu, NULL) ? -1 : 0;
}

void ng_http_conns_destroy(ng_http_server *s)
{
	ng_http_conn *c = s->conns.head, *n;
	for (; c; c = n) { /* none left once the daemon stopped; freed anyway */
		n = c->next;
		free(c);
	}
	s->conns.head = NULL;
	pthread_mutex_destroy(&s->conns.mu);
}

/* Shuts the connection down (its thread closes it) and stops counting
 * it.  Called with the lock held. */
static void close_conn(ng_http_conns *t, ng_http_conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
	c->closing = true;
	t->open--;
}

/* The connection idle the longest among those of `key` (any when key is
 * NULL), not busy nor closing; NULL when every one is busy.  Also counts
 * those of `key` still open into *n.  Lock held. */
static ng_http_conn *longest_idle(ng_http_conns *t, const uint8_t *key, uint8_t fam, unsigned *n)
{
	ng_http_conn *best = NULL;
	*n = 0;
	for (ng_http_conn *c = t->head; c; c = c->next) {
		if (c->closing || (key && (c->family != fam || memcmp(c->client, key, 16))))
			continue;
		++*n;
		if (!c->busy && (!best || c->idle_since <= best->idle_since))
			best = c;
	}
	return best;
}

/* Closes the idle connections past the time-out.  Lock held. */
static void expire(ng_http_server *s, uint64_t now)
{
	ng_http_conns *t = &s->conns;
	for (ng_http_conn *c = t->head; c; c = c->next)
		if (!c->closing && !c->busy && now - c->idle_since > t->idle_ms) {
			close_conn(t, c);
			atomic_fetch_add(&s->m.conns_expired, 1);
		}
}

/* Makes room for one more connection of `key` (or of anyone, key NULL)
 * under `limit`: closes the longest idle one when the limit is reached.
 * Returns false when it is reached and every connection is busy.  Lock
 * held. */
static bool make_room(ng_http_server *s, const uint8_t *key, uint8_t fam, unsigned limit,
                      uint64_t now)
{
	ng_http_conns *t = &s->conns;
	unsigned n;
	ng_http_conn *v = longest_idle(t, key, fam, &n);
	if (!key)
		n = t->open;
	if (n < limit)
		return true;
	const char *what =
	    key ? "from one client (the limit per client)" : "open (the limit in total)";
	char a[INET6_ADDRSTRLEN];
	if (!v) {
		atomic_fetch_add(&s->m.conns_refused, 1);
		ng_http_log_limited(NG_HTTP_LOG_REFUSE,
		                    "HTTP: refused a connection: %u connections %s, every one busy "
		                    "with a request (docs/security.md \"HTTP\")",
		                    n, what);
		return false;
	}
	atomic_fetch_add(&s->m.conns_evicted, 1);
	ng_http_log_limited(NG_HTTP_LOG_EVICT,
	                    "HTTP: %u connections %s: closed the one idle longest (from %s, idle "
	                    "%.1f s) for a new one (docs/security.md \"HTTP\")",
	                    n, what, key_text(v, a, sizeof a),
	                    (double)(now - v->idle_since) / 1000);
	close_conn(t, v);
	return true;
}

int ng_http_conns_accept(void *cls, const struct sockaddr *addr, unsigned addrlen)
{
	(void)addrlen;
	ng_http_server *s = cls;
	ng_http_conns *t = &s->conns;
	uint8_t key[16], fam;
	client_key(addr, key, &fam);
	uint64_t now = now_ms();
	pthread_mutex_lock(&t->mu);
	expire(s, now);
	bool ok = make_room(s, key, fam, t->per_client, now) && make_room(s, NULL, 0, t->max, now);
	pthread_mutex_unlock(&t->mu);
	return ok ? MHD_YES : MHD_NO;
}

/* The table entry of a connection (its socket context), or NULL. */
static ng_http_conn *entry_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

void ng_http_conns_notify(void *cls, void *conn, void **socket_context, int toe)
{
	ng_http_server *s = cls;
	ng_http_conns *t = &s->conns;
	struct MHD_Connection *mc = conn;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		ng_http_conn *c = calloc(1, sizeof *c);
		const union MHD_ConnectionInfo *fd =
		    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ad =
		    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (!c || !fd) { /* not tracked: it lives by libmicrohttpd's limits only */
			free(c);
			return;
		}
		c->fd = fd->connect_fd;
		client_key(ad ? ad->client_addr : NULL, c->client, &c->family);
		c->idle_since = now_ms();
		pthread_mutex_lock(&t->mu);
		c->next = t->head;
		if (t->head)
			t->head->prev = c;
		t->head = c;
		t->open++;
		pthread_mutex_unlock(&t->mu);
		*socket_context = c;
		return;
	}
	ng_http_conn *c = *socket_context;
	if (!c)
		return;
	pthread_mutex_lock(&t->mu); /* before the descriptor is closed: see the top */
	if (c->prev)
		c->prev->next = c->next;
	else
		t->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (!c->closing)
		t->open--;
	pthread_mutex_unlock(&t->mu);
	*socket_context = NULL;
	free(c);
}

void ng_http_conns_busy(ng_http_server *s, void *conn, bool busy)
{
	ng_http_conn *c = entry_of(conn);
	if (!c)
		return;
	pthread_mutex_lock(&s->conns.mu);
	c->busy = busy;
	if (!busy)
		c->idle_since = now_ms();
	pthread_mutex_unlock(&s->conns.mu);
}

unsigned ng_http_conns_open(ng_http_server *s)
{
	pthread_mutex_lock(&s->conns.mu);
	unsigned n = s->conns.open;
	pthread_mutex_unlock(&s->conns.mu);
	return n;
}
