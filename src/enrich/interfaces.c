/*
 * interfaces.c — interface names learnt from exporters' options data
 * (decode: ng_decoder_take_interfaces) and from their SNMP agents
 * (enrich/snmp.c), keyed by exporter address and ifIndex.  Owned by the
 * receive thread; it outlives table-set reloads (what the exporters told
 * us does not depend on the configuration).  Names from the configuration
 * file win: ng_iftab_apply fills only in_if_name / out_if_name that are
 * still empty.  SNMP wins over options data: an entry SNMP filled keeps
 * its values when options data names the interface again.
 *
 * For SNMP the table also says which interfaces to poll: when a record
 * first names an interface of a polled exporter, apply adds an entry if
 * there is none (an empty one, counted against `max` like any other) and
 * queues it; the receive thread hands the queue to the poller once a
 * second.  That is one hash probe per record side, as before, plus a
 * question to the poller (lock-free) per new interface.
 */
#include "enrich/interfaces.h"

#include <stdlib.h>
#include <string.h>

#include "core/strtab.h"

#define NEW_QUEUE 4096

struct ent {
	uint8_t exporter[16];
	uint32_t index;
	uint32_t name, desc; /* interned; 0 none */
	uint64_t speed;      /* bits/s, 0 unknown */
	bool used;
	bool snmp;  /* the values came from SNMP */
	bool asked; /* a record named it and the poller was asked about it */
};

struct ng_iftab {
	struct ent *e;
	size_t n, cap;           /* cap: power of two */
	size_t max;              /* entries at most */
	size_t names, max_names; /* strings this table interned, at most */
	bool (*polled)(void *arg, const uint8_t exporter[16]);
	void *polled_arg;
	struct {
		uint8_t ex[16];
		uint32_t index;
	} q[NEW_QUEUE]; /* interfaces of polled exporters seen, not yet taken */
	size_t nq;
};

static size_t hash(const uint8_t ex[16], uint32_t index)
{
	uint64_t h = 1469598103934665603ull ^ index;
	for (int i = 0; i < 16; i++)
		h = (h ^ ex[i]) * 1099511628211ull;
	return (size_t)(h ^ h >> 29);
}

static struct ent *slot(const ng_iftab *t, const uint8_t ex[16], uint32_t index)
{
	size_t j = hash(ex, index) & (t->cap - 1);
	while (t->e[j].used && (t->e[j].index != index || memcmp(t->e[j].exporter, ex, 16)))
		j = (j + 1) & (t->cap - 1);
	return &t->e[j];
}

ng_iftab *ng_iftab_new(size_t max, size_t max_names)
{
	ng_iftab *t = calloc(1, sizeof *t);
	if (t) {
		t->max = max;
		t->max_names = max_names;
	}
	if (t && !(t->e = calloc(t->cap = 256, sizeof *t->e))) {
		free(t);
		return NULL;
	}
	return t;
}

void ng_iftab_free(ng_iftab *t)
{
	if (t)
		free(t->e);
	free(t);
}

static int grow(ng_iftab *t)
{
	struct ent *old = t->e;
	size_t oc = t->cap;
	if (!(t->e = calloc(oc * 2, sizeof *t->e))) {
		t->e = old;
		return -1;
	}
	t->cap = oc * 2;
	for (size_t i = 0; i < oc; i++)
		if (old[i].used)
			*slot(t, old[i].exporter, old[i].index) = old[i];
	free(old);
	return 0;
}

/* The entry of exporter/index, added (empty) when absent: NULL with *rc
 * -2 when the table is full, -1 when out of memory. */
static struct ent *get(ng_iftab *t, const uint8_t exporter[16], uint32_t index, int *rc)
{
	struct ent *e = slot(t, exporter, index);
	if (e->used)
		return e;
	if (t->n >= t->max) {
		*rc = -2;
		return NULL;
	}
	if ((t->n + 1) * 2 > t->cap) {
		if (grow(t) < 0) {
			*rc = -1;
			return NULL;
		}
		e = slot(t, exporter, index);
	}
	t->n++;
	e->used = true;
	memcpy(e->exporter, exporter, 16);
	e->index = index;
	return e;
}

/* 1 when `s` is a non-empty string the string table does not hold yet. */
static size_t is_new(const char *s)
{
	return s && *s && ng_str_lookup(s, strlen(s)) == UINT32_MAX;
}

/* Sets e's values; the returns of ng_iftab_set. */
static int put(ng_iftab *t, struct ent *e, bool fresh_entry, const char *name, const char *desc,
               uint64_t speed, bool snmp)
{
	const size_t fresh = is_new(name) + is_new(desc);
	if (fresh && t->names + fresh > t->max_names)
		return -3;
	t->names += fresh;
	uint32_t n = name ? ng_intern_cstr(name) : 0, d = desc ? ng_intern_cstr(desc) : 0;
	if (!fresh_entry && e->name == n && e->desc == d && e->speed == speed && e->snmp == snmp)
		return 0;
	e->name = n;
	e->desc = d;
	e->speed = speed;
	e->snmp = snmp;
	return 1;
}

int ng_iftab_set(ng_iftab *t, const uint8_t exporter[16], uint32_t index, const char *name,
                 const char *desc)
{
	const struct ent *e0 = slot(t, exporter, index);
	if (e0->used && e0->snmp) /* SNMP named it: that wins */
		return 0;
	if (!e0->used && t->n >= t->max)
		return -2;
	const size_t fresh = is_new(name) + is_new(desc);
	if (fresh && t->names + fresh > t->max_names)
		return -3;
	const bool was = e0->used;
	int rc = 0;
	struct ent *e = get(t, exporter, index, &rc);
	if (!e)
		return rc;
	return put(t, e, !was, name, desc, 0, false);
}

int ng_iftab_set_snmp(ng_iftab *t, const uint8_t exporter[16], uint32_t index, const char *name,
                      const char *desc, uint64_t speed)
{
	struct ent *e = slot(t, exporter, index);
	if (!e->used)
		return 0;
	return put(t, e, false, name, desc, speed, true);
}

void ng_iftab_watch(ng_iftab *t, bool (*polled)(void *arg, const uint8_t exporter[16]), void *arg)
{
	t->polled = polled;
	t->polled_arg = arg;
}

size_t ng_iftab_take_new(ng_iftab *t, uint8_t (*ex)[16], uint32_t *index, size_t max)
{
	size_t n = t->nq < max ? t->nq : max;
	for (size_t i = 0; i < n; i++) {
		memcpy(ex[i], t->q[i].ex, 16);
		index[i] = t->q[i].index;
	}
	memmove(t->q, t->q + n, (t->nq - n) * sizeof t->q[0]);
	t->nq -= n;
	return n;
}

/* The entry of a record's interface.  The first time a record names an
 * interface, the poller is asked whether its exporter is polled; if so
 * the entry is added when absent and queued (not when the queue or the
 * table is full: a later record tries again).  After that one flag. */
static const struct ent *find(ng_iftab *t, const uint8_t ex[16], uint32_t index)
{
	struct ent *e = slot(t, ex, index);
	if ((e->used && e->asked) || !t->polled)
		return e->used ? e : NULL;
	if (!t->polled(t->polled_arg, ex)) {
		if (e->used)
			e->asked = true;
		return e->used ? e : NULL;
	}
	if (t->nq >= NEW_QUEUE)
		return e->used ? e : NULL;
	int rc;
	if (!e->used && !(e = get(t, ex, index, &rc)))
		return NULL;
	e->asked = true;
	memcpy(t->q[t->nq].ex, ex, 16);
	t->q[t->nq++].index = index;
	return e;
}

void ng_iftab_apply(ng_iftab *t, ng_flow *flows, size_t n)
{
	if (!t || (!t->n && !t->polled))
		return;
	for (size_t i = 0; i < n; i++) {
		ng_flow *r = &flows[i];
		const struct ent *e;
		if (r->in_if && (e = find(t, r->exporter, r->in_if))) {
			if (!r->in_if_name)
				r->in_if_name = e->name ? e->name : e->desc;
			if (!r->in_if_desc)
				r->in_if_desc = e->desc;
			if (!r->in_if_speed)
				r->in_if_speed = e->speed;
		}
		if (r->out_if && (e = find(t, r->exporter, r->out_if))) {
			if (!r->out_if_name)
				r->out_if_name = e->name ? e->name : e->desc;
			if (!r->out_if_desc)
				r->out_if_desc = e->desc;
			if (!r->out_if_speed)
				r->out_if_speed = e->speed;
		}
	}
}

void ng_iftab_foreach(const ng_iftab *t,
                      void (*fn)(const uint8_t exporter[16], uint32_t index, const char *name,
                                 const char *desc, uint64_t speed, bool snmp, void *arg),
                      void *arg)
{
	for (size_t i = 0; i < t->cap; i++) {
		const struct ent *e = &t->e[i];
		if (e->used && (e->name || e->desc))
			fn(e->exporter, e->index, ng_str(e->name), ng_str(e->desc), e->speed,
			   e->snmp, arg);
	}
}
