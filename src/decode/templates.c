/*
 * templates.c — template store, template compilation and held data sets.
 *
 * Templates are keyed by (exporter address, observation domain) — one
 * struct ng_domain — plus export version and template ID (RFC 7011 §8:
 * "Template IDs are unique per Transport Session and Observation Domain";
 * RFC 3954 §5.2 likewise per source ID).  A template ID re-sent with the
 * same fields is a refresh and costs a compare; with new fields it replaces
 * the old definition (RFC 7011 §8.1 allows reuse after withdrawal; UDP
 * exporters simply re-send, RFC 7011 §8.4).
 *
 * Compilation turns the field list into ops: each field becomes (length,
 * action) from ie_registry.c, and runs of skipped fixed-length fields merge
 * into one op, so a data record costs one switch per field we keep.
 *
 * Templates are bounded (core/limits.h): per domain by count
 * (templates_per_domain) and memory (template_bytes_per_domain), and in
 * all by count (templates) and memory (template_bytes).  A new template
 * that would pass a bound evicts the least recently used template of its
 * own domain first (so one domain's flood only ever evicts its own), then
 * the least recently used of all; a data set that finds its template
 * marks it used (lru.h: one compare when it is already the newest).  The
 * memory counted for a template is tpl_cost(): its struct and the three
 * arrays of nfields entries, what malloc is asked for.
 *
 * A template announced before its exporter restarted is stale (restart.c):
 * its data sets are held like those of an unknown template until it is
 * announced again, with the same fields (it resumes) or others (it is
 * replaced).
 *
 * Data sets whose template is unknown are copied onto their exporter's held
 * list (oldest first, at most cfg.held_max_bytes per exporter, at most
 * limits.held_bytes in all, at most cfg.held_max_age ms old) and replayed
 * when a message brings templates.  The all-exporter list d->held_all is
 * in arrival order too, so its oldest set is always the oldest of its own
 * exporter: the global bound drops list heads only.
 */
#include "decode/decode_int.h"

#include <stdlib.h>
#include <string.h>

static uint64_t tpl_hash(const struct ng_domain *dom, uint8_t version, uint16_t id)
{
	uint64_t h = (uint64_t)(uintptr_t)dom * 0x9e3779b97f4a7c15ULL;
	h ^= ((uint64_t)version << 16 | id) * 0xc2b2ae3d27d4eb4fULL;
	h ^= h >> 31;
	return h;
}

struct ng_tpl *ng_tpl_find(ng_decoder *d, struct ng_domain *dom, uint8_t version, uint16_t id)
{
	struct ng_tpl *c = dom->last_tpl;
	if (c && c->id == id && c->version == version) {
		ng_lru_touch(&d->tpl_lru, &c->lru);
		ng_lru_touch(&dom->tpls, &c->dlru);
		return c;
	}
	uint64_t h = tpl_hash(dom, version, id);
	for (struct ng_hnode *n = ng_htab_first(&d->templates, h); n; n = n->next) {
		struct ng_tpl *t = (struct ng_tpl *)n;
		if (n->hash == h && t->dom == dom && t->id == id && t->version == version) {
			if (!d->loading) {
				ng_lru_touch(&d->tpl_lru, &t->lru);
				ng_lru_touch(&dom->tpls, &t->dlru);
			}
			return dom->last_tpl = t;
		}
	}
	return NULL;
}

/* The memory a template of `nfields` fields is counted for: its struct,
 * its fields as received, its ops and its enterprise counter pointers. */
static size_t tpl_cost(uint16_t nfields)
{
	return sizeof(struct ng_tpl) +
	       (size_t)nfields *
	           (sizeof(struct ng_tfield) + sizeof(struct ng_op) + sizeof(uint64_t *));
}

/* A template and its three arrays are one allocation (tpl_build). */
static void tpl_free(struct ng_tpl *t)
{
	free(t);
}

/* Takes template `t` out of the table and lists, and frees it. */
static void tpl_remove(ng_decoder *d, struct ng_tpl *t)
{
	struct ng_domain *dom = t->dom;
	ng_htab_remove(&d->templates, &t->h);
	ng_lru_unlink(&t->lru);
	ng_lru_unlink(&t->dlru);
	dom->ntpl--;
	dom->tpl_bytes -= t->cost;
	d->tpl_bytes -= t->cost;
	dom->last_tpl = NULL;
	tpl_free(t);
}

/* Evicts template `t` for a limit: counted in its domain and d->lim. */
static void tpl_evict(ng_decoder *d, struct ng_tpl *t)
{
	t->dom->st.templates_evicted++;
	d->lim.templates_evicted++;
	tpl_remove(d, t);
}

/* Makes room in `dom` and in all for one more template of `cost` bytes,
 * evicting the least recently used of the domain, then of all.  Returns
 * 0, or NG_DERR_TEMPLATE_LIMIT when the template alone passes a limit or
 * (loading a state file, which never evicts) no room is left. */
static int tpl_room(ng_decoder *d, struct ng_domain *dom, size_t cost)
{
	const ng_limits *l = &d->cfg.limits;
	if (cost > l->template_bytes_per_domain || cost > l->template_bytes)
		return NG_DERR_TEMPLATE_LIMIT;
	while (dom->ntpl >= l->templates_per_domain ||
	       dom->tpl_bytes + cost > l->template_bytes_per_domain) {
		if (d->loading)
			return NG_DERR_TEMPLATE_LIMIT;
		tpl_evict(d, ng_lru_entry(dom->tpls.prev, struct ng_tpl, dlru));
	}
	while (d->templates.n >= l->templates || d->tpl_bytes + cost > l->template_bytes) {
		if (d->loading)
			return NG_DERR_TEMPLATE_LIMIT;
		tpl_evict(d, ng_lru_entry(d->tpl_lru.prev, struct ng_tpl, lru));
	}
	return 0;
}

/* Appends one op, merging it into the previous one when both are fixed
 * skips and the sum still fits 16 bits. */
static void push_op(struct ng_tpl *t, uint16_t len, enum ng_action act)
{
	if (act == NG_A_SKIP && len != NG_VARLEN && t->nops) {
		struct ng_op *p = &t->ops[t->nops - 1];
		if (p->act == NG_A_SKIP && p->len != NG_VARLEN &&
		    (uint32_t)p->len + len < NG_VARLEN) {
			p->len = (uint16_t)(p->len + len);
			return;
		}
	}
	t->ops[t->nops].len = len;
	t->ops[t->nops].act = (uint8_t)act;
	t->ops[t->nops].pad_ = 0;
	t->nops++;
}

/* Compiles t->fields into t->ops.  In a v9 options template the scope
 * fields carry scope types (RFC 3954 §6.1: 1 System, 2 Interface, …), not
 * field types, so they are skipped.  Returns false when the template
 * cannot describe a record: all lengths zero, or longer than any message
 * (RFC 7011 §3.1: message length is 16 bits). */
static bool compile(ng_decoder *d, struct ng_tpl *t)
{
	uint32_t min_len = 0;
	for (uint16_t i = 0; i < t->nfields; i++) {
		const struct ng_tfield *f = &t->fields[i];
		bool bad = false;
		enum ng_action act = NG_A_SKIP;
		bool v9_scope = t->version == 9 && t->options && i < t->scope_count;
		if (f->pen) {
			uint64_t *c = ng_ent_counter(d, f->pen, f->ie);
			if (c)
				t->ent[t->nent++] = c;
		} else if (!v9_scope) {
			act = ng_ie_action(f->ie, f->len, &bad);
		}
		if (bad)
			ng_count_error(t->dom, NG_DERR_FIELD_LENGTH);
		if (f->len == NG_VARLEN) {
			t->varlen = true;
			min_len += 1; /* RFC 7011 §7: at least the 1-byte length */
		} else {
			min_len += f->len;
		}
		if (f->len == 0)
			continue; /* nothing to read (seen from some v9 exporters) */
		push_op(t, f->len, act);
	}
	t->min_len = min_len;
	return min_len > 0 && min_len <= 65535 - 20;
}

static bool same_fields(const struct ng_tpl *t, bool options, uint16_t scope,
                        const struct ng_tfield *f, uint16_t n)
{
	return t->options == options && t->scope_count == scope && t->nfields == n &&
	       !memcmp(t->fields, f, n * sizeof *f);
}

/* A template compiled from `fields` (copied), not yet in any table: NULL
 * when out of memory or when the fields cannot form a record. */
static struct ng_tpl *tpl_build(ng_decoder *d, struct ng_domain *dom, uint8_t version, uint16_t id,
                                bool options, uint16_t scope_count, const struct ng_tfield *fields,
                                uint16_t nfields)
{
	/* one block: the struct, then the ent pointers, the fields, the ops
	 * (in that order of alignment), so a flood of templates churns one
	 * chunk each, not four */
	size_t cost = tpl_cost(nfields);
	_Static_assert(sizeof(struct ng_tpl) % sizeof(uint64_t *) == 0, "ent aligned");
	struct ng_tpl *t = malloc(cost);
	if (!t)
		return NULL;
	memset(t, 0, sizeof *t);
	t->ent = (uint64_t **)(void *)(t + 1);
	t->fields = (struct ng_tfield *)(void *)(t->ent + nfields);
	t->ops = (struct ng_op *)(void *)(t->fields + nfields);
	t->dom = dom;
	t->version = version;
	t->id = id;
	t->options = options;
	t->scope_count = scope_count;
	t->nfields = nfields;
	t->cost = cost;
	memcpy(t->fields, fields, nfields * sizeof *fields);
	if (!compile(d, t)) {
		tpl_free(t);
		return NULL;
	}
	return t;
}

int ng_tpl_add(ng_decoder *d, struct ng_domain *dom, uint8_t version, uint16_t id, bool options,
               uint16_t scope_count, const struct ng_tfield *fields, uint16_t nfields)
{
	struct ng_tpl *old = ng_tpl_find(d, dom, version, id);
	if (old && same_fields(old, options, scope_count, fields, nfields)) {
		old->epoch = dom->epoch; /* announced unchanged since a restart */
		return 0;
	}
	if (nfields == 0)
		return NG_DERR_TEMPLATE_BAD;
	/* a bound on what one exporter can make us hold: an ID re-sent
	 * replaces its old definition; a new one may evict (tpl_room) */
	if (tpl_cost(nfields) > d->cfg.limits.template_bytes_per_domain)
		return NG_DERR_TEMPLATE_LIMIT;
	struct ng_tpl *t = tpl_build(d, dom, version, id, options, scope_count, fields, nfields);
	if (!t)
		return NG_DERR_TEMPLATE_BAD;
	if (old)
		tpl_remove(d, old);
	int e = tpl_room(d, dom, t->cost);
	if (e) {
		tpl_free(t);
		return e;
	}
	dom->ntpl++;
	dom->tpl_bytes += t->cost;
	d->tpl_bytes += t->cost;
	t->epoch = dom->epoch;
	t->h.hash = tpl_hash(dom, version, id);
	ng_htab_insert(&d->templates, &t->h);
	if (d->loading) {
		ng_lru_push_back(&d->tpl_lru, &t->lru);
		ng_lru_push_back(&dom->tpls, &t->dlru);
	} else {
		ng_lru_push_front(&d->tpl_lru, &t->lru);
		ng_lru_push_front(&dom->tpls, &t->dlru);
	}
	dom->last_tpl = NULL;
	return 0;
}

void ng_tpl_withdraw(ng_decoder *d, struct ng_domain *dom, uint8_t version, uint16_t id)
{
	struct ng_tpl *t = ng_tpl_find(d, dom, version, id);
	if (t)
		tpl_remove(d, t);
}

/* RFC 7011 §8.1: a withdrawal with Template ID 2 (Template Set) or 3
 * (Options Template Set) withdraws every template of that kind of the
 * observation domain. */
void ng_tpl_withdraw_all(ng_decoder *d, struct ng_domain *dom, uint8_t version, bool options)
{
	for (struct ng_lru *n = dom->tpls.next, *next; n != &dom->tpls; n = next) {
		next = n->next;
		struct ng_tpl *t = ng_lru_entry(n, struct ng_tpl, dlru);
		if (t->version == version && t->options == options)
			tpl_remove(d, t);
	}
	dom->last_tpl = NULL;
}

void ng_tpl_free_all(ng_decoder *d)
{
	for (size_t i = 0; d->templates.b && i < d->templates.nb; i++) {
		for (struct ng_hnode *n = d->templates.b[i], *next; n; n = next) {
			next = n->next;
			tpl_free((struct ng_tpl *)n);
		}
		d->templates.b[i] = NULL;
	}
	d->templates.n = 0;
	ng_lru_init(&d->tpl_lru);
	d->tpl_bytes = 0;
}

/* ---- held data sets ---- */

/* Takes *pp (a set of ex's list) off both lists. */
static void held_unlink(ng_decoder *d, struct ng_exporter *ex, struct ng_held **pp)
{
	struct ng_held *h = *pp;
	*pp = h->next;
	if (ex->held_tail == &h->next)
		ex->held_tail = pp;
	ex->held_bytes -= h->len;
	d->held_bytes -= h->len;
	h->dom->nheld--;
	ng_lru_unlink(&h->all);
}

static void held_drop_oldest(ng_decoder *d, struct ng_exporter *ex)
{
	struct ng_held *h = ex->held;
	held_unlink(d, ex, &ex->held);
	ng_count_error(h->dom, NG_DERR_HELD_DROPPED);
	free(h);
}

/* Drops the oldest held set of all exporters (limits.held_bytes): the
 * head of its own exporter's list, as both lists keep arrival order. */
static void held_evict_oldest(ng_decoder *d)
{
	struct ng_held *h = ng_lru_entry(d->held_all.prev, struct ng_held, all);
	struct ng_exporter *ex = h->dom->ex;
	d->lim.held_evicted++;
	held_drop_oldest(d, ex);
}

void ng_held_add(struct ng_msg *m, uint16_t tid, const uint8_t *p, size_t len)
{
	ng_decoder *d = m->d;
	struct ng_exporter *ex = m->dom->ex;
	size_t max = d->cfg.held_max_bytes;
	ng_held_expire(d, m->time_received); /* age bound without a timer */
	m->dom->st.template_misses++;
	m->missed = true;
	if (len > max || len > d->cfg.limits.held_bytes) {
		ng_count_error(m->dom, NG_DERR_HELD_DROPPED);
		return;
	}
	while (ex->held && ex->held_bytes + len > max)
		held_drop_oldest(d, ex);
	while (d->held_bytes + len > d->cfg.limits.held_bytes)
		held_evict_oldest(d);
	struct ng_held *h = malloc(sizeof *h + len);
	if (!h) {
		ng_count_error(m->dom, NG_DERR_HELD_DROPPED);
		return;
	}
	h->next = NULL;
	h->dom = m->dom;
	h->held_at = m->time_received;
	h->time_received = m->time_received;
	h->export_ms = m->export_ms;
	h->uptime_ms = m->uptime_ms;
	h->tid = tid;
	h->version = m->version;
	h->len = len;
	memcpy(h->data, p, len);
	*ex->held_tail = h;
	ex->held_tail = &h->next;
	ex->held_bytes += len;
	d->held_bytes += len;
	m->dom->nheld++;
	ng_lru_push_front(&d->held_all, &h->all);
}

/* Decodes every held set of m's domain and version whose template is now
 * known, in arrival order, appending to m->out. */
void ng_held_replay(struct ng_msg *m)
{
	struct ng_exporter *ex = m->dom->ex;
	struct ng_held **pp = &ex->held;
	while (*pp) {
		struct ng_held *h = *pp;
		struct ng_tpl *t = NULL;
		if (h->dom == m->dom && h->version == m->version)
			t = ng_tpl_current(m->d, h->dom, h->version, h->tid);
		if (!t) {
			pp = &h->next;
			continue;
		}
		held_unlink(m->d, ex, pp);
		struct ng_msg sub = *m;
		sub.time_received = h->time_received;
		sub.export_ms = h->export_ms;
		sub.uptime_ms = h->uptime_ms;
		sub.records = 0;
		sub.appended = 0;
		ng_data_set(&sub, t, h->data, h->len);
		m->appended += sub.appended;
		h->dom->st.held++;
		free(h);
	}
}

/* Drops the held sets older than held_max_age, oldest first over all
 * exporters (d->held_all is in arrival order). */
void ng_held_expire(ng_decoder *d, uint64_t now)
{
	uint64_t age = d->cfg.held_max_age;
	while (!ng_lru_empty(&d->held_all)) {
		struct ng_held *h = ng_lru_entry(d->held_all.prev, struct ng_held, all);
		if (!(now > h->held_at && now - h->held_at > age))
			break;
		held_drop_oldest(d, h->dom->ex);
	}
}

void ng_domain_drop_state(ng_decoder *d, struct ng_domain *dom)
{
	while (!ng_lru_empty(&dom->tpls)) {
		struct ng_tpl *t = ng_lru_entry(dom->tpls.next, struct ng_tpl, dlru);
		tpl_evict(d, t);
	}
	ng_held_drop_domain(d, dom);
	ng_apps_free(d, dom);
}

void ng_held_drop_domain(ng_decoder *d, struct ng_domain *dom)
{
	struct ng_exporter *ex = dom->ex;
	for (struct ng_held **pp = &ex->held; dom->nheld && *pp;) {
		struct ng_held *h = *pp;
		if (h->dom != dom) {
			pp = &h->next;
			continue;
		}
		held_unlink(d, ex, pp);
		ng_count_error(dom, NG_DERR_HELD_DROPPED);
		free(h);
	}
}

void ng_held_free_all(ng_decoder *d)
{
	while (!ng_lru_empty(&d->held_all)) {
		struct ng_held *h = ng_lru_entry(d->held_all.next, struct ng_held, all);
		ng_lru_unlink(&h->all);
		free(h);
	}
	for (struct ng_lru *n = d->ex_lru.next; n != &d->ex_lru; n = n->next) {
		struct ng_exporter *e = ng_lru_entry(n, struct ng_exporter, lru);
		e->held = NULL;
		e->held_tail = &e->held;
		e->held_bytes = 0;
	}
	d->held_bytes = 0;
}
