/*
 * ptr.c — host names of addresses at display time (see ptr.h).
 *
 * Why res_nquery on a few threads (and not getnameinfo or getaddrinfo_a):
 * a PTR record's TTL is wanted for the cache, and getnameinfo hides it;
 * getaddrinfo_a looks names up, not addresses; a configured server
 * (the one the user names, not the system's) needs a resolver state of
 * our own, which res_ninit gives per thread (thread-safe, unlike
 * res_query's global one).  The answer is parsed here (ng_ptr_parse,
 * fuzzed), so the TTL and the name come from the record itself.  The
 * price: /etc/hosts and nsswitch are not consulted (PTR records only).
 *
 *   request thread                 lookup threads (NG_PTR_WORKERS)
 *   ng_ptr_resolve:                 wait for a queued address
 *     cache hit: the name           take a token (NG_PTR_RATE a second)
 *     miss: queue it (bounded)      res_nquery "d.c.b.a.in-addr.arpa" PTR
 *     wait for them, budget_ms      parse, cache name + TTL (or a miss)
 *     at most, then answer          wake the waiting requests
 *
 * One mutex over the cache and the queue; no thread holds it across a
 * lookup.  A request never waits past its budget whatever the resolver
 * does: a server that does not answer only keeps the lookup threads busy
 * (each lookup bounded by two tries of NG_PTR_TIMEOUT_MS), the queue
 * fills, and further addresses are shown as addresses (counted refused).
 *
 * The cache: open addressing over a window of 8 slots per address; a
 * full window gives up its entry that expires first.  Misses (NXDOMAIN,
 * no PTR) are cached NG_PTR_NEG_TTL_S, failures NG_PTR_FAIL_TTL_S.
 */
#include "query/ptr.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <resolv.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/addr.h"
#include "core/field.h"
#include "core/json.h"
#include "core/timefmt.h"

#define WINDOW 8

enum { EMPTY, PENDING, DONE };

struct cent {
	uint8_t a[16];
	uint8_t state;
	uint64_t expires_ms;
	char name[NG_PTR_NAME_MAX]; /* "" none */
};

struct ng_ptr {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct cent *c;
	size_t cap; /* power of two */
	uint8_t q[NG_PTR_QUEUE][16];
	size_t qh, qn;
	bool stop;
	pthread_t th[NG_PTR_WORKERS];
	unsigned nth;
	struct sockaddr_in server;
	bool has_server;
	double tokens;
	uint64_t tok_ms;
	uint64_t sent, named, failed, refused;
};

/* ---- parsing an answer (RFC 1035 §4.1) ----------------------------------- */

static unsigned be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* Moves *off past the name there (§4.1.4: labels, ending in a zero or a
 * pointer).  -1 when it runs off the message or has a reserved label type. */
static int skip_name(const uint8_t *m, size_t len, size_t *off)
{
	size_t o = *off;
	for (;;) {
		if (o >= len)
			return -1;
		unsigned l = m[o];
		if ((l & 0xC0) == 0xC0) {
			if (o + 2 > len)
				return -1;
			*off = o + 2;
			return 0;
		}
		if (l & 0xC0) /* 0x40, 0x80: reserved (RFC 6891 §5) */
			return -1;
		o += 1 + l;
		if (!l) {
			*off = o;
			return 0;
		}
	}
}

/* The name at off, pointers followed (at most 32: a loop is malformed),
 * as dotted text into out[outlen].  -1 when malformed or too long. */
static int read_name(const uint8_t *m, size_t len, size_t off, char *out, size_t outlen)
{
	size_t n = 0;
	for (int jumps = 0; jumps <= 32;) {
		if (off >= len)
			return -1;
		unsigned l = m[off];
		if ((l & 0xC0) == 0xC0) {
			if (off + 2 > len)
				return -1;
			off = (l & 0x3F) << 8 | m[off + 1];
			jumps++;
			continue;
		}
		if (l & 0xC0)
			return -1;
		if (!l) {
			if (n && out[n - 1] == '.')
				n--;
			out[n] = 0;
			return 0;
		}
		if (off + 1 + l > len || n + l + 2 > outlen || n + l + 1 > 254)
			return -1;
		for (unsigned i = 0; i < l; i++) {
			uint8_t ch = m[off + 1 + i];
			bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			          (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
			out[n++] = ok ? (char)ch : '?';
		}
		out[n++] = '.';
		off += 1 + l;
	}
	return -1;
}

int ng_ptr_parse(const uint8_t *msg, size_t len, char *name, size_t namelen, uint32_t *ttl)
{
	if (len < 12 || namelen < 2 || !(msg[2] & 0x80)) /* QR: a response */
		return -1;
	unsigned qd = be16(msg + 4), an = be16(msg + 6);
	size_t off = 12;
	for (unsigned i = 0; i < qd; i++) {
		if (skip_name(msg, len, &off) < 0 || off + 4 > len)
			return -1;
		off += 4; /* QTYPE, QCLASS */
	}
	for (unsigned i = 0; i < an; i++) {
		if (skip_name(msg, len, &off) < 0 || off + 10 > len)
			return -1;
		unsigned type = be16(msg + off), cls = be16(msg + off + 2);
		uint32_t t = (uint32_t)msg[off + 4] << 24 | (uint32_t)msg[off + 5] << 16 |
		             (uint32_t)msg[off + 6] << 8 | msg[off + 7];
		size_t rdlen = be16(msg + off + 8);
		off += 10;
		if (off + rdlen > len)
			return -1;
		if (type == ns_t_ptr && cls == ns_c_in) {
			if (read_name(msg, len, off, name, namelen) < 0)
				return -1;
			*ttl = t & 0x80000000u ? 0 : t; /* RFC 2181 §8: the top bit set is 0 */
			return name[0] ? 1 : 0;
		}
		off += rdlen;
	}
	return 0;
}

/* ---- the cache (mu held) -------------------------------------------------- */

static size_t hash(const uint8_t a[16])
{
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < 16; i++)
		h = (h ^ a[i]) * 1099511628211ull;
	return (size_t)(h ^ h >> 31);
}

static struct cent *find(ng_ptr *p, const uint8_t a[16])
{
	size_t h = hash(a);
	for (size_t i = 0; i < WINDOW; i++) {
		struct cent *e = &p->c[(h + i) & (p->cap - 1)];
		if (e->state != EMPTY && !memcmp(e->a, a, 16))
			return e;
	}
	return NULL;
}

/* A slot for a: an empty one of its window, else the one expiring first
 * (pending ones last). */
static struct cent *place(ng_ptr *p, const uint8_t a[16])
{
	size_t h = hash(a);
	struct cent *best = NULL;
	for (size_t i = 0; i < WINDOW; i++) {
		struct cent *e = &p->c[(h + i) & (p->cap - 1)];
		if (e->state == EMPTY)
			return e;
		if (!best || (best->state == PENDING && e->state == DONE) ||
		    (e->state == best->state && e->expires_ms < best->expires_ms))
			best = e;
	}
	return best;
}

/* ---- lookups (lookup threads) --------------------------------------------- */

/* The reverse name of a: "4.3.2.1.in-addr.arpa" or the ip6.arpa nibbles. */
static void reverse_name(const uint8_t a[16], char *out, size_t len)
{
	if (ng_addr_is_v4(a)) {
		snprintf(out, len, "%u.%u.%u.%u.in-addr.arpa", a[15], a[14], a[13], a[12]);
		return;
	}
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	for (int i = 15; i >= 0; i--) {
		out[n++] = hex[a[i] & 15];
		out[n++] = '.';
		out[n++] = hex[a[i] >> 4];
		out[n++] = '.';
	}
	snprintf(out + n, len - n, "ip6.arpa");
}

/* Waits for a token of the rate (mu held; released while sleeping). */
static void take_token(ng_ptr *p)
{
	for (;;) {
		uint64_t now = ng_now_ms();
		p->tokens += (double)(now - p->tok_ms) * NG_PTR_RATE / 1000.0;
		if (p->tokens > NG_PTR_RATE)
			p->tokens = NG_PTR_RATE;
		p->tok_ms = now;
		if (p->tokens >= 1 || p->stop) {
			p->tokens -= 1;
			return;
		}
		pthread_mutex_unlock(&p->mu);
		struct timespec ts = {0, (long)(1e9 / NG_PTR_RATE)};
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&p->mu);
	}
}

static void *lookup_thread(void *arg)
{
	ng_ptr *p = arg;
	struct __res_state rs;
	memset(&rs, 0, sizeof rs);
	bool ok = res_ninit(&rs) == 0;
	if (ok && p->has_server) {
		rs.nsaddr_list[0] = p->server;
		rs.nscount = 1;
	}
	rs.retrans = NG_PTR_TIMEOUT_MS / 1000; /* seconds, per try */
	rs.retry = 2;                          /* tries (glibc res_send) */
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && !p->qn)
			pthread_cond_wait(&p->work, &p->mu);
		if (p->stop)
			break;
		uint8_t a[16];
		memcpy(a, p->q[p->qh], 16);
		p->qh = (p->qh + 1) % NG_PTR_QUEUE;
		p->qn--;
		take_token(p);
		p->sent++;
		pthread_mutex_unlock(&p->mu);
		char q[80], name[NG_PTR_NAME_MAX] = "";
		reverse_name(a, q, sizeof q);
		uint8_t ans[4096];
		uint32_t ttl = NG_PTR_FAIL_TTL_S;
		int n = ok ? res_nquery(&rs, q, ns_c_in, ns_t_ptr, ans, sizeof ans) : -1;
		int got = -1;
		if (n > 0) {
			got = ng_ptr_parse(ans, (size_t)n, name, sizeof name, &ttl);
			if (got == 0)
				ttl = NG_PTR_NEG_TTL_S;
		} else if (ok && (rs.res_h_errno == HOST_NOT_FOUND || rs.res_h_errno == NO_DATA)) {
			got = 0;
			ttl = NG_PTR_NEG_TTL_S;
		}
		if (got != 1)
			name[0] = 0;
		if (ttl > NG_PTR_MAX_TTL_S)
			ttl = NG_PTR_MAX_TTL_S;
		pthread_mutex_lock(&p->mu);
		p->named += got == 1;
		p->failed += got < 0;
		struct cent *e = find(p, a);
		if (!e)
			e = place(p, a);
		memcpy(e->a, a, 16);
		e->state = DONE;
		e->expires_ms = ng_now_ms() + (uint64_t)ttl * 1000;
		memcpy(e->name, name, sizeof name);
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	if (ok)
		res_nclose(&rs);
	return NULL;
}

/* ---- the interface ------------------------------------------------------- */

ng_ptr *ng_ptr_new(const char *server, char *err, size_t errlen)
{
	ng_ptr *p = calloc(1, sizeof *p);
	size_t cap = 1;
	while (cap < NG_PTR_CACHE)
		cap <<= 1;
	if (!p || !(p->c = calloc(cap, sizeof *p->c))) {
		free(p);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->cap = cap;
	if (server && strcmp(server, "system")) {
		char host[64];
		unsigned port = 53;
		const char *colon = strchr(server, ':');
		size_t hl = colon ? (size_t)(colon - server) : strlen(server);
		char *end = NULL;
		if (colon)
			port = (unsigned)strtoul(colon + 1, &end, 10);
		if (hl >= sizeof host || (colon && (*end || !port || port > 65535))) {
			snprintf(err, errlen,
			         "PTR server '%s': give system, ADDR or ADDR:PORT (IPv4)", server);
			free(p->c);
			free(p);
			return NULL;
		}
		memcpy(host, server, hl);
		host[hl] = 0;
		p->server.sin_family = AF_INET;
		p->server.sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, host, &p->server.sin_addr) != 1) {
			snprintf(err, errlen,
			         "PTR server '%s': give system, ADDR or ADDR:PORT (IPv4)", server);
			free(p->c);
			free(p);
			return NULL;
		}
		p->has_server = true;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	p->tokens = NG_PTR_RATE;
	p->tok_ms = ng_now_ms();
	for (; p->nth < NG_PTR_WORKERS; p->nth++)
		if (pthread_create(&p->th[p->nth], NULL, lookup_thread, p))
			break;
	if (!p->nth) {
		snprintf(err, errlen, "cannot start the PTR lookup threads");
		ng_ptr_free(p);
		return NULL;
	}
	return p;
}

void ng_ptr_free(ng_ptr *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->nth; i++)
		pthread_join(p->th[i], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	free(p->c);
	free(p);
}

/* Whether every address asked has its answer (mu held). */
static bool all_done(ng_ptr *p, const uint8_t (*addrs)[16], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct cent *e = find(p, addrs[i]);
		if (e && e->state == PENDING)
			return false;
	}
	return true;
}

size_t ng_ptr_resolve(ng_ptr *p, const uint8_t (*addrs)[16], size_t n, unsigned budget_ms,
                      char (*names)[NG_PTR_NAME_MAX])
{
	if (budget_ms > NG_PTR_BUDGET_MAX_MS)
		budget_ms = NG_PTR_BUDGET_MAX_MS;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += budget_ms / 1000;
	dl.tv_nsec += (long)(budget_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&p->mu);
	uint64_t now = ng_now_ms();
	for (size_t i = 0; i < n; i++) {
		struct cent *e = find(p, addrs[i]);
		if (e && (e->state == PENDING || e->expires_ms > now))
			continue;
		if (p->qn >= NG_PTR_QUEUE) {
			p->refused++;
			continue;
		}
		if (!e)
			e = place(p, addrs[i]);
		memcpy(e->a, addrs[i], 16);
		e->state = PENDING;
		e->expires_ms = 0;
		memcpy(p->q[(p->qh + p->qn) % NG_PTR_QUEUE], addrs[i], 16);
		p->qn++;
		pthread_cond_signal(&p->work);
	}
	while (!all_done(p, addrs, n))
		if (pthread_cond_timedwait(&p->done, &p->mu, &dl))
			break; /* the budget is spent */
	size_t named = 0;
	for (size_t i = 0; i < n; i++) {
		const struct cent *e = find(p, addrs[i]);
		names[i][0] = 0;
		if (e && e->state == DONE && e->name[0]) {
			memcpy(names[i], e->name, NG_PTR_NAME_MAX);
			named++;
		}
	}
	pthread_mutex_unlock(&p->mu);
	return named;
}

void ng_ptr_counts(ng_ptr *p, uint64_t *sent, uint64_t *named, uint64_t *failed, uint64_t *refused)
{
	pthread_mutex_lock(&p->mu);
	*sent = p->sent;
	*named = p->named;
	*failed = p->failed;
	*refused = p->refused;
	pthread_mutex_unlock(&p->mu);
}

/* ---- a result's addresses ------------------------------------------------ */

static size_t add_addr(uint8_t (*out)[16], size_t n, size_t max, const uint8_t *a)
{
	for (size_t i = 0; i < n; i++)
		if (!memcmp(out[i], a, 16))
			return n;
	if (n < max)
		memcpy(out[n++], a, 16);
	return n;
}

size_t ng_ptr_addresses(const ng_query *q, const ng_query_result *res, uint8_t (*out)[16],
                        size_t max)
{
	size_t n = 0;
	if (!q->nkeys) {
		for (size_t i = 0; i < res->nflows; i++) {
			n = add_addr(out, n, max, res->flows[i].src_addr);
			n = add_addr(out, n, max, res->flows[i].dst_addr);
		}
		return n;
	}
	for (size_t i = 0; i < res->nrows; i++) {
		size_t off = 0;
		for (size_t j = 0; j < q->nkeys; j++) {
			const ng_field *f = &ng_fields[q->keys[j].field];
			if (f->type == NG_FT_ADDR && !q->keys[j].plen4 && !q->keys[j].plen6)
				n = add_addr(out, n, max, res->rows[i].key + off);
			off += f->size;
		}
	}
	return n;
}

void ng_ptr_put_json(FILE *f, const uint8_t (*addrs)[16], char (*names)[NG_PTR_NAME_MAX], size_t n)
{
	fputs("\"names\":{", f);
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (!names[i][0])
			continue;
		char a[NG_ADDR_STRLEN];
		if (!first)
			fputc(',', f);
		first = false;
		ng_json_put_str(f, ng_addr_format(addrs[i], a));
		fputc(':', f);
		ng_json_put_str(f, names[i]);
	}
	fputc('}', f);
}
