/*
 * interfaces.c — interface names learnt from exporters' options data
 * (decode: ng_decoder_take_interfaces), keyed by exporter address and
 * ifIndex.  Owned by the receive thread; it outlives table-set reloads
 * (what the exporters told us does not depend on the configuration).
 * Names from the configuration file win: ng_iftab_apply fills only
 * in_if_name / out_if_name that are still empty.
 */
#include "enrich/interfaces.h"

#include <stdlib.h>
#include <string.h>

#include "core/strtab.h"

struct ent {
	uint8_t exporter[16];
	uint32_t index;
	uint32_t name, desc; /* interned; 0 = empty slot when name and desc are 0 */
	bool used;
};

struct ng_iftab {
	struct ent *e;
	size_t n, cap;           /* cap: power of two */
	size_t max;              /* entries at most */
	size_t names, max_names; /* strings this table interned, at most */
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

/* 1 when `s` is a non-empty string the string table does not hold yet. */
static size_t is_new(const char *s)
{
	return s && *s && ng_str_lookup(s, strlen(s)) == UINT32_MAX;
}

int ng_iftab_set(ng_iftab *t, const uint8_t exporter[16], uint32_t index, const char *name,
                 const char *desc)
{
	struct ent *e = slot(t, exporter, index);
	if (!e->used && t->n >= t->max)
		return -2;
	if (!e->used && (t->n + 1) * 2 > t->cap) {
		if (grow(t) < 0)
			return -1;
		e = slot(t, exporter, index);
	}
	const size_t fresh = is_new(name) + is_new(desc);
	if (fresh && t->names + fresh > t->max_names)
		return -3;
	t->names += fresh;
	uint32_t n = ng_intern_cstr(name), d = ng_intern_cstr(desc);
	if (e->used && e->name == n && e->desc == d)
		return 0;
	if (!e->used) {
		t->n++;
		e->used = true;
		memcpy(e->exporter, exporter, 16);
		e->index = index;
	}
	e->name = n;
	e->desc = d;
	return 1;
}

static uint32_t lookup(const ng_iftab *t, const uint8_t ex[16], uint32_t index)
{
	const struct ent *e = slot(t, ex, index);
	return e->used ? (e->name ? e->name : e->desc) : 0;
}

void ng_iftab_apply(const ng_iftab *t, ng_flow *flows, size_t n)
{
	if (!t || !t->n)
		return;
	for (size_t i = 0; i < n; i++) {
		ng_flow *r = &flows[i];
		if (r->in_if && !r->in_if_name)
			r->in_if_name = lookup(t, r->exporter, r->in_if);
		if (r->out_if && !r->out_if_name)
			r->out_if_name = lookup(t, r->exporter, r->out_if);
	}
}

void ng_iftab_foreach(const ng_iftab *t,
                      void (*fn)(const uint8_t exporter[16], uint32_t index, const char *name,
                                 const char *desc, void *arg),
                      void *arg)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->e[i].used)
			fn(t->e[i].exporter, t->e[i].index, ng_str(t->e[i].name),
			   ng_str(t->e[i].desc), arg);
}
