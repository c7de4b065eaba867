/*
 * stats.c — the exporter counters as a list that code can walk.
 *
 * decoder.h declares the counters of an exporter and observation domain
 * once, as the X-macro NG_EXPORTER_COUNTERS: a field name, a JSON key, a
 * kind and a doc line each.  The same macro gives the fields of
 * ng_exporter_stats; here it gives ng_exporter_counters[], the table the
 * state file (store/exporters.c), the HTTP API and /metrics (http/api.c),
 * `nagare status` and the tests read: each entry's key, kind, doc and the
 * offset and size of its field.  A counter's value is read and written
 * through the table by its size (1, 2, 4 or 8 bytes), so code that walks
 * the list needs no case per field, and a new line in the list is written,
 * read, merged, summed and tested without a change here.
 *
 * The decoder itself counts with the named fields (dom->st.records += n):
 * the table is for reporting, never on the per-record path.
 */
#include <assert.h>
#include <stddef.h>
#include <string.h>

#include "decode/decoder.h"

#define FIELD_SIZE(f) sizeof(((ng_exporter_stats *)0)->f)

const ng_exporter_counter ng_exporter_counters[NG_XC_COUNT] = {
#define X(field, name, kind, doc)                                                                  \
	{name, NG_XK_##kind, offsetof(ng_exporter_stats, field), FIELD_SIZE(field), doc},
    NG_EXPORTER_COUNTERS(X)
#undef X
};

/* Every field but the ERRORS array is an unsigned integer of 1, 2, 4 or 8
 * bytes: the width ng_exporter_counter_get/set read and write.  The ERRORS
 * entry is the one array of NG_DECODE_ERRORS counts, s->errors, which the
 * code that walks the list reads by that name. */
#define X(field, name, kind, doc)                                                                  \
	_Static_assert(NG_XK_##kind == NG_XK_ERRORS || FIELD_SIZE(field) == 1 ||                   \
	                   FIELD_SIZE(field) == 2 || FIELD_SIZE(field) == 4 ||                     \
	                   FIELD_SIZE(field) == 8,                                                 \
	               "exporter counter " #field ": not a 1, 2, 4 or 8-byte integer");            \
	_Static_assert(NG_XK_##kind != NG_XK_ERRORS || offsetof(ng_exporter_stats, field) ==       \
	                                                   offsetof(ng_exporter_stats, errors),    \
	               "exporter counter " #field ": the ERRORS entry is s->errors");
NG_EXPORTER_COUNTERS(X)
#undef X

uint64_t ng_exporter_counter_get(const ng_exporter_stats *s, enum ng_exporter_counter_id id)
{
	assert((unsigned)id < NG_XC_COUNT);
	const ng_exporter_counter *c = &ng_exporter_counters[id];
	const unsigned char *p = (const unsigned char *)s + c->offset;
	if (c->kind == NG_XK_ERRORS) {
		uint64_t t = 0;
		for (int i = 0; i < NG_DERR_COUNT; i++)
			t += s->errors[i];
		return t;
	}
	switch (c->size) {
	case 1: return *p;
	case 2: {
		uint16_t v;
		memcpy(&v, p, sizeof v);
		return v;
	}
	case 4: {
		uint32_t v;
		memcpy(&v, p, sizeof v);
		return v;
	}
	default: {
		uint64_t v;
		memcpy(&v, p, sizeof v);
		return v;
	}
	}
}

void ng_exporter_counter_set(ng_exporter_stats *s, enum ng_exporter_counter_id id, uint64_t v)
{
	assert((unsigned)id < NG_XC_COUNT);
	const ng_exporter_counter *c = &ng_exporter_counters[id];
	assert(c->kind != NG_XK_ERRORS);
	unsigned char *p = (unsigned char *)s + c->offset;
	switch (c->size) {
	case 1: *p = (uint8_t)v; break;
	case 2: {
		uint16_t x = (uint16_t)v;
		memcpy(p, &x, sizeof x);
		break;
	}
	case 4: {
		uint32_t x = (uint32_t)v;
		memcpy(p, &x, sizeof x);
		break;
	}
	default: memcpy(p, &v, sizeof v); break;
	}
}

void ng_exporter_stats_add(ng_exporter_stats *d, const ng_exporter_stats *s)
{
	for (int id = 0; id < NG_XC_COUNT; id++) {
		enum ng_exporter_kind kind = ng_exporter_counters[id].kind;
		if (kind == NG_XK_ERRORS) {
			for (int e = 0; e < NG_DERR_COUNT; e++)
				d->errors[e] += s->errors[e];
			continue;
		}
		uint64_t a = ng_exporter_counter_get(d, id), b = ng_exporter_counter_get(s, id);
		switch (kind) {
		case NG_XK_COUNTER: ng_exporter_counter_set(d, id, a + b); break;
		case NG_XK_TIME_MIN:
			if (b && (!a || b < a))
				ng_exporter_counter_set(d, id, b);
			break;
		case NG_XK_TIME_MAX:
			if (b > a)
				ng_exporter_counter_set(d, id, b);
			break;
		default: break; /* GAUGE, SOURCE: a last value does not add up */
		}
	}
}

/* ---- the bound counters (NG_LIMIT_COUNTERS) ---- */

#define NG_LK_GAUGE_COUNTER false
#define NG_LK_GAUGE_GAUGE true

const ng_limit_counter ng_limit_counters[NG_LC_COUNT] = {
#define X(field, name, kind, doc) {name, NG_LK_GAUGE_##kind, offsetof(ng_limit_stats, field), doc},
    NG_LIMIT_COUNTERS(X)
#undef X
};

void ng_limit_stats_add(ng_limit_stats *d, const ng_limit_stats *s)
{
	for (int i = 0; i < NG_LC_COUNT; i++) {
		if (ng_limit_counters[i].gauge)
			continue;
		uint64_t *v = (uint64_t *)(void *)((char *)d + ng_limit_counters[i].offset);
		*v += ng_limit_stat(s, i);
	}
}

bool ng_exporter_is_others(const ng_exporter_stats *s)
{
	static const uint8_t zero[16];
	return s->domain == NG_OTHERS_DOMAIN && s->version == NG_OTHERS_VERSION &&
	       !memcmp(s->exporter, zero, 16);
}
