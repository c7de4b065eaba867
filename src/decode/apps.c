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
 * Bounds (docs/security.md): a domain names at most NG_MAX_APPS IDs (the
 * table is an open-addressing hash of twice that, 128 KiB, allocated on
 * the first name), and names new to the string table are interned up to
 * limits.application_names over the decoder's life (the table never
 * frees); past either, the name is refused and counted in
 * d->lim.applications_refused.
 */
#include <stdlib.h>
#include <string.h>

#include "core/strtab.h"
#include "decode/decode_int.h"

#define NG_MAX_APPS 4096
#define APP_SLOTS (2 * NG_MAX_APPS)

struct ng_app {
	uint64_t key;  /* ng_app_key of the ID */
	uint32_t name; /* interned; 0 = free slot */
	uint32_t pad_;
};

struct ng_apps {
	unsigned n;
	struct ng_app e[APP_SLOTS];
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
	size_t j = (size_t)(h >> 40) & (APP_SLOTS - 1);
	while (a->e[j].name && a->e[j].key != key)
		j = (j + 1) & (APP_SLOTS - 1);
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

void ng_app_learn(struct ng_msg *m, uint64_t key, const uint8_t *name, size_t len)
{
	struct ng_domain *dom = m->dom;
	ng_decoder *d = m->d;
	if (!dom->apps && !(dom->apps = calloc(1, sizeof *dom->apps)))
		return;
	struct ng_app *e = app_slot(dom->apps, key);
	if (!e->name && dom->apps->n >= NG_MAX_APPS) {
		d->lim.applications_refused++;
		return;
	}
	uint32_t id = app_intern(d, name, len);
	if (!id) {
		d->lim.applications_refused += len != 0 && name[0];
		return;
	}
	dom->apps->n += !e->name;
	e->key = key;
	e->name = id;
}

void ng_apps_free(struct ng_domain *dom)
{
	free(dom->apps);
	dom->apps = NULL;
}
