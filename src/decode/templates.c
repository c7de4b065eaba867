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
 * Data sets whose template is unknown are copied onto their exporter's held
 * list (oldest first, at most cfg.held_max_bytes per exporter, at most
 * cfg.held_max_age ms old) and replayed when a message brings templates.
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
	if (c && c->id == id && c->version == version)
		return c;
	uint64_t h = tpl_hash(dom, version, id);
	for (struct ng_hnode *n = ng_htab_first(&d->templates, h); n; n = n->next) {
		struct ng_tpl *t = (struct ng_tpl *)n;
		if (n->hash == h && t->dom == dom && t->id == id && t->version == version)
			return dom->last_tpl = t;
	}
	return NULL;
}

static void tpl_free(struct ng_tpl *t)
{
	free(t->fields);
	free(t->ops);
	free(t->ent);
	free(t);
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

int ng_tpl_add(ng_decoder *d, struct ng_domain *dom, uint8_t version, uint16_t id, bool options,
               uint16_t scope_count, const struct ng_tfield *fields, uint16_t nfields)
{
	struct ng_tpl *old = ng_tpl_find(d, dom, version, id);
	if (old && same_fields(old, options, scope_count, fields, nfields))
		return 0;
	if (nfields == 0)
		return NG_DERR_TEMPLATE_BAD;
	/* a bound on what one exporter can make us hold: real ones use tens
	 * of templates a domain; a flood of new IDs is refused and counted */
	if (!old && dom->ntpl >= NG_MAX_TEMPLATES)
		return NG_DERR_TEMPLATE_LIMIT;
	struct ng_tpl *t = calloc(1, sizeof *t);
	if (!t)
		return NG_DERR_TEMPLATE_BAD;
	t->dom = dom;
	t->version = version;
	t->id = id;
	t->options = options;
	t->scope_count = scope_count;
	t->nfields = nfields;
	t->fields = malloc(nfields * sizeof *fields);
	t->ops = malloc(nfields * sizeof *t->ops);
	t->ent = malloc(nfields * sizeof *t->ent);
	if (!t->fields || !t->ops || !t->ent) {
		tpl_free(t);
		return NG_DERR_TEMPLATE_BAD;
	}
	memcpy(t->fields, fields, nfields * sizeof *fields);
	if (!compile(d, t)) {
		tpl_free(t);
		return NG_DERR_TEMPLATE_BAD;
	}
	if (old) {
		ng_htab_remove(&d->templates, &old->h);
		tpl_free(old);
	} else {
		dom->ntpl++;
	}
	t->h.hash = tpl_hash(dom, version, id);
	ng_htab_insert(&d->templates, &t->h);
	dom->last_tpl = NULL;
	return 0;
}

void ng_tpl_withdraw(ng_decoder *d, struct ng_domain *dom, uint8_t version, uint16_t id)
{
	struct ng_tpl *t = ng_tpl_find(d, dom, version, id);
	if (!t)
		return;
	ng_htab_remove(&d->templates, &t->h);
	dom->ntpl--;
	tpl_free(t);
	dom->last_tpl = NULL;
}

/* RFC 7011 §8.1: a withdrawal with Template ID 2 (Template Set) or 3
 * (Options Template Set) withdraws every template of that kind of the
 * observation domain. */
void ng_tpl_withdraw_all(ng_decoder *d, struct ng_domain *dom, uint8_t version, bool options)
{
	for (size_t i = 0; i < d->templates.nb; i++) {
		struct ng_hnode **pp = &d->templates.b[i];
		while (*pp) {
			struct ng_tpl *t = (struct ng_tpl *)*pp;
			if (t->dom == dom && t->version == version && t->options == options) {
				*pp = t->h.next;
				d->templates.n--;
				dom->ntpl--;
				tpl_free(t);
			} else {
				pp = &(*pp)->next;
			}
		}
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
}

/* ---- held data sets ---- */

static void held_unlink(struct ng_exporter *ex, struct ng_held **pp)
{
	struct ng_held *h = *pp;
	*pp = h->next;
	if (ex->held_tail == &h->next)
		ex->held_tail = pp;
	ex->held_bytes -= h->len;
}

static void held_drop_oldest(struct ng_exporter *ex)
{
	struct ng_held *h = ex->held;
	held_unlink(ex, &ex->held);
	ng_count_error(h->dom, NG_DERR_HELD_DROPPED);
	free(h);
}

void ng_held_add(struct ng_msg *m, uint16_t tid, const uint8_t *p, size_t len)
{
	struct ng_exporter *ex = m->dom->ex;
	size_t max = m->d->cfg.held_max_bytes;
	ng_held_expire(m->d, ex, m->time_received); /* age bound without a timer */
	m->dom->st.template_misses++;
	m->missed = true;
	if (len > max) {
		ng_count_error(m->dom, NG_DERR_HELD_DROPPED);
		return;
	}
	while (ex->held && ex->held_bytes + len > max)
		held_drop_oldest(ex);
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
			t = ng_tpl_find(m->d, h->dom, h->version, h->tid);
		if (!t) {
			pp = &h->next;
			continue;
		}
		held_unlink(ex, pp);
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

void ng_held_expire(ng_decoder *d, struct ng_exporter *ex, uint64_t now)
{
	uint64_t age = d->cfg.held_max_age;
	while (ex->held && now > ex->held->held_at && now - ex->held->held_at > age)
		held_drop_oldest(ex);
}

void ng_held_free_all(ng_decoder *d)
{
	for (struct ng_exporter *e = d->ex_all; e; e = e->all_next) {
		for (struct ng_held *h = e->held, *n; h; h = n) {
			n = h->next;
			free(h);
		}
		e->held = NULL;
		e->held_tail = &e->held;
		e->held_bytes = 0;
	}
}
