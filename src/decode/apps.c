/*
 * apps.c — application names from options data (Cisco NBAR / AVC).
 *
 * A flow record may carry applicationId (IE 95, RFC 6759 §4.1: a 1-byte
 * classification engine ID, then the selector ID, in as many bytes as the
 * template says: Cisco IOS sends 4, FortiGate 9).  The exporter names the
 * IDs in options data: records of IE 95 with applicationName (IE 96) and
 * applicationDescription (IE 94), e.g. Cisco's `option application-table`
 * (scope System, then 95, 96, 94) or FortiGate's APP_ID_OPTIONS template
 * (docs.fortinet.com, "NetFlow templates").  Each domain keeps its own
 * table, since the IDs are the exporter's; a flow record's ID is looked
 * up there when the record is finished (record.c), so a name learnt
 * before the data is stored with the flow as `application`.
 *
 * Bounds (docs/security.md): a domain names at most NG_MAX_APPS IDs, all
 * domains together limits.application_names (each table is an
 * open-addressing hash kept at most half full, 16 bytes a slot, grown
 * from 16 slots), and names new to the string table are interned up to
 * limits.application_names over the decoder's life (the string table
 * never frees); past any of them, the name is refused and counted in
 * d->lim.applications_refused.
 */
#include <stdlib.h>
#include <string.h>

#include "core/strtab.h"
#include "decode/decode_int.h"

#define NG_MAX_APPS 4096

struct ng_app {
	uint64_t key;  /* ng_app_key of the ID */
	uint32_t name; /* interned; 0 = free slot */
	uint32_t pad_;
};

struct ng_apps {
	unsigned n, cap; /* cap: a power of two, at least twice n */
	struct ng_app e[];
};

uint64_t ng_app_key(const uint8_t *p, size_t len)
{
	if (len <= 8) {
		uint64_t v = 0;
		for (size_t i = 0; i < len; i++)
			v = v << 8 | p[i];
		return v;
	}
	uint64_t h = 1469598103934665603ull ^ len; /* FNV-1a of the bytes */
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static struct ng_app *app_slot(struct ng_apps *a, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;
	size_t j = (size_t)(h >> 40) & (a->cap - 1);
	while (a->e[j].name && a->e[j].key != key)
		j = (j + 1) & (a->cap - 1);
	return &a->e[j];
}

uint32_t ng_app_name(const struct ng_domain *dom, uint64_t key)
{
	if (!dom->apps)
		return 0;
	const struct ng_app *e = app_slot(dom->apps, key);
	return e->name;
}

/* The ID of `name` (`len` bytes, NUL padding and trailing blanks cut), 0
 * when empty or refused for limits.application_names. */
static uint32_t app_intern(ng_decoder *d, const uint8_t *name, size_t len)
{
	size_t n = 0;
	while (n < len && name[n])
		n++;
	while (n && (name[n - 1] == ' ' || name[n - 1] == '\t'))
		n--;
	if (!n)
		return 0;
	uint32_t id = ng_str_lookup((const char *)name, n);
	if (id != UINT32_MAX)
		return id;
	if (d->app_names >= d->cfg.limits.application_names)
		return 0;
	id = ng_intern((const char *)name, n);
	d->app_names += id != 0;
	return id;
}

/* dom's table with room for one more ID (grown to twice its size when
 * half full), NULL when out of memory. */
static struct ng_apps *apps_room(struct ng_domain *dom)
{
	struct ng_apps *a = dom->apps;
	if (a && (a->n + 1) * 2 <= a->cap)
		return a;
	unsigned cap = a ? a->cap * 2 : 16;
	struct ng_apps *b = calloc(1, sizeof *b + cap * sizeof b->e[0]);
	if (!b)
		return NULL;
	b->cap = cap;
	for (unsigned i = 0; a && i < a->cap; i++)
		if (a->e[i].name) {
			*app_slot(b, a->e[i].key) = a->e[i];
			b->n++;
		}
	free(a);
	return dom->apps = b;
}

void ng_app_learn(struct ng_msg *m, uint64_t key, const uint8_t *name, size_t len)
{
	struct ng_domain *dom = m->dom;
	ng_decoder *d = m->d;
	struct ng_app *e = dom->apps ? app_slot(dom->apps, key) : NULL;
	if (!e || !e->name) { /* a new ID: bounded per domain and in all */
		if ((dom->apps && dom->apps->n >= NG_MAX_APPS) ||
		    d->app_ids >= d->cfg.limits.application_names) {
			d->lim.applications_refused++;
			return;
		}
	}
	uint32_t id = app_intern(d, name, len);
	if (!id) {
		d->lim.applications_refused += len != 0 && name[0];
		return;
	}
	if (!e || !e->name) {
		struct ng_apps *a = apps_room(dom);
		if (!a)
			return;
		e = app_slot(a, key);
		a->n++;
		d->app_ids++;
	}
	e->key = key;
	e->name = id;
}

void ng_apps_free(ng_decoder *d, struct ng_domain *dom)
{
	if (dom->apps)
		d->app_ids -= dom->apps->n;
	free(dom->apps);
	dom->apps = NULL;
}
