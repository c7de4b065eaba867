/*
 * classify.c — classification rules and configured sampling rates (see
 * classify.h; the rule syntax is docs/configuration.md "Classification").
 *
 * A rule holds up to four conditions (exporter prefix, and POSIX extended
 * regular expressions on the exporter's name, the interface's name and
 * its description) and the attributes it sets.  Rules are tried in the
 * order of the file; an attribute takes the value of the first matching
 * rule that sets it (so a specific rule goes before a general one), and a
 * value's \0-\9 are the groups of the rule's last pattern (interface
 * description, else interface name, else exporter name).  A value that
 * comes out empty (an optional group that did not match) sets nothing:
 * a later rule may still set it.
 *
 * The caches: exporters and interfaces, open addressing on a hash of the
 * whole key (address, names, ifIndex), EXP_SLOTS and IF_SLOTS entries; a
 * table three quarters full is emptied (counted) rather than grown, so a
 * sender inventing interface names costs evaluations, not memory.  The
 * last answer of each kind is kept aside: the records of one segment come
 * mostly in runs of one exporter and interface.
 */
#include "enrich/classify.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/addr.h"
#include "core/strtab.h"

#define EXP_SLOTS 4096
#define IF_SLOTS 65536
#define GROUPS 10 /* \0 .. \9 */

struct rule {
	bool has_net;
	uint8_t net[16];
	unsigned plen;
	regex_t re[3]; /* exporter name, interface name, interface description */
	bool has_re[3];
	char *set[NG_CLASS_COUNT];
	bool exp_attrs, if_attrs; /* sets some of either kind */
};

struct exp_ent {
	uint8_t addr[16];
	uint32_t name;
	bool used;
	ng_class_exp v;
};

struct if_ent {
	uint8_t addr[16];
	uint32_t exp_name, ifindex, name, desc;
	bool used;
	ng_class_if v;
};

struct ng_classifier {
	struct rule *rules;
	size_t nrules;
	ng_cfg_sampling *samp;
	size_t nsamp;
	bool has_exp, has_if;
	struct exp_ent *exps;
	size_t nexp;
	struct if_ent *ifs;
	size_t nif;
	struct exp_ent last_exp;  /* the last answer given (copies) */
	struct if_ent last_if[2]; /* the last two (a record's in and out) */
	unsigned last_if_next;    /* which of them the next miss replaces */
	uint64_t evals, resets;
};

static void free_rule(struct rule *r)
{
	for (int i = 0; i < 3; i++)
		if (r->has_re[i])
			regfree(&r->re[i]);
	for (int i = 0; i < NG_CLASS_COUNT; i++)
		free(r->set[i]);
}

void ng_classifier_free(ng_classifier *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->nrules; i++)
		free_rule(&k->rules[i]);
	free(k->rules);
	free(k->samp);
	free(k->exps);
	free(k->ifs);
	free(k);
}

ng_classifier *ng_classifier_new(const ng_config *c, char *err, size_t errlen)
{
	ng_classifier *k = calloc(1, sizeof *k);
	if (!k || !(k->rules = calloc(c->nrules ? c->nrules : 1, sizeof *k->rules)) ||
	    !(k->samp = calloc(c->nsamplings ? c->nsamplings : 1, sizeof *k->samp)) ||
	    !(k->exps = calloc(EXP_SLOTS, sizeof *k->exps)) ||
	    !(k->ifs = calloc(IF_SLOTS, sizeof *k->ifs)))
		goto nomem;
	for (size_t i = 0; i < c->nrules; i++) {
		const ng_cfg_rule *cr = &c->rules[i];
		struct rule *r = &k->rules[k->nrules++];
		r->has_net = cr->has_net;
		memcpy(r->net, cr->net, 16);
		r->plen = cr->plen;
		const char *pat[3] = {cr->exporter_name, cr->if_name, cr->if_desc};
		for (int j = 0; j < 3; j++) {
			if (!pat[j])
				continue;
			int rc = regcomp(&r->re[j], pat[j], REG_EXTENDED);
			if (rc) {
				char why[128];
				regerror(rc, &r->re[j], why, sizeof why);
				snprintf(err, errlen, "classify rule at line %zu: '%s': %s",
				         cr->line, pat[j], why);
				ng_classifier_free(k);
				return NULL;
			}
			r->has_re[j] = true;
		}
		for (int j = 0; j < NG_CLASS_COUNT; j++) {
			if (!cr->set[j])
				continue;
			if (!(r->set[j] = strdup(cr->set[j])))
				goto nomem;
			if (j < NG_CLASS_FIRST_IF)
				r->exp_attrs = true;
			else
				r->if_attrs = true;
		}
		k->has_exp |= r->exp_attrs;
		k->has_if |= r->if_attrs;
	}
	memcpy(k->samp, c->samplings, c->nsamplings * sizeof *k->samp);
	k->nsamp = c->nsamplings;
	return k;
nomem:
	snprintf(err, errlen, "out of memory building the classification rules");
	ng_classifier_free(k);
	return NULL;
}

bool ng_classifier_has_exp(const ng_classifier *k)
{
	return k->has_exp;
}
bool ng_classifier_has_if(const ng_classifier *k)
{
	return k->has_if;
}
bool ng_classifier_has_sampling(const ng_classifier *k)
{
	return k->nsamp > 0;
}

/* ---- evaluating -------------------------------------------------------- */

/* Whether pattern j of r (absent: always) matches s; its groups into m. */
static bool matches(const struct rule *r, int j, const char *s, regmatch_t m[GROUPS])
{
	if (!r->has_re[j])
		return true;
	return regexec(&r->re[j], s ? s : "", GROUPS, m, 0) == 0;
}

/* `val` with \0-\9 replaced by the groups m of subject s, interned (0
 * when it comes out empty). */
static uint32_t expand(const char *val, const char *s, const regmatch_t *m)
{
	char out[NG_STR_MAX + 1];
	size_t n = 0;
	for (const char *p = val; *p && n < sizeof out - 1; p++) {
		if (*p == '\\' && p[1] >= '0' && p[1] <= '9') {
			int g = p[1] - '0';
			p++;
			if (!m || !s || m[g].rm_so < 0)
				continue;
			for (regoff_t i = m[g].rm_so; i < m[g].rm_eo && n < sizeof out - 1; i++)
				out[n++] = s[i];
		} else if (*p == '\\' && p[1] == '\\') {
			out[n++] = '\\';
			p++;
		} else {
			out[n++] = *p;
		}
	}
	return n ? ng_intern(out, n) : 0;
}

/* The rules over one subject: exporter (if_name == NULL and not `iface`)
 * or interface; the attributes [lo, hi) of out set first-wins. */
static void run(const ng_classifier *k, const uint8_t addr[16], const char *name,
                const char *if_name, const char *if_desc, bool iface, uint32_t *out, int lo, int hi)
{
	for (size_t i = 0; i < k->nrules; i++) {
		const struct rule *r = &k->rules[i];
		if (!(iface ? r->if_attrs : r->exp_attrs))
			continue;
		if (r->has_net && !ng_addr_in_prefix(addr, r->net, r->plen))
			continue;
		regmatch_t m[3][GROUPS];
		const char *subj[3] = {name, if_name, if_desc};
		bool ok = true;
		int last = -1;
		for (int j = 0; j < 3 && ok; j++) {
			ok = matches(r, j, subj[j], m[j]);
			if (r->has_re[j])
				last = j;
		}
		if (!ok)
			continue;
		for (int a = lo; a < hi; a++)
			if (r->set[a] && !out[a - lo])
				out[a - lo] = expand(r->set[a], last >= 0 ? subj[last] : NULL,
				                     last >= 0 ? m[last] : NULL);
	}
}

void ng_classify_exporter(const ng_classifier *k, const uint8_t addr[16], const char *name,
                          ng_class_exp *out)
{
	memset(out, 0, sizeof *out);
	run(k, addr, name, NULL, NULL, false, out->attr, 0, NG_CLASS_FIRST_IF);
	/* the sampling rate of the longest prefix holding the address */
	int best = -1;
	for (size_t i = 0; i < k->nsamp; i++)
		if (ng_addr_in_prefix(addr, k->samp[i].net, k->samp[i].plen) &&
		    (best < 0 || k->samp[i].plen > k->samp[best].plen))
			best = (int)i;
	if (best >= 0) {
		out->rate = k->samp[best].rate;
		out->override = k->samp[best].override;
	}
}

void ng_classify_interface(const ng_classifier *k, const uint8_t addr[16], const char *name,
                           const char *if_name, const char *if_desc, ng_class_if *out)
{
	memset(out, 0, sizeof *out);
	run(k, addr, name, if_name ? if_name : "", if_desc ? if_desc : "", true, out->attr,
	    NG_CLASS_FIRST_IF, NG_CLASS_COUNT);
}

/* ---- the caches ------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

static uint64_t hash_addr(const uint8_t a[16])
{
	uint64_t x, y;
	memcpy(&x, a, 8);
	memcpy(&y, a + 8, 8);
	return mix(mix(0, x), y);
}

const ng_class_exp *ng_classify_exp_cached(ng_classifier *k, const uint8_t addr[16], uint32_t name)
{
	if (k->last_exp.used && k->last_exp.name == name && !memcmp(k->last_exp.addr, addr, 16))
		return &k->last_exp.v;
	size_t j = mix(hash_addr(addr), name) & (EXP_SLOTS - 1);
	while (k->exps[j].used && (k->exps[j].name != name || memcmp(k->exps[j].addr, addr, 16)))
		j = (j + 1) & (EXP_SLOTS - 1);
	struct exp_ent *e = &k->exps[j];
	if (e->used) {
		k->last_exp = *e;
		return &e->v;
	}
	if (k->nexp >= EXP_SLOTS * 3 / 4) {
		memset(k->exps, 0, EXP_SLOTS * sizeof *k->exps);
		k->nexp = 0;
		k->resets++;
		j = mix(hash_addr(addr), name) & (EXP_SLOTS - 1);
		e = &k->exps[j];
	}
	k->evals++;
	k->nexp++;
	e->used = true;
	memcpy(e->addr, addr, 16);
	e->name = name;
	ng_classify_exporter(k, addr, name ? ng_str(name) : NULL, &e->v);
	k->last_exp = *e;
	return &e->v;
}

const ng_class_if *ng_classify_if_cached(ng_classifier *k, const uint8_t addr[16],
                                         uint32_t exp_name, uint32_t ifindex, uint32_t if_name,
                                         uint32_t if_desc)
{
	for (int m = 0; m < 2; m++) {
		const struct if_ent *l = &k->last_if[m];
		if (l->used && l->ifindex == ifindex && l->name == if_name && l->desc == if_desc &&
		    l->exp_name == exp_name && !memcmp(l->addr, addr, 16))
			return &l->v;
	}
	struct if_ent *memo = &k->last_if[k->last_if_next];
	k->last_if_next ^= 1;
	uint64_t h = mix(mix(mix(mix(hash_addr(addr), exp_name), ifindex), if_name), if_desc);
	size_t j = h & (IF_SLOTS - 1);
	for (;;) {
		struct if_ent *e = &k->ifs[j];
		if (!e->used)
			break;
		if (e->ifindex == ifindex && e->name == if_name && e->desc == if_desc &&
		    e->exp_name == exp_name && !memcmp(e->addr, addr, 16)) {
			*memo = *e;
			return &memo->v;
		}
		j = (j + 1) & (IF_SLOTS - 1);
	}
	if (k->nif >= IF_SLOTS * 3 / 4) {
		memset(k->ifs, 0, IF_SLOTS * sizeof *k->ifs);
		k->nif = 0;
		k->resets++;
		j = h & (IF_SLOTS - 1);
	}
	struct if_ent *e = &k->ifs[j];
	k->evals++;
	k->nif++;
	*e = (struct if_ent){.exp_name = exp_name,
	                     .ifindex = ifindex,
	                     .name = if_name,
	                     .desc = if_desc,
	                     .used = true};
	memcpy(e->addr, addr, 16);
	ng_classify_interface(k, addr, exp_name ? ng_str(exp_name) : NULL,
	                      if_name ? ng_str(if_name) : NULL, if_desc ? ng_str(if_desc) : NULL,
	                      &e->v);
	*memo = *e;
	return &memo->v;
}

void ng_classifier_stats(const ng_classifier *k, uint64_t *evals, uint64_t *resets)
{
	*evals = k->evals;
	*resets = k->resets;
}
