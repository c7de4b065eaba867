/*
 * decoder.c — protocol dispatch, exporter/domain state and counters.
 *
 * A datagram's first bytes tell its protocol:
 *   - 16-bit version 1, 5 or 7: NetFlow v1/v5/v7 (netflow_v5.c);
 *   - 16-bit version 9: NetFlow v9, RFC 3954 §5.1 (netflow_v9.c);
 *   - 16-bit version 10: IPFIX, RFC 7011 §3.1 (ipfix.c);
 *   - 32-bit version 5 (00 00 00 05): sFlow v5 (sflow.org sFlow v5 §"sFlow
 *     Datagram"), sflow.c.
 * Anything else is counted as UNKNOWN_VERSION for the exporter.
 */
#include "decode/decode_int.h"
#include "decode/sflow.h"

#include <stdlib.h>
#include <string.h>

static const char *const err_names[NG_DERR_COUNT] = {
#define X(id, name, doc) name,
    NG_DECODE_ERRORS(X)
#undef X
};

static const char *const err_docs[NG_DERR_COUNT] = {
#define X(id, name, doc) doc,
    NG_DECODE_ERRORS(X)
#undef X
};

const char *ng_decode_error_name(enum ng_decode_error e)
{
	return (unsigned)e < NG_DERR_COUNT ? err_names[e] : "unknown";
}

const char *ng_decode_error_doc(enum ng_decode_error e)
{
	return (unsigned)e < NG_DERR_COUNT ? err_docs[e] : "unknown error";
}

/* ---- hash table ---- */

int ng_htab_init(struct ng_htab *t, size_t nb)
{
	t->b = calloc(nb, sizeof *t->b);
	t->nb = nb;
	t->n = 0;
	return t->b ? 0 : -1;
}

static void htab_grow(struct ng_htab *t)
{
	size_t nb = t->nb * 2;
	struct ng_hnode **b = calloc(nb, sizeof *b);
	if (!b)
		return; /* keep chaining in the old table */
	for (size_t i = 0; i < t->nb; i++) {
		struct ng_hnode *e = t->b[i], *next;
		for (; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (nb - 1)];
			b[e->hash & (nb - 1)] = e;
		}
	}
	free(t->b);
	t->b = b;
	t->nb = nb;
}

void ng_htab_insert(struct ng_htab *t, struct ng_hnode *e)
{
	if (t->n >= t->nb)
		htab_grow(t);
	struct ng_hnode **slot = &t->b[e->hash & (t->nb - 1)];
	e->next = *slot;
	*slot = e;
	t->n++;
}

void ng_htab_remove(struct ng_htab *t, struct ng_hnode *e)
{
	struct ng_hnode **pp = &t->b[e->hash & (t->nb - 1)];
	for (; *pp; pp = &(*pp)->next) {
		if (*pp == e) {
			*pp = e->next;
			t->n--;
			return;
		}
	}
}

/* ---- decoder ---- */

ng_decoder *ng_decoder_new(const ng_decoder_config *cfg)
{
	ng_decoder *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	if (cfg)
		d->cfg = *cfg;
	ng_limits_fill(&d->cfg.limits);
	if (!d->cfg.held_max_bytes)
		d->cfg.held_max_bytes = d->cfg.limits.held_bytes_per_exporter;
	if (!d->cfg.held_max_age)
		d->cfg.held_max_age = 60000;
	ng_lru_init(&d->ex_lru);
	ng_lru_init(&d->dom_lru);
	ng_lru_init(&d->tpl_lru);
	ng_lru_init(&d->held_all);
	d->others.domain = NG_OTHERS_DOMAIN;
	d->others.version = NG_OTHERS_VERSION;
	d->scratch = malloc(NG_MAX_FIELDS * sizeof *d->scratch);
	if (!d->scratch || ng_htab_init(&d->exporters, 64) || ng_htab_init(&d->domains, 64) ||
	    ng_htab_init(&d->templates, 256) || ng_htab_init(&d->ents, 64)) {
		ng_decoder_free(d);
		return NULL;
	}
	return d;
}

void ng_decoder_free(ng_decoder *d)
{
	if (!d)
		return;
	ng_tpl_free_all(d);
	ng_held_free_all(d);
	ng_sflow_free(d);
	ng_ifq_free(d);
	while (!ng_lru_empty(&d->dom_lru)) {
		struct ng_lru *n = d->dom_lru.next;
		ng_lru_unlink(n);
		ng_apps_free(d, ng_lru_entry(n, struct ng_domain, lru));
		free(ng_lru_entry(n, struct ng_domain, lru));
	}
	while (!ng_lru_empty(&d->ex_lru)) {
		struct ng_lru *n = d->ex_lru.next;
		ng_lru_unlink(n);
		free(ng_lru_entry(n, struct ng_exporter, lru));
	}
	for (size_t i = 0; d->ents.b && i < d->ents.nb; i++) {
		for (struct ng_hnode *e = d->ents.b[i], *n; e; e = n) {
			n = e->next;
			free(e);
		}
	}
	free(d->exporters.b);
	free(d->domains.b);
	free(d->templates.b);
	free(d->ents.b);
	free(d->scratch);
	free(d);
}

/* ---- eviction ---- */

/* Drops domain `m`: its templates and held sets first (counted in its
 * counters), then its counters go into d->others, and it is counted as
 * evicted.  Its exporter stays (the caller frees an exporter left with
 * no domain when it is not the one being added to). */
static void domain_evict(ng_decoder *d, struct ng_domain *m)
{
	ng_domain_drop_state(d, m);
	ng_exporter_stats_add(&d->others, &m->st);
	d->lim.domains_evicted++;
	ng_htab_remove(&d->domains, &m->h);
	ng_lru_unlink(&m->lru);
	ng_lru_unlink(&m->ex_lru);
	m->ex->ndom--;
	m->ex->sessions -= m->session != 0;
	if (d->last_dom == m)
		d->last_dom = NULL;
	free(m);
}

/* Frees exporter `e`, which has no domain left (so no held set either). */
static void exporter_free(ng_decoder *d, struct ng_exporter *e)
{
	ng_htab_remove(&d->exporters, &e->h);
	ng_lru_unlink(&e->lru);
	free(e);
}

/* Drops the least recently seen exporter with all its domains
 * (limits.exporters). */
static void exporter_evict_oldest(ng_decoder *d)
{
	struct ng_lru *n = ng_lru_oldest(&d->ex_lru);
	if (!n)
		return;
	struct ng_exporter *e = ng_lru_entry(n, struct ng_exporter, lru);
	while (!ng_lru_empty(&e->doms))
		domain_evict(d, ng_lru_entry(e->doms.prev, struct ng_domain, ex_lru));
	d->lim.exporters_evicted++;
	exporter_free(d, e);
}

/* Makes room for one more domain of `ex`: evicts ex's least recently seen
 * domain when ex holds limits.domains_per_exporter, else the least
 * recently seen of all when limits.domains are held (and its exporter if
 * that leaves it none, unless it is `ex`).  False when loading a state
 * file and full (loading never evicts what it loaded). */
static bool domain_room(ng_decoder *d, struct ng_exporter *ex)
{
	const ng_limits *l = &d->cfg.limits;
	if (ex->ndom >= l->domains_per_exporter) {
		if (d->loading)
			return false;
		domain_evict(d, ng_lru_entry(ex->doms.prev, struct ng_domain, ex_lru));
	}
	if (d->domains.n >= l->domains) {
		if (d->loading)
			return false;
		struct ng_domain *m = ng_lru_entry(d->dom_lru.prev, struct ng_domain, lru);
		struct ng_exporter *owner = m->ex;
		domain_evict(d, m);
		if (owner != ex && !owner->ndom)
			exporter_free(d, owner);
	}
	return true;
}

/* ---- lookup ---- */

static struct ng_exporter *exporter_get(ng_decoder *d, const uint8_t addr[16])
{
	uint64_t h = ng_hash_bytes(addr, 16, 1);
	for (struct ng_hnode *n = ng_htab_first(&d->exporters, h); n; n = n->next) {
		struct ng_exporter *e = (struct ng_exporter *)n;
		if (n->hash == h && !memcmp(e->addr, addr, 16))
			return e;
	}
	if (d->exporters.n >= d->cfg.limits.exporters) {
		if (d->loading)
			return NULL;
		exporter_evict_oldest(d);
	}
	struct ng_exporter *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	memcpy(e->addr, addr, 16);
	e->h.hash = h;
	e->held_tail = &e->held;
	ng_lru_init(&e->doms);
	ng_htab_insert(&d->exporters, &e->h);
	if (d->loading)
		ng_lru_push_back(&d->ex_lru, &e->lru);
	else
		ng_lru_push_front(&d->ex_lru, &e->lru);
	return e;
}

static uint64_t domain_hash(const uint8_t addr[16], uint32_t domain)
{
	uint8_t k[20];
	memcpy(k, addr, 16);
	memcpy(k + 16, &domain, 4);
	return ng_hash_bytes(k, sizeof k, 2);
}

/* A new domain of `ex`, within the limits (domain_room). */
static struct ng_domain *domain_new(ng_decoder *d, struct ng_exporter *ex, uint64_t h,
                                    uint32_t domain)
{
	if (!domain_room(d, ex)) {
		if (!ex->ndom)
			exporter_free(d, ex);
		return NULL;
	}
	struct ng_domain *m = calloc(1, sizeof *m);
	if (!m) {
		if (!ex->ndom)
			exporter_free(d, ex);
		return NULL;
	}
	memcpy(m->st.exporter, ex->addr, 16);
	m->st.domain = domain;
	m->ex = ex;
	m->h.hash = h;
	ng_lru_init(&m->tpls);
	ng_htab_insert(&d->domains, &m->h);
	ex->ndom++;
	if (d->loading) {
		ng_lru_push_back(&d->dom_lru, &m->lru);
		ng_lru_push_back(&ex->doms, &m->ex_lru);
	} else {
		ng_lru_push_front(&d->dom_lru, &m->lru);
		ng_lru_push_front(&ex->doms, &m->ex_lru);
		ng_lru_touch(&d->ex_lru, &ex->lru);
	}
	return m;
}

/* The state of (exporter address, observation domain, transport
 * session: d->session, 0 outside ng_decode), created on first use
 * (evicting the least recently seen when a limit is reached), and marked
 * as just seen.  NULL when out of memory (or, loading a state file, past
 * a limit). */
struct ng_domain *ng_domain_get(ng_decoder *d, const uint8_t addr[16], uint32_t domain)
{
	struct ng_domain *c = d->last_dom;
	const uint32_t session = d->session;
	if (c && c->st.domain == domain && c->session == session &&
	    !memcmp(c->st.exporter, addr, 16)) {
		if (ng_likely(!d->loading))
			ng_domain_touch(d, c);
		return c;
	}
	/* session 0 (UDP) hashes as it always did */
	uint64_t h = domain_hash(addr, domain) ^ (uint64_t)session * 0x9e3779b97f4a7c15ULL;
	for (struct ng_hnode *n = ng_htab_first(&d->domains, h); n; n = n->next) {
		struct ng_domain *m = (struct ng_domain *)n;
		if (n->hash == h && m->st.domain == domain && m->session == session &&
		    !memcmp(m->st.exporter, addr, 16)) {
			if (!d->loading)
				ng_domain_touch(d, m);
			return d->last_dom = m;
		}
	}
	struct ng_exporter *ex = exporter_get(d, addr);
	if (!ex)
		return NULL;
	struct ng_domain *m = domain_new(d, ex, h, domain);
	if (m && session) {
		m->session = session;
		ex->sessions++;
	}
	return m ? (d->last_dom = m) : NULL;
}

void ng_decoder_count(ng_decoder *d, const uint8_t addr[16], uint32_t domain,
                      enum ng_exporter_counter_id id, uint64_t n)
{
	struct ng_domain *dom = ng_domain_get(d, addr, domain);
	if (dom)
		ng_exporter_counter_set(&dom->st, id, ng_exporter_counter_get(&dom->st, id) + n);
}

void ng_count_error(struct ng_domain *dom, enum ng_decode_error e)
{
	if (dom)
		dom->st.errors[e]++;
}

/*
 * Sequence-number rule shared by every protocol.  `seq` is the header's
 * sequence number, `advance` how much this message moves it on (1 packet
 * in v9, RFC 3954 §5.1 "incremental sequence counter of all Export Packets";
 * the number of data records in v5 and IPFIX, RFC 7011 §3.1 "of all IPFIX
 * Data Records sent ... prior to the receipt of this message").  With d =
 * seq - expected taken as a signed 32-bit difference (so wrap at 2^32 is
 * free):
 *   d == 0                 in order;
 *   0 < d <= max_gap       d packets/records lost;
 *   -max_gap <= d < 0      a late (reordered) or duplicate message: the
 *                          loss counted when it was skipped is taken back,
 *                          expected is unchanged;
 *   otherwise              the exporter restarted (or was down for long):
 *                          resynchronise, count nothing.
 * Returns the loss added (0 when none).
 */
uint64_t ng_seq_check(struct ng_seq *s, uint32_t seq, uint32_t advance, uint32_t max_gap,
                      uint64_t *lost)
{
	if (!s->valid) {
		s->valid = true;
		s->next = seq + advance;
		return 0;
	}
	int32_t dlt = (int32_t)(seq - s->next);
	if (dlt == 0) {
		s->next = seq + advance;
		return 0;
	}
	if (dlt > 0 && (uint32_t)dlt <= max_gap) {
		*lost += (uint32_t)dlt;
		s->next = seq + advance;
		return (uint32_t)dlt;
	}
	if (dlt < 0 && (uint32_t) - (int64_t)dlt <= max_gap) {
		uint64_t back = advance < *lost ? advance : *lost;
		*lost -= back;
		return 0;
	}
	s->next = seq + advance;
	return 0;
}

/* Counter of an enterprise-specific element; NULL when the table is full
 * (bounded so hostile templates cannot grow it without limit). */
uint64_t *ng_ent_counter(ng_decoder *d, uint32_t pen, uint16_t ie)
{
	uint64_t h = ((uint64_t)pen << 16 | ie) * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 29;
	for (struct ng_hnode *n = ng_htab_first(&d->ents, h); n; n = n->next) {
		struct ng_ent *e = (struct ng_ent *)n;
		if (n->hash == h && e->pen == pen && e->ie == ie)
			return &e->count;
	}
	if (d->ents.n >= 4096) {
		d->lim.enterprise_untracked++;
		return NULL;
	}
	struct ng_ent *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->pen = pen;
	e->ie = ie;
	e->h.hash = h;
	ng_htab_insert(&d->ents, &e->h);
	return &e->count;
}

/* Counts one export message of `len` bytes from `dg` in `dom`. */
void ng_domain_seen(struct ng_domain *dom, const ng_datagram *dg, size_t len, uint8_t version)
{
	dom->st.packets++;
	dom->st.bytes += len;
	dom->st.version = version;
	if (dom->seq.version != version) {
		/* sequence numbers of different protocols are unrelated */
		dom->seq.valid = false;
		dom->seq.version = version;
	}
	if (!dom->st.first_seen)
		dom->st.first_seen = dg->time_received;
	dom->st.last_seen = dg->time_received;
}

/* ng_decode for the protocol of the datagram's first bytes. */
static size_t decode_dispatch(ng_decoder *d, const ng_datagram *dg, ng_flow_batch *out)
{
	if (dg->time_received > d->now)
		d->now = dg->time_received;
	if (ng_unlikely(dg->len < 2)) {
		struct ng_domain *dom = ng_domain_get(d, dg->exporter, 0);
		if (dom)
			ng_domain_seen(dom, dg, dg->len, 0);
		ng_count_error(dom, NG_DERR_SHORT_HEADER);
		return 0;
	}
	uint16_t v = ng_get_be16(dg->data);
	switch (v) {
	case 1:
	case 5:
	case 7: return ng_decode_v5(d, dg, out);
	case 9: return ng_decode_v9(d, dg, out);
	case 10: return ng_decode_ipfix(d, dg, out);
	case 0:
		if (dg->len >= 4 && ng_get_be16(dg->data + 2) == 5) {
			return ng_decode_sflow(d, dg, out); /* sflow.c */
		}
		break;
	default: break;
	}
	struct ng_domain *dom = ng_domain_get(d, dg->exporter, 0);
	if (dom)
		ng_domain_seen(dom, dg, dg->len, 0);
	ng_count_error(dom, NG_DERR_UNKNOWN_VERSION);
	return 0;
}

size_t ng_decode(ng_decoder *d, const ng_datagram *dg, ng_flow_batch *out)
{
	d->session = dg->session; /* ng_domain_get keys the domain by it */
	size_t n = decode_dispatch(d, dg, out);
	d->session = 0;
	return n;
}

void ng_decoder_expire(ng_decoder *d, uint64_t now_ms)
{
	ng_held_expire(d, now_ms);
}

/* The domain whose row reports every session of (m's address, m's
 * observation domain): the session-0 domain when there is one, else the
 * most recently seen session domain (ex->doms is newest first). */
static const struct ng_domain *row_owner(const struct ng_domain *m)
{
	const struct ng_domain *first = NULL;
	for (const struct ng_lru *n = m->ex->doms.next; n != &m->ex->doms; n = n->next) {
		const struct ng_domain *o = ng_lru_entry(n, const struct ng_domain, ex_lru);
		if (o->st.domain != m->st.domain)
			continue;
		if (!o->session)
			return o;
		if (!first)
			first = o;
	}
	return first;
}

void ng_decoder_foreach_stats(const ng_decoder *d,
                              void (*fn)(const ng_exporter_stats *s, void *arg), void *arg)
{
	for (const struct ng_lru *n = d->dom_lru.next; n != &d->dom_lru; n = n->next) {
		const struct ng_domain *m = ng_lru_entry(n, const struct ng_domain, lru);
		if (ng_likely(!m->ex->sessions)) {
			fn(&m->st, arg);
			continue;
		}
		/* TCP/SCTP: one row per (address, domain), its sessions summed */
		if (row_owner(m) != m)
			continue;
		ng_exporter_stats row = m->st;
		for (const struct ng_lru *k = m->ex->doms.next; k != &m->ex->doms; k = k->next) {
			const struct ng_domain *o = ng_lru_entry(k, const struct ng_domain, ex_lru);
			if (o != m && o->st.domain == m->st.domain) {
				ng_exporter_stats_add(&row, &o->st);
				if (!row.version)
					row.version = o->st.version;
			}
		}
		fn(&row, arg);
	}
	if (d->lim.domains_evicted)
		fn(&d->others, arg);
}

void ng_decoder_totals(const ng_decoder *d, ng_exporter_stats *sum)
{
	memset(sum, 0, sizeof *sum);
	for (const struct ng_lru *n = d->dom_lru.next; n != &d->dom_lru; n = n->next)
		ng_exporter_stats_add(sum, &ng_lru_entry(n, const struct ng_domain, lru)->st);
	ng_exporter_stats_add(sum, &d->others);
}

void ng_decoder_limit_stats(const ng_decoder *d, ng_limit_stats *out)
{
	*out = d->lim;
	out->exporters = d->exporters.n;
	out->domains = d->domains.n;
	out->templates = d->templates.n;
	out->template_bytes = d->tpl_bytes;
	out->held_bytes = d->held_bytes;
}

void ng_decoder_foreach_enterprise(const ng_decoder *d,
                                   void (*fn)(uint32_t pen, uint16_t ie, uint64_t count, void *arg),
                                   void *arg)
{
	for (size_t i = 0; i < d->ents.nb; i++)
		for (struct ng_hnode *n = d->ents.b[i]; n; n = n->next) {
			const struct ng_ent *e = (const struct ng_ent *)n;
			fn(e->pen, e->ie, e->count, arg);
		}
}

/* Frees domain `m` after its session's end: its templates withdrawn (not
 * evicted for a limit: RFC 7011 §8 ends them), its held sets dropped
 * (counted HELD_DROPPED: their template never came). */
static void session_domain_free(ng_decoder *d, struct ng_domain *m)
{
	ng_tpl_withdraw_all(d, m, 10, false);
	ng_tpl_withdraw_all(d, m, 10, true);
	ng_domain_drop_state(d, m);
	ng_htab_remove(&d->domains, &m->h);
	ng_lru_unlink(&m->lru);
	ng_lru_unlink(&m->ex_lru);
	m->ex->ndom--;
	m->ex->sessions--;
	if (d->last_dom == m)
		d->last_dom = NULL;
	free(m);
}

void ng_decoder_session_end(ng_decoder *d, const uint8_t addr[16], uint32_t session)
{
	if (!session)
		return;
	uint64_t h = ng_hash_bytes(addr, 16, 1);
	struct ng_exporter *ex = NULL;
	for (struct ng_hnode *n = ng_htab_first(&d->exporters, h); n && !ex; n = n->next)
		if (n->hash == h && !memcmp(((struct ng_exporter *)n)->addr, addr, 16))
			ex = (struct ng_exporter *)n;
	/* one domain at a time: adding its counters to the session-0 row may
	 * evict other domains of ex, so the walk starts again each time */
	while (ex && ex->sessions) {
		struct ng_domain *m = NULL;
		for (struct ng_lru *n = ex->doms.next; n != &ex->doms && !m; n = n->next) {
			struct ng_domain *o = ng_lru_entry(n, struct ng_domain, ex_lru);
			if (o->session == session)
				m = o;
		}
		if (!m)
			break;
		ng_exporter_stats st = m->st;
		session_domain_free(d, m);
		struct ng_domain *home = ng_domain_get(d, addr, st.domain);
		ng_exporter_stats *to = home ? &home->st : &d->others;
		ng_exporter_stats_add(to, &st);
		if (home && st.version)
			to->version = st.version;
		if (!home)
			break; /* out of memory: ex may be gone */
	}
}
