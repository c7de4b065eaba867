/*
 * state.c — the decoder's template state file.
 *
 * Lets a restarted collector decode data sets at once instead of waiting
 * (up to many minutes) for exporters to re-send templates.  Format, all
 * integers big-endian:
 *
 *   "NGDS" | format version u32 = 2 (1 is read too: no restart marks)
 *   u32 template count, then each template:
 *     exporter[16] | domain u32 | version u8 (9/10) | options u8 |
 *     template id u16 | scope count u16 | field count u16 |
 *     field count × (ie u16 | length u16 | enterprise number u32)
 *   u32 domain count, then each domain's options state:
 *     exporter[16] | domain u32 | default rate u32 | system init ms u64 |
 *     sampler count u8 | sampler count × (sampler id u64 | rate u32)
 *   (format 2) the restart marks (restart.c), the header of each domain's
 *   latest datagram: u32 count, then each:
 *     exporter[16] | domain u32 | version u8 | sequence u32 |
 *     uptime ms u32 | export time ms u64 | receive time ms u64
 *   and u32 the bytes of that section (its count included)
 *   u64 FNV-1a checksum of all the bytes before it
 *
 * The marks come last, after everything that changes only with templates
 * and options data: they change with every datagram, and the collector
 * tells whether the state changed, to write it again, by the bytes before
 * them (ng_decoder_state_stable_len).
 *
 * Saving writes PATH.tmp, fsyncs it and renames it over PATH, so PATH is
 * always a whole old or whole new file.  Loading reads and checks the
 * whole file before touching the decoder: a corrupt file changes nothing.
 *
 * Templates and domains are written most recently used first (the
 * decoder's recency lists, lru.h).  The file is bounded by the limits
 * that bound the decoder: a template is written in 31 + 8 × fields bytes
 * and counted in memory for more than that (tpl_cost in templates.c), so
 * the file stays under limits.template_bytes plus the domains' options
 * state (under 900 bytes each) — far under STATE_MAX_BYTES with the
 * defaults.  Loading appends each entry as the oldest (so the order
 * survives) and never evicts: with lower limits than the run that saved
 * it, the most recently used entries are the ones kept, and the rest are
 * counted (templates_evicted) and logged by the caller.
 *
 * The restart mark lets the first datagram after a start tell whether the
 * exporter restarted while the collector was down (restart.c): if it did
 * not, the saved templates decode at once; if it did, they are stale and
 * its data waits for them to be announced again.  A format 1 file has no
 * marks: its templates are trusted, as they were before marks existed.
 */
#include "core/file.h"
#include "decode/decode_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STATE_MAGIC "NGDS"
#define STATE_VERSION 2
#define STATE_VERSION_NOMARK 1
#define STATE_MAX_BYTES (256u << 20)

struct wbuf {
	uint8_t *p;
	size_t n, cap;
	bool oom;
};

static void put(struct wbuf *w, const void *src, size_t n)
{
	if (w->oom)
		return;
	if (w->n + n > w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 4096;
		while (cap < w->n + n)
			cap *= 2;
		uint8_t *p = realloc(w->p, cap);
		if (!p) {
			w->oom = true;
			return;
		}
		w->p = p;
		w->cap = cap;
	}
	memcpy(w->p + w->n, src, n);
	w->n += n;
}

static void put_u8(struct wbuf *w, uint8_t v)
{
	put(w, &v, 1);
}

static void put_u16(struct wbuf *w, uint16_t v)
{
	uint8_t b[2];
	ng_put_be16(b, v);
	put(w, b, 2);
}

static void put_u32(struct wbuf *w, uint32_t v)
{
	uint8_t b[4];
	ng_put_be32(b, v);
	put(w, b, 4);
}

static void put_u64(struct wbuf *w, uint64_t v)
{
	uint8_t b[8];
	ng_put_be64(b, v);
	put(w, b, 8);
}

/* One template's record (format above). */
static void put_template(struct wbuf *w, const struct ng_tpl *t)
{
	put(w, t->dom->st.exporter, 16);
	put_u32(w, t->dom->st.domain);
	put_u8(w, t->version);
	put_u8(w, t->options);
	put_u16(w, t->id);
	put_u16(w, t->scope_count);
	put_u16(w, t->nfields);
	for (uint16_t k = 0; k < t->nfields; k++) {
		put_u16(w, t->fields[k].ie);
		put_u16(w, t->fields[k].len);
		put_u32(w, t->fields[k].pen);
	}
}

/* The restart marks section (format above) of the domains that have one. */
static void put_marks(const ng_decoder *d, struct wbuf *w)
{
	size_t at = w->n;
	uint32_t count = 0;
	put_u32(w, 0);
	for (const struct ng_lru *n = d->dom_lru.next; n != &d->dom_lru; n = n->next) {
		const struct ng_domain *m = ng_lru_entry(n, const struct ng_domain, lru);
		if (!m->mark.version || m->session)
			continue; /* a session's marks end with it */
		put(w, m->st.exporter, 16);
		put_u32(w, m->st.domain);
		put_u8(w, m->mark.version);
		put_u32(w, m->mark.seq);
		put_u32(w, m->mark.uptime_ms);
		put_u64(w, m->mark.export_ms);
		put_u64(w, m->mark.received_ms);
		count++;
	}
	if (!w->oom)
		ng_put_be32(w->p + at, count);
	put_u32(w, (uint32_t)(w->n - at));
}

size_t ng_decoder_state_stable_len(const uint8_t *img, size_t len)
{
	if (len < 8 + 4 + 12 || memcmp(img, STATE_MAGIC, 4) || ng_get_be32(img + 4) < 2)
		return len;
	size_t marks = ng_get_be32(img + len - 12);
	return marks <= len - 8 - 12 ? len - 12 - marks : len;
}

/* Templates and domains of TCP/SCTP sessions, which the file leaves out:
 * they end with their session (RFC 7011 §8), a restart included. */
static void count_sessions(const ng_decoder *d, size_t *tpls, size_t *doms)
{
	*tpls = *doms = 0;
	for (const struct ng_lru *n = d->dom_lru.next; n != &d->dom_lru; n = n->next) {
		const struct ng_domain *m = ng_lru_entry(n, const struct ng_domain, lru);
		*doms += m->session != 0;
		*tpls += m->session ? m->ntpl : 0;
	}
}

static void serialize(const ng_decoder *d, struct wbuf *w)
{
	size_t stpl, sdom;
	count_sessions(d, &stpl, &sdom);
	put(w, STATE_MAGIC, 4);
	put_u32(w, STATE_VERSION);
	put_u32(w, (uint32_t)(d->templates.n - stpl));
	for (const struct ng_lru *n = d->tpl_lru.next; n != &d->tpl_lru; n = n->next)
		if (!ng_lru_entry(n, const struct ng_tpl, lru)->dom->session)
			put_template(w, ng_lru_entry(n, const struct ng_tpl, lru));
	put_u32(w, (uint32_t)(d->domains.n - sdom));
	for (const struct ng_lru *n = d->dom_lru.next; n != &d->dom_lru; n = n->next) {
		const struct ng_domain *m = ng_lru_entry(n, const struct ng_domain, lru);
		if (m->session)
			continue;
		put(w, m->st.exporter, 16);
		put_u32(w, m->st.domain);
		put_u32(w, m->default_rate);
		put_u64(w, m->sysinit_ms);
		put_u8(w, (uint8_t)m->nsamplers);
		for (unsigned k = 0; k < m->nsamplers; k++) {
			put_u64(w, m->samplers[k].id);
			put_u32(w, m->samplers[k].rate);
		}
	}
	put_marks(d, w);
	put_u64(w, ng_fnv1a64(NG_FNV64_INIT, w->p, w->n));
}

/* The state file image in a malloc'ed buffer (*out, *len), owned by the
 * caller.  Returns 0, or -1 with errno ENOMEM. */
int ng_decoder_save_mem(const ng_decoder *d, uint8_t **out, size_t *len)
{
	struct wbuf w = {0};
	serialize(d, &w);
	if (w.oom) {
		free(w.p);
		errno = ENOMEM;
		return -1;
	}
	*out = w.p;
	*len = w.n;
	return 0;
}

int ng_decoder_write_state(const char *path, const uint8_t *img, size_t len)
{
	return ng_replace_file(path, img, len);
}

int ng_decoder_save(const ng_decoder *d, const char *path)
{
	uint8_t *img;
	size_t len;
	if (ng_decoder_save_mem(d, &img, &len) != 0)
		return -1;
	int rc = ng_decoder_write_state(path, img, len);
	int err = errno;
	free(img);
	errno = err;
	return rc;
}

/* ---- loading ---- */

struct rbuf {
	const uint8_t *p;
	size_t n, o;
	bool bad;
};

static const uint8_t *take(struct rbuf *r, size_t n)
{
	if (r->bad || r->n - r->o < n) {
		r->bad = true;
		return NULL;
	}
	const uint8_t *q = r->p + r->o;
	r->o += n;
	return q;
}

static uint8_t get_u8(struct rbuf *r)
{
	const uint8_t *q = take(r, 1);
	return q ? q[0] : 0;
}

static uint16_t get_u16(struct rbuf *r)
{
	const uint8_t *q = take(r, 2);
	return q ? ng_get_be16(q) : 0;
}

static uint32_t get_u32(struct rbuf *r)
{
	const uint8_t *q = take(r, 4);
	return q ? ng_get_be32(q) : 0;
}

static uint64_t get_u64(struct rbuf *r)
{
	const uint8_t *q = take(r, 8);
	return q ? ng_get_be64(q) : 0;
}

/* Whether the entries of exporter `addr` are loaded into d. */
static bool kept(const ng_decoder *d, const uint8_t *addr)
{
	return !d->load_keep || d->load_keep(addr, d->load_arg);
}

/* Walks the restart marks section (format 2); with `d` NULL only
 * validates.  Returns false on malformed content. */
static bool walk_marks(struct rbuf *r, ng_decoder *d)
{
	size_t at = r->o;
	uint32_t nm = get_u32(r);
	for (uint32_t i = 0; i < nm && !r->bad; i++) {
		const uint8_t *addr = take(r, 16);
		uint32_t domain = get_u32(r);
		struct ng_rmark k = {.version = get_u8(r)};
		k.seq = get_u32(r);
		k.uptime_ms = get_u32(r);
		k.export_ms = get_u64(r);
		k.received_ms = get_u64(r);
		if (r->bad)
			return false;
		struct ng_domain *dom = d && kept(d, addr) ? ng_domain_get(d, addr, domain) : NULL;
		if (dom)
			dom->mark = k;
	}
	size_t bytes = r->o - at;
	return get_u32(r) == bytes && !r->bad;
}

/* Walks the body of a file of format `fmt`; with `d` NULL only validates,
 * else applies.  Returns false on malformed content (only possible when
 * validating). */
static bool walk_state(struct rbuf *r, uint32_t fmt, ng_decoder *d)
{
	uint32_t nt = get_u32(r);
	for (uint32_t i = 0; i < nt && !r->bad; i++) {
		const uint8_t *addr = take(r, 16);
		uint32_t domain = get_u32(r);
		uint8_t version = get_u8(r), options = get_u8(r);
		uint16_t tid = get_u16(r), scope = get_u16(r), nf = get_u16(r);
		if (r->bad || (version != 9 && version != 10) || options > 1 || tid < 256 ||
		    nf == 0 || nf > NG_MAX_FIELDS || scope > nf)
			return false;
		const uint8_t *fp = take(r, (size_t)nf * 8);
		if (!fp)
			return false;
		if (!d || !kept(d, addr))
			continue;
		for (uint16_t k = 0; k < nf; k++) {
			d->scratch[k].ie = ng_get_be16(fp + k * 8);
			d->scratch[k].len = ng_get_be16(fp + k * 8 + 2);
			d->scratch[k].pen = ng_get_be32(fp + k * 8 + 4);
		}
		struct ng_domain *dom = ng_domain_get(d, addr, domain);
		if (!dom || ng_tpl_add(d, dom, version, tid, options, scope, d->scratch, nf))
			d->lim.templates_evicted++; /* past a limit: not loaded */
	}
	uint32_t nd = get_u32(r);
	for (uint32_t i = 0; i < nd && !r->bad; i++) {
		const uint8_t *addr = take(r, 16);
		uint32_t domain = get_u32(r), rate = get_u32(r);
		uint64_t sysinit = get_u64(r);
		uint8_t ns = get_u8(r);
		if (r->bad || ns > NG_MAX_SAMPLERS)
			return false;
		const uint8_t *sp = take(r, (size_t)ns * 12);
		if (!sp)
			return false;
		if (!d || !kept(d, addr))
			continue;
		struct ng_domain *dom = ng_domain_get(d, addr, domain);
		if (!dom)
			continue;
		dom->default_rate = rate;
		dom->sysinit_ms = sysinit;
		dom->nsamplers = ns;
		for (unsigned k = 0; k < ns; k++) {
			dom->samplers[k].id = ng_get_be64(sp + k * 12);
			dom->samplers[k].rate = ng_get_be32(sp + k * 12 + 8);
		}
	}
	if (fmt >= 2 && !r->bad && !walk_marks(r, d))
		return false;
	return !r->bad && r->o == r->n;
}

static int read_file(const char *path, uint8_t **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size < 0 || (uint64_t)st.st_size > STATE_MAX_BYTES) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	size_t n = (size_t)st.st_size, got = 0;
	uint8_t *p = malloc(n ? n : 1);
	if (!p) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	while (got < n) {
		ssize_t k = read(fd, p + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	*out = p;
	*len = got;
	return 0;
}

int ng_decoder_load(ng_decoder *d, const char *path)
{
	uint8_t *p;
	size_t n;
	if (read_file(path, &p, &n) != 0)
		return errno == ENOENT ? 0 : -1;
	int rc = ng_decoder_load_mem(d, p, n);
	free(p);
	return rc;
}

int ng_decoder_load_some(ng_decoder *d, const char *path,
                         bool (*keep)(const uint8_t addr[16], void *arg), void *arg)
{
	d->load_keep = keep;
	d->load_arg = arg;
	int rc = ng_decoder_load(d, path);
	d->load_keep = NULL;
	d->load_arg = NULL;
	return rc;
}

/* Loads state from a buffer holding a whole state file (used by
 * ng_decoder_load and the fuzzer).  Returns 0, or -1 with errno EINVAL
 * when the bytes are not a valid state file (the decoder is unchanged). */
int ng_decoder_load_mem(ng_decoder *d, const uint8_t *p, size_t n)
{
	uint32_t fmt = n >= 16 ? ng_get_be32(p + 4) : 0;
	if (n < 16 || memcmp(p, STATE_MAGIC, 4) ||
	    (fmt != STATE_VERSION && fmt != STATE_VERSION_NOMARK) ||
	    ng_fnv1a64(NG_FNV64_INIT, p, n - 8) != ng_get_be64(p + n - 8)) {
		errno = EINVAL;
		return -1;
	}
	struct rbuf r = {.p = p + 8, .n = n - 16};
	if (!walk_state(&r, fmt, NULL)) {
		errno = EINVAL;
		return -1;
	}
	struct rbuf a = {.p = p + 8, .n = n - 16};
	d->loading = true;
	walk_state(&a, fmt, d);
	d->loading = false;
	d->last_dom = NULL;
	return 0;
}
