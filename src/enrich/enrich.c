/*
 * enrich.c — one enrichment table set and its application to a batch
 * (see enrich.h).
 *
 * Per address, one probe of a direct-mapped cache answers country, city,
 * AS and network together.  Each answer holds for a whole prefix (the
 * database's network, the trie's descent depth); the entry keeps the
 * longest of those prefixes, so any address inside it may reuse the entry:
 * the IPv4 cache is indexed by the /24 (a set of two entries in one cache
 * line, so the sub-networks of a /24 that a database splits finer do not
 * evict each other) and the IPv6 cache by the /48, and a hit is checked
 * against the stored prefix, never assumed.
 */
#include "enrich/enrich.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "core/bytes.h"
#include "core/log.h"
#include "core/strtab.h"
#include "enrich/classify.h"
#include "enrich/enrich_int.h"

/* sets of C4_WAYS entries in one cache line: 4 MiB (the lines touched are
 * the traffic's /24s, whatever the size: more sets only means fewer
 * conflicts) */
#define C4_BITS 16
#define C4_WAYS 2
#define C6_BITS 12

/* An entry keeps the AS answer itself (number and name), not the index of
 * the ASN database's record, and the name of the last AS number a record
 * carried for an address of the prefix when the database's differs (an
 * exporter's AS numbers are mostly the same for the same prefix): a hit
 * then reads no line but its set's.  The ASN records and the AS-name
 * table are MBs; a line of each per address was most of a probe's cost. */
struct c4 {
	uint32_t net;
	uint32_t netv_plen; /* network value << 6 | (prefix length + 1); 0 = empty */
	uint32_t geo;       /* GeoIP record index */
	uint32_t asn, as_name;
	uint32_t rasn, ras_name; /* a record's AS number (0: none yet) and its name */
	uint32_t pad_;
};

struct c4set {
	_Alignas(64) struct c4 w[C4_WAYS]; /* most recently filled first */
};
_Static_assert(sizeof(struct c4set) == 64, "a set is one cache line");

struct c6 {
	uint64_t hi, lo;
	uint32_t geo, as, netv;
	uint8_t plen1;
};

struct ifname {
	uint32_t index, name, desc;
};

struct exporter {
	uint8_t addr[16];
	uint32_t name;
	struct ifname *ifs; /* sorted by index */
	size_t nifs;
	/* ifs' position + 1 by index, for indexes below ndense (0: not
	 * configured), when they are small enough (DENSE_MAX): read per
	 * record, where a binary search's branches mispredicted */
	uint16_t *dense;
	uint32_t ndense;
};

/* the largest index with a position table: 64 KiB an exporter at most */
#define DENSE_MAX 32767

struct ng_enricher {
	ng_geodb *geo, *asn; /* asn may equal geo (one file for both) */
	ng_nettrie *nets;
	ng_services *svc;
	ng_classifier *cls;             /* classification rules, sampling rates (NULL: none) */
	bool cls_exp, cls_if, cls_samp; /* what it can set */
	struct cls_exp_memo *cexp;      /* CLS_EXP_MEMO of the classifier's answers */
	struct cls_if_memo *cif;        /* CLS_IF_MEMO ..., read inline per record */
	struct exporter *exps;
	size_t nexps;
	size_t nnets;
	char *paths[NG_ENRICH_MAX_FILES];
	size_t npaths;
	char *geo_path, *asn_path; /* the lists as configured */
	struct c4set *c4;
	struct c6 *c6;
	/* the tables' records, [0] = no data (&no_rec when there is no such
	 * database), and the ASN database's AS-name table: read inline */
	const ng_geo_rec *georec, *asrec;
	const ng_net_val *netval;
	ng_astab astab;
	const ng_flat *geo4, *asn4; /* the databases' IPv4 tries (prefetched), or NULL */
	ng_flatj joint;             /* both joined (geoflat.c) ... */
	bool has_joint;             /* ... when there are two, of the same strides */
	/* fields the set can give besides countries, AS and network names
	 * (ng_enricher_fields): a database with cities or continents, a
	 * configured network with a role or a site */
	bool has_city, has_continent, has_role, has_site;
	ng_enrich_stats st;
	/* The IPv4 cache is skipped while it answers fewer than half of the
	 * lookups (random addresses: reading, missing and refilling a line
	 * per address only added to the tables' own reads); one call in
	 * BYPASS_SAMPLE uses it anyway, to see whether that is still so. */
	bool bypass, use_cache;
	uint32_t calls;
	/* The cache answered all but 1/16 of the last call's lookups: the
	 * databases' entries are not prefetched for addresses the cache is
	 * probed for (a prefetch into the 200 MiB joined table per address,
	 * mostly a TLB miss, was about a tenth of heavy-tailed traffic's
	 * enrichment; perf) */
	bool db_quiet;
};

#define BYPASS_SAMPLE 16

/* The classifier's answers copied into small direct-mapped tables read
 * inline, per record, before the classifier's own cache (a call and a
 * hash): an exporter by its address, an interface by its exporter and
 * ifIndex; the whole key is compared, so a clash only costs a call. */
#define CLS_EXP_MEMO 64
#define CLS_IF_MEMO 1024
struct cls_exp_memo {
	uint64_t a, b; /* the exporter's address */
	uint32_t name;
	bool used;
	ng_class_exp v;
};
struct cls_if_memo {
	uint64_t a, b;
	uint32_t ename, index, name, desc, rdesc;
	bool used;
	ng_class_if v;
};

static const ng_geo_rec no_rec;

/* ---- build ------------------------------------------------------------ */

static int cmp_if(const void *a, const void *b)
{
	const struct ifname *x = a, *y = b;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int add_path(ng_enricher *e, const char *p)
{
	for (size_t i = 0; i < e->npaths; i++)
		if (!strcmp(e->paths[i], p))
			return 0;
	if (e->npaths == NG_ENRICH_MAX_FILES)
		return 0; /* cannot happen: a configuration and two lists of two */
	if (!(e->paths[e->npaths] = strdup(p)))
		return -1;
	e->npaths++;
	return 0;
}

/* Every file of the list `l` ("A,B": geoip.c) watched for replacement. */
static int add_paths(ng_enricher *e, const char *l)
{
	char one[4096];
	for (const char *p = l; *p;) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		snprintf(one, sizeof one, "%.*s", (int)n, p);
		if (*one && add_path(e, one) < 0)
			return -1;
		p += n + (c ? 1 : 0);
	}
	return 0;
}

static int build_exporters(ng_enricher *e, const ng_config *c)
{
	e->exps = calloc(c->nexps ? c->nexps : 1, sizeof *e->exps);
	if (!e->exps)
		return -1;
	for (size_t i = 0; i < c->nexps; i++) {
		struct exporter *x = &e->exps[e->nexps++];
		memcpy(x->addr, c->exps[i].addr, 16);
		x->name = c->exps[i].name ? ng_intern_cstr(c->exps[i].name) : 0;
		x->ifs = calloc(c->exps[i].nifs ? c->exps[i].nifs : 1, sizeof *x->ifs);
		if (!x->ifs)
			return -1;
		for (size_t j = 0; j < c->exps[i].nifs; j++) {
			const ng_cfg_iface *f = &c->exps[i].ifs[j];
			x->ifs[x->nifs].index = f->index;
			x->ifs[x->nifs].desc = f->description ? ng_intern_cstr(f->description) : 0;
			x->ifs[x->nifs++].name = f->name ? ng_intern_cstr(f->name) : 0;
		}
		qsort(x->ifs, x->nifs, sizeof *x->ifs, cmp_if);
		if (x->nifs && x->nifs < UINT16_MAX && x->ifs[x->nifs - 1].index <= DENSE_MAX) {
			x->ndense = x->ifs[x->nifs - 1].index + 1;
			if (!(x->dense = calloc(x->ndense, sizeof *x->dense)))
				return -1;
			/* backwards: an index configured twice finds its first
			 * entry, as the binary search does */
			for (size_t j = x->nifs; j-- > 0;)
				x->dense[x->ifs[j].index] = (uint16_t)(j + 1);
		}
	}
	return 0;
}

/* Opens one database; on failure fails the build or, when optional, warns. */
static int open_db(const ng_config *c, const char *path, ng_geodb **out, char *err, size_t errlen)
{
	*out = ng_geodb_open(path, c->language, err, errlen);
	if (*out)
		return 0;
	if (!c->geoip_optional)
		return -1;
	ng_warn("%s; running WITHOUT this enrichment (geoip_optional is set)", err);
	err[0] = 0;
	return 0;
}

ng_enricher *ng_enricher_build(const ng_config *c, char *err, size_t errlen)
{
	ng_enricher *e = calloc(1, sizeof *e);
	if (!e)
		goto nomem;
	/* 2 MiB aligned and advised for huge pages: probes land anywhere in
	 * the 4 MiB, two huge pages instead of 1024 TLB entries */
	const size_t c4len = ((size_t)1 << C4_BITS) * sizeof *e->c4;
	e->c4 = aligned_alloc((size_t)2 << 20, c4len);
	if (e->c4) {
#ifdef MADV_HUGEPAGE
		madvise(e->c4, c4len, MADV_HUGEPAGE); /* advice: failure is harmless */
#endif
		memset(e->c4, 0, c4len);
	}
	e->c6 = calloc((size_t)1 << C6_BITS, sizeof *e->c6);
	e->nets = ng_nettrie_new();
	if (!e->c4 || !e->c6 || !e->nets)
		goto nomem;
	if (c->path && add_path(e, c->path) < 0)
		goto nomem;
	if (c->geoip_db) {
		if (add_paths(e, c->geoip_db) < 0 || !(e->geo_path = strdup(c->geoip_db)))
			goto nomem;
		if (open_db(c, c->geoip_db, &e->geo, err, errlen) < 0)
			goto fail;
	}
	if (c->asn_db) {
		if (add_paths(e, c->asn_db) < 0 || !(e->asn_path = strdup(c->asn_db)))
			goto nomem;
		if (c->geoip_db && !strcmp(c->asn_db, c->geoip_db))
			e->asn = e->geo;
		else if (open_db(c, c->asn_db, &e->asn, err, errlen) < 0)
			goto fail;
	}
	if (!c->no_services && !(e->svc = ng_services_new()))
		goto nomem;
	for (size_t i = 0; i < c->nnets; i++) {
		const ng_cfg_network *w = &c->nets[i];
		ng_net_val v = {
		    .name = w->name ? ng_intern_cstr(w->name) : 0,
		    .role = w->role ? ng_intern_cstr(w->role) : 0,
		    .site = w->site ? ng_intern_cstr(w->site) : 0,
		};
		if (ng_nettrie_add(e->nets, w->net, w->plen, v) < 0)
			goto nomem;
		e->has_role |= v.role != 0;
		e->has_site |= v.site != 0;
	}
	e->nnets = c->nnets;
	if (build_exporters(e, c) < 0)
		goto nomem;
	if (c->nrules || c->nsamplings) {
		if (!(e->cls = ng_classifier_new(c, err, errlen)))
			goto fail;
		e->cls_exp = ng_classifier_has_exp(e->cls);
		e->cls_if = ng_classifier_has_if(e->cls);
		e->cls_samp = ng_classifier_has_sampling(e->cls);
		if (!(e->cexp = calloc(CLS_EXP_MEMO, sizeof *e->cexp)) ||
		    !(e->cif = calloc(CLS_IF_MEMO, sizeof *e->cif)))
			goto nomem;
	}
	e->georec = e->geo ? ng_geodb_rec(e->geo, 0) : &no_rec;
	e->asrec = e->asn ? ng_geodb_rec(e->asn, 0) : &no_rec;
	e->netval = ng_nettrie_val(e->nets, 0);
	e->geo4 = e->geo ? ng_geodb_flat4(e->geo) : NULL;
	e->asn4 = e->asn && e->asn != e->geo ? ng_geodb_flat4(e->asn) : NULL;
	/* one read of a joined root per address instead of one per database
	 * (a failure, e.g. different strides, only leaves them apart) */
	if (e->geo4 && e->asn4 && ng_flat_join(&e->joint, e->geo4, e->asn4) == 0) {
		/* the joined table answers every IPv4 lookup of this set: the
		 * databases' own IPv4 tries would only hold memory */
		e->has_joint = true;
		ng_geodb_drop_flat4(e->geo);
		ng_geodb_drop_flat4(e->asn);
		e->geo4 = e->asn4 = NULL;
	}
	if (e->asn)
		ng_geodb_astab(e->asn, &e->astab);
	e->st.geo_recs = e->geo ? ng_geodb_nrecs(e->geo) : 0;
	for (size_t j = 1; j <= e->st.geo_recs; j++) {
		e->has_city |= e->georec[j].city != 0;
		e->has_continent |= e->georec[j].continent != 0;
	}
	e->st.asn_recs = e->asn ? ng_geodb_nrecs(e->asn) : 0;
	return e;
nomem:
	snprintf(err, errlen, "out of memory building the enrichment tables");
fail:
	ng_enricher_free(e);
	return NULL;
}

void ng_enricher_free(ng_enricher *e)
{
	if (!e)
		return;
	if (e->asn != e->geo)
		ng_geodb_free(e->asn);
	ng_geodb_free(e->geo);
	ng_nettrie_free(e->nets);
	ng_services_free(e->svc);
	ng_classifier_free(e->cls);
	free(e->cexp);
	free(e->cif);
	for (size_t i = 0; i < e->nexps; i++) {
		free(e->exps[i].ifs);
		free(e->exps[i].dense);
	}
	free(e->exps);
	for (size_t i = 0; i < e->npaths; i++)
		free(e->paths[i]);
	free(e->geo_path);
	free(e->asn_path);
	free(e->c4);
	ng_flatj_free(&e->joint);
	free(e->c6);
	free(e);
}

/* ---- lookups ---------------------------------------------------------- */

/* What one address resolves to: GeoIP record, the ASN database's AS
 * number and name, network value. */
struct ainfo {
	const ng_geo_rec *geo;
	uint32_t asn, as_name;
	uint32_t rasn, ras_name; /* the record's own AS number, when it differs, and its name */
	const ng_net_val *net;
};

static inline unsigned umax(unsigned a, unsigned b)
{
	return a > b ? a : b;
}

/* Looks `a` up in every table; returns the prefix length (own family)
 * over which all the answers hold. */
static unsigned lookup_all(ng_enricher *e, const uint8_t a[16], uint32_t *geo, uint32_t *as,
                           uint32_t *netv)
{
	unsigned p1 = 0, p2 = 0, p3 = 0;
	*geo = e->geo ? ng_geodb_lookup(e->geo, a, &p1) : 0;
	if (e->asn == e->geo) {
		*as = *geo;
	} else if (e->asn) {
		*as = ng_geodb_lookup(e->asn, a, &p2);
	} else {
		*as = 0;
	}
	*netv = ng_nettrie_lookup(e->nets, a, &p3);
	return umax(umax(p1, p2), p3);
}

/* True when a (16 bytes) is IPv4-mapped (::ffff:a.b.c.d); *x = a.b.c.d in
 * host order (whatever the answer: a wrong guess for IPv6 is not used). */
static inline bool v4_of(const uint8_t a[16], uint32_t *x)
{
	uint64_t lo;
	uint32_t mid, v;
	memcpy(&lo, a, 8);
	memcpy(&mid, a + 8, 4);
	memcpy(&v, a + 12, 4);
	*x = __builtin_bswap32(v);
	return !lo && mid == __builtin_bswap32(0xffffu);
}

/* The IPv4 cache set of address x (host order): chosen by its /24. */
static inline struct c4set *c4_set(const ng_enricher *e, uint32_t x)
{
	return &e->c4[((x >> 8) * 2654435761u) >> (32 - C4_BITS)];
}

/* The entry of the IPv4 cache that answers for address x (host order), or
 * NULL.  Branch-light: an entry's mask comes from its prefix length by a
 * shift (length + 1 = 0 marks an empty entry). */
static inline struct c4 *c4_probe(struct c4set *set, uint32_t x)
{
	for (int i = 0; i < C4_WAYS; i++) {
		struct c4 *c = &set->w[i];
		uint32_t plen1 = c->netv_plen & 63; /* 0..33 */
		uint32_t m = (uint32_t)(UINT64_MAX << (33 - plen1));
		if (plen1 && !((x ^ c->net) & m))
			return c;
	}
	return NULL;
}

/* Keeps the answers for x's prefix of length p in its set, evicting the
 * least recently filled entry.  A network value too big to pack is not
 * cached (it is looked up every time: correct, only slower). */
static void c4_fill(ng_enricher *e, uint32_t x, unsigned p, uint32_t geo, uint32_t as,
                    uint32_t netv)
{
	if (netv >= (UINT32_C(1) << 26))
		return;
	struct c4set *set = c4_set(e, x);
	memmove(&set->w[1], &set->w[0], (C4_WAYS - 1) * sizeof set->w[0]);
	uint32_t m = p ? ~0u << (32 - p) : 0;
	set->w[0] = (struct c4){.net = x & m,
	                        .netv_plen = netv << 6 | (p + 1),
	                        .geo = geo,
	                        .asn = e->asrec[as].asn,
	                        .as_name = e->asrec[as].as_name};
}

/* *o from the tables' indexes. */
static void set_info(const ng_enricher *e, uint32_t geo, uint32_t as, uint32_t netv,
                     struct ainfo *o)
{
	o->geo = &e->georec[geo];
	o->asn = e->asrec[as].asn;
	o->as_name = e->asrec[as].as_name;
	o->rasn = o->ras_name = 0;
	o->net = &e->netval[netv];
}

/* The answers for an IPv6 address (a direct-mapped cache by the /48). */
static void v6_info(ng_enricher *e, const uint8_t a[16], struct ainfo *o)
{
	uint32_t geo, as, netv;
	uint64_t hi = ng_get_be64(a), lo = ng_get_be64(a + 8);
	struct c6 *c = &e->c6[((hi >> 16) * 0x9e3779b97f4a7c15ull) >> (64 - C6_BITS)];
	unsigned p = c->plen1 ? c->plen1 - 1u : 0;
	uint64_t mh = p == 0 ? 0 : p >= 64 ? ~0ull : ~0ull << (64 - p);
	uint64_t ml = p <= 64 ? 0 : p >= 128 ? ~0ull : ~0ull << (128 - p);
	if (c->plen1 && !((hi ^ c->hi) & mh) && !((lo ^ c->lo) & ml)) {
		geo = c->geo, as = c->as, netv = c->netv;
	} else {
		e->st.cache_misses++;
		p = lookup_all(e, a, &geo, &as, &netv);
		mh = p == 0 ? 0 : p >= 64 ? ~0ull : ~0ull << (64 - p);
		ml = p <= 64 ? 0 : p >= 128 ? ~0ull : ~0ull << (128 - p);
		*c = (struct c6){.hi = hi & mh,
		                 .lo = lo & ml,
		                 .geo = geo,
		                 .as = as,
		                 .netv = netv,
		                 .plen1 = (uint8_t)(p + 1)};
	}
	set_info(e, geo, as, netv, o);
}

static const struct exporter *find_exporter(const ng_enricher *e, const uint8_t a[16])
{
	for (size_t i = 0; i < e->nexps; i++)
		if (!memcmp(e->exps[i].addr, a, 16))
			return &e->exps[i];
	return NULL;
}

/* The configured interface `index` of exporter x, or NULL. */
static inline const struct ifname *if_conf(const struct exporter *x, uint32_t index)
{
	if (x->dense) {
		const uint16_t j = index < x->ndense ? x->dense[index] : 0;
		return j ? &x->ifs[j - 1] : NULL;
	}
	size_t lo = 0, hi = x->nifs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (x->ifs[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < x->nifs && x->ifs[lo].index == index ? &x->ifs[lo] : NULL;
}

static inline uint32_t if_name(const struct exporter *x, uint32_t index)
{
	const struct ifname *f = if_conf(x, index);
	return f ? f->name : 0;
}

/* Field f of record i of view v. */
static inline uint8_t *at(const ng_enrich_view *v, enum ng_field_id f, size_t i)
{
	return v->at[f] + i * v->step[f];
}

static inline uint32_t get_u32(const ng_enrich_view *v, enum ng_field_id f, size_t i)
{
	uint32_t x;
	memcpy(&x, at(v, f, i), 4);
	return x;
}

static inline uint16_t get_u16(const ng_enrich_view *v, enum ng_field_id f, size_t i)
{
	uint16_t x;
	memcpy(&x, at(v, f, i), 2);
	return x;
}

static inline void put_u32(const ng_enrich_view *v, enum ng_field_id f, size_t i, uint32_t x)
{
	memcpy(at(v, f, i), &x, 4);
}

/* The exporter's name and the interfaces its configuration names, for
 * record i of an exporter x of the configuration.  An interface the
 * configuration does not name keeps the name options data gave it
 * (interfaces.h), whether that was filled before or after. */
static inline void name_interfaces(const ng_enrich_view *v, size_t i, const struct exporter *x)
{
	uint32_t in = get_u32(v, NG_F_IN_IF, i), out = get_u32(v, NG_F_OUT_IF, i);
	uint32_t in_name = in ? if_name(x, in) : 0, out_name = out ? if_name(x, out) : 0;
	put_u32(v, NG_F_EXPORTER_NAME, i, x->name);
	if (in_name)
		put_u32(v, NG_F_IN_IF_NAME, i, in_name);
	if (out_name)
		put_u32(v, NG_F_OUT_IF_NAME, i, out_name);
}

/* AS number and name for one side: the record's AS when non-zero (named
 * from the ASN database when it knows it: ai holds its name, see
 * name_side), else the database's. */
static inline void set_as(const ng_enricher *e, const struct ainfo *ai, uint32_t *asn,
                          uint32_t *name, uint8_t *src, uint8_t db_bit)
{
	if (*asn) {
		*name = ai->asn == *asn ? ai->as_name : ai->ras_name;
	} else if (ai->asn) {
		*asn = ai->asn;
		/* GeoLite2-ASN leaves the organisation out of some networks of an
		 * AS it names elsewhere */
		*name = ai->as_name
		            ? ai->as_name
		            : ng_astab_name(&e->astab, *asn, ng_astab_slot(&e->astab, *asn));
		*src |= db_bit;
	}
}

/* Which fields fill() writes: the table set's flags, copied once per
 * call of ng_enricher_apply_view into a local that no store can reach.
 * Read through `e` after every field written (a byte store may alias
 * anything), they were reloaded per record, as were the view's column
 * pointers: together a third of the enricher's samples (perf, zipf). */
struct fillset {
	bool geo, continent, city, asn, role, site;
	const ng_services *svc;
};

static struct fillset fillset_of(const ng_enricher *e)
{
	return (struct fillset){.geo = e->geo != NULL,
	                        .continent = e->has_continent,
	                        .city = e->has_city,
	                        .asn = e->asn != NULL,
	                        .role = e->has_role,
	                        .site = e->has_site,
	                        .svc = e->svc};
}

/* The fields fill() computes, in the order of out_f: each record's
 * answers are gathered into a block-local array (in the core's cache) and
 * written a column at a time after the block (put_block), as
 * classify_block does: seventeen columns written side by side in the
 * record loop, besides the ones it reads, were more streams than the
 * hardware prefetcher follows. */
enum {
	O_SCOUNTRY,
	O_DCOUNTRY,
	O_SCONT,
	O_DCONT,
	O_SCITY,
	O_DCITY,
	O_SAS,
	O_DAS,
	O_SASNAME,
	O_DASNAME,
	O_SNET,
	O_DNET,
	O_SROLE,
	O_DROLE,
	O_SSITE,
	O_DSITE,
	O_SERVICE,
	NOUT
};
static const enum ng_field_id out_f[NOUT] = {
    NG_F_SRC_COUNTRY,  NG_F_DST_COUNTRY, NG_F_SRC_CONTINENT, NG_F_DST_CONTINENT, NG_F_SRC_CITY,
    NG_F_DST_CITY,     NG_F_SRC_AS,      NG_F_DST_AS,        NG_F_SRC_AS_NAME,   NG_F_DST_AS_NAME,
    NG_F_SRC_NET,      NG_F_DST_NET,     NG_F_SRC_NET_ROLE,  NG_F_DST_NET_ROLE,  NG_F_SRC_NET_SITE,
    NG_F_DST_NET_SITE, NG_F_SERVICE};

/* Which of out_f a set writes (fs): only those it can give
 * (ng_enricher_fields), so that the store need not carry columns of
 * zeros through its flush.  Returns their count, their indexes in k[]. */
static size_t fill_outputs(const struct fillset *fs, unsigned k[NOUT])
{
	size_t n = 0;
	for (unsigned j = 0; j < NOUT; j++) {
		bool on = j <= O_DCITY     ? fs->geo && (j >= O_SCITY   ? fs->city
		                                         : j >= O_SCONT ? fs->continent
		                                                        : true)
		          : j <= O_DASNAME ? fs->asn
		          : j <= O_DNET    ? true
		          : j <= O_DROLE   ? fs->role
		          : j <= O_DSITE   ? fs->site
		                           : fs->svc != NULL;
		if (on)
			k[n++] = j;
	}
	return n;
}

/* The answers for record i (its addresses' s, d) into o[..][j], row j of
 * the block; the AS source of the record into *asrc.  Every slot is
 * written, whether or not the set writes its column. */
static inline void fill(const ng_enricher *e, const struct fillset *fs, const ng_enrich_view *v,
                        size_t i, const struct ainfo *s, const struct ainfo *d, uint32_t (*o)[128],
                        size_t j, uint8_t *asrc)
{
	o[O_SCOUNTRY][j] = s->geo->country;
	o[O_DCOUNTRY][j] = d->geo->country;
	o[O_SCONT][j] = s->geo->continent;
	o[O_DCONT][j] = d->geo->continent;
	o[O_SCITY][j] = s->geo->city;
	o[O_DCITY][j] = d->geo->city;
	uint32_t sa = get_u32(v, NG_F_SRC_AS, i), da = get_u32(v, NG_F_DST_AS, i);
	uint32_t sname = 0, dname = 0;
	uint8_t src = 0;
	if (fs->asn) {
		set_as(e, s, &sa, &sname, &src, NG_AS_SRC_DB);
		set_as(e, d, &da, &dname, &src, NG_AS_DST_DB);
	}
	o[O_SAS][j] = sa;
	o[O_DAS][j] = da;
	o[O_SASNAME][j] = sname;
	o[O_DASNAME][j] = dname;
	*asrc = src;
	o[O_SNET][j] = s->net->name;
	o[O_DNET][j] = d->net->name;
	o[O_SROLE][j] = s->net->role;
	o[O_DROLE][j] = d->net->role;
	o[O_SSITE][j] = s->net->site;
	o[O_DSITE][j] = d->net->site;
	o[O_SERVICE][j] =
	    fs->svc ? ng_services_lookup(fs->svc, *at(v, NG_F_PROTOCOL, i),
	                                 get_u16(v, NG_F_SRC_PORT, i), get_u16(v, NG_F_DST_PORT, i))
	            : 0;
}

/* Rows [lo, lo + m) of the nk columns k[] (out_f) from o, and the AS
 * source column from asrc when the set names ASes. */
static void put_block(const struct fillset *fs, const ng_enrich_view *v, size_t lo, size_t m,
                      const unsigned *k, size_t nk, uint32_t (*o)[128], const uint8_t *asrc)
{
	for (size_t j = 0; j < nk; j++) {
		const enum ng_field_id f = out_f[k[j]];
		const size_t step = v->step[f];
		uint8_t *col = v->at[f] + lo * step;
		if (step == 4) {
			memcpy(col, o[k[j]], m * 4);
		} else {
			for (size_t i = 0; i < m; i++)
				memcpy(col + i * step, &o[k[j]][i], 4);
		}
	}
	if (fs->asn) {
		const size_t step = v->step[NG_F_AS_SOURCE];
		uint8_t *col = v->at[NG_F_AS_SOURCE] + lo * step;
		for (size_t i = 0; i < m; i++)
			col[i * step] = asrc[i];
	}
}

/* The configured sampling rate of the record's exporter (ce->rate, not 0)
 * where the record carries none, or over its own with override: the
 * counters scaled again from the ones sent, the source `config`
 * (flow.h NG_SAMPLING_CONFIG). */
static inline void sample_conf(const ng_enrich_view *v, size_t i, const ng_class_exp *ce)
{
	uint8_t *src = at(v, NG_F_SAMPLING_SOURCE, i);
	if (!ce->override && *src != NG_SAMPLING_NONE)
		return;
	uint64_t b, p;
	memcpy(&b, at(v, NG_F_BYTES_RAW, i), 8);
	memcpy(&p, at(v, NG_F_PACKETS_RAW, i), 8);
	b = b > UINT64_MAX / ce->rate ? UINT64_MAX : b * ce->rate;
	p = p > UINT64_MAX / ce->rate ? UINT64_MAX : p * ce->rate;
	memcpy(at(v, NG_F_BYTES, i), &b, 8);
	memcpy(at(v, NG_F_PACKETS, i), &p, 8);
	put_u32(v, NG_F_SAMPLING_RATE, i, ce->rate);
	*src = NG_SAMPLING_CONFIG;
}

/* One interface side of record i: its classification (the memo, else
 * the classifier's cache per exporter, ifIndex and names: classify.h)
 * copied to out[3] (boundary, connectivity, provider; zero when the
 * record has no such interface). */
static inline void classify_if(ng_enricher *e, const ng_enrich_view *v, size_t i,
                               const struct exporter *x, const uint8_t *exp, uint64_t ea,
                               uint64_t eb, uint32_t ename, enum ng_field_id fidx,
                               enum ng_field_id fname, enum ng_field_id fdesc, uint32_t out[3])
{
	uint32_t index = get_u32(v, fidx, i);
	if (!index) {
		out[0] = out[1] = out[2] = 0;
		return;
	}
	uint32_t name = get_u32(v, fname, i);
	uint32_t rdesc = get_u32(v, fdesc, i); /* SNMP ifAlias, options data IE 83 */
	struct cls_if_memo *m =
	    &e->cif[(ng_mix32((uint32_t)(eb >> 32) ^ index) & (CLS_IF_MEMO - 1))];
	/* the record's description, else the configuration's (fixed for
	 * (exporter, index) in this set: the memo's key need not look it up) */
	if (!(m->used && m->index == index && m->name == name && m->rdesc == rdesc && m->a == ea &&
	      m->b == eb && m->ename == ename)) {
		const struct ifname *cf = x && !rdesc ? if_conf(x, index) : NULL;
		uint32_t desc = rdesc ? rdesc : cf ? cf->desc : 0;
		*m = (struct cls_if_memo){
		    .a = ea,
		    .b = eb,
		    .ename = ename,
		    .index = index,
		    .name = name,
		    .desc = desc,
		    .rdesc = rdesc,
		    .used = true,
		    .v = *ng_classify_if_cached(e->cls, exp, ename, index, name, desc)};
	}
	memcpy(out, m->v.attr, 3 * sizeof *out);
}

/* The classification fields, one column after another: exporter group,
 * role, site, region, tenant, then the input and output interfaces'
 * boundary, connectivity, provider (NCLS of them). */
#define NCLS (NG_CLASS_FIRST_IF + 6)
static const enum ng_field_id cls_f[NCLS] = {
    NG_F_EXPORTER_GROUP,  NG_F_EXPORTER_ROLE,       NG_F_EXPORTER_SITE,      NG_F_EXPORTER_REGION,
    NG_F_EXPORTER_TENANT, NG_F_IN_IF_BOUNDARY,      NG_F_IN_IF_CONNECTIVITY, NG_F_IN_IF_PROVIDER,
    NG_F_OUT_IF_BOUNDARY, NG_F_OUT_IF_CONNECTIVITY, NG_F_OUT_IF_PROVIDER};

/*
 * Classification of records [lo, lo + m) (xs[i]: the exporter of the
 * configuration of record lo + i, or NULL): the cached answers, and the
 * configured sampling rate.  The answers are gathered a record at a time
 * into a[] (in the core's cache), then written a column at a time: the
 * eleven columns written side by side in the record loop, besides the
 * twenty others it reads and writes, were more streams than the hardware
 * prefetcher follows, and the copies waited for memory (perf, the
 * enricher's samples over the store's write_rows' on bench/classify.yaml:
 * classification's part 1.8 -> 0.5).
 */
static void classify_block(ng_enricher *e, const ng_enrich_view *v, size_t lo, size_t m,
                           const struct exporter *const *xs, uint32_t (*a)[NCLS])
{
	for (size_t i = 0; i < m; i++) {
		const size_t r = lo + i;
		const uint8_t *exp = at(v, NG_F_EXPORTER, r);
		uint32_t ename = get_u32(v, NG_F_EXPORTER_NAME, r);
		uint64_t ea, eb;
		memcpy(&ea, exp, 8);
		memcpy(&eb, exp + 8, 8);
		if (e->cls_exp || e->cls_samp) {
			struct cls_exp_memo *me =
			    &e->cexp[ng_mix32((uint32_t)(eb >> 32)) & (CLS_EXP_MEMO - 1)];
			if (!(me->used && me->a == ea && me->b == eb && me->name == ename))
				*me = (struct cls_exp_memo){
				    .a = ea,
				    .b = eb,
				    .name = ename,
				    .used = true,
				    .v = *ng_classify_exp_cached(e->cls, exp, ename)};
			memcpy(a[i], me->v.attr, NG_CLASS_FIRST_IF * sizeof a[i][0]);
			if (me->v.rate)
				sample_conf(v, r, &me->v);
		}
		if (e->cls_if) {
			classify_if(e, v, r, xs[i], exp, ea, eb, ename, NG_F_IN_IF, NG_F_IN_IF_NAME,
			            NG_F_IN_IF_DESC, &a[i][NG_CLASS_FIRST_IF]);
			classify_if(e, v, r, xs[i], exp, ea, eb, ename, NG_F_OUT_IF,
			            NG_F_OUT_IF_NAME, NG_F_OUT_IF_DESC,
			            &a[i][NG_CLASS_FIRST_IF + 3]);
		}
	}
	for (size_t k = e->cls_exp ? 0 : NG_CLASS_FIRST_IF;
	     k < (e->cls_if ? NCLS : NG_CLASS_FIRST_IF); k++) {
		uint8_t *col = v->at[cls_f[k]] + lo * v->step[cls_f[k]];
		const size_t step = v->step[cls_f[k]];
		for (size_t i = 0; i < m; i++)
			memcpy(col + i * step, &a[i][k], 4);
	}
}

/* What the first passes learn of one address of a record. */
struct side {
	uint32_t x;             /* IPv4 address, host order */
	bool v4;                /* else IPv6: x is not used */
	bool cached;            /* IPv4 and the cache is in use (e->use_cache) */
	bool miss;              /* IPv4 and not in the cache: looked up, to be cached */
	bool lookup;            /* the record's AS number is to be named from the table ... */
	size_t slot;            /* ... from this slot on (fetched meanwhile) */
	uint32_t geo, as, netv; /* after a miss: the tables' answers ... */
	unsigned plen;          /* ... over this prefix */
};

/* Pass 1 for one address: which cache set pass 2 reads, fetched meanwhile. */
static inline void start_side(const ng_enricher *e, const uint8_t a[16], struct side *sd)
{
	sd->v4 = v4_of(a, &sd->x);
	sd->cached = sd->v4 && e->use_cache;
	if (sd->v4) {
		if (sd->cached)
			__builtin_prefetch(c4_set(e, sd->x));
		/* and the databases' entries, which a cache miss reads next:
		 * under random addresses every probe misses */
		if (sd->cached && e->db_quiet) {
			/* heavy-tailed: the cache answers */
		} else if (e->has_joint) {
			ng_flatj_prefetch4(&e->joint, sd->x);
		} else {
			ng_flat_prefetch4(e->geo4, sd->x);
			ng_flat_prefetch4(e->asn4, sd->x);
		}
	}
}

/* Pass 2 for one address: the answers from the cache or, after a miss, the
 * tables' record indexes (their records fetched meanwhile, for pass 2b). */
static inline void probe_side(ng_enricher *e, const uint8_t a[16], struct side *sd, struct ainfo *o)
{
	sd->miss = false;
	if (!sd->v4) {
		v6_info(e, a, o);
		return;
	}
	const struct c4 *c = sd->cached ? c4_probe(c4_set(e, sd->x), sd->x) : NULL;
	if (c) {
		o->geo = &e->georec[c->geo];
		o->asn = c->asn;
		o->as_name = c->as_name;
		o->rasn = c->rasn;
		o->ras_name = c->ras_name;
		o->net = &e->netval[c->netv_plen >> 6];
		return;
	}
	e->st.cache_misses++;
	sd->miss = true;
	if (e->has_joint) {
		unsigned pj = ng_flatj_get4(&e->joint, sd->x, &sd->geo, &sd->as), pn;
		sd->netv = ng_nettrie_lookup(e->nets, a, &pn);
		sd->plen = umax(pj, pn);
	} else {
		sd->plen = lookup_all(e, a, &sd->geo, &sd->as, &sd->netv);
	}
	__builtin_prefetch(&e->georec[sd->geo]);
	__builtin_prefetch(&e->asrec[sd->as]);
}

/* Pass 2b for one address and the record's AS number `asn` on that side:
 * caches a miss's answers; when the record's AS number is neither the
 * database's nor the one the cache remembers, the AS-name slot for pass
 * 3, fetched meanwhile. */
static inline void settle_side(ng_enricher *e, uint32_t asn, struct side *sd, struct ainfo *o)
{
	if (sd->miss) {
		if (sd->cached)
			c4_fill(e, sd->x, sd->plen, sd->geo, sd->as, sd->netv);
		set_info(e, sd->geo, sd->as, sd->netv, o);
	}
	sd->lookup = asn && e->asn && asn != o->asn && asn != o->rasn;
	if (sd->lookup) {
		sd->slot = ng_astab_slot(&e->astab, asn);
		if (e->astab.kv)
			__builtin_prefetch(&e->astab.kv[2 * sd->slot]);
	}
}

/* Pass 3 for one address, before the fields are filled: names the
 * record's AS number `asn` when pass 2 found it to be looked up, and has
 * the cache remember it for the address's prefix. */
static inline void name_side(ng_enricher *e, uint32_t asn, const struct side *sd, struct ainfo *o)
{
	if (!sd->lookup)
		return;
	o->rasn = asn;
	o->ras_name = ng_astab_name(&e->astab, asn, sd->slot);
	if (sd->cached) {
		struct c4 *c = c4_probe(c4_set(e, sd->x), sd->x);
		if (c) {
			c->rasn = asn;
			c->ras_name = o->ras_name;
		}
	}
}

/*
 * Passes over blocks of BLOCK records, so that memory is waited for in
 * parallel rather than once per record: fetch every record's cache sets
 * and the databases' IPv4 root entries (geoflat.c), then probe the sets
 * (now in cache) and, on a miss, look the databases up (their entries now
 * in cache; one more line for a network finer than the root's stride) and
 * fetch the records found, then cache those answers and fetch the
 * AS-name slots of the record AS numbers the cache cannot name, then fill
 * the fields.  Under uniformly random addresses every probe misses, and no
 * step waits for memory alone.  The
 * cache (1 MiB) and the AS-name table (MBs) do not stay in the core's
 * caches; one record at a time, each waited for memory.  A hit reads one
 * line per address; the rest (GeoIP country records, network values,
 * services bitmap) is small and stays cached.  Everything on this path is
 * inline: calls and recomputed hashes were a third of its cost.
 */
void ng_enricher_apply_view(ng_enricher *e, const ng_enrich_view *view)
{
	enum { BLOCK = 128 };
	/* locals no store through a column can alias (see struct fillset);
	 * classify_block, not inlined, is given `view` so that they stay so */
	const ng_enrich_view lv = *view, *v = &lv;
	const struct fillset fs = fillset_of(e);
	unsigned fk[NOUT];
	const size_t nfk = fill_outputs(&fs, fk);
	struct ainfo s[BLOCK], d[BLOCK];
	struct side ss[2][BLOCK], ds[2][BLOCK]; /* this block's and the next's */
	const struct exporter *x = NULL, *xs[BLOCK];
	uint32_t ca[BLOCK][NCLS]; /* classify_block's answers */
	uint32_t fo[NOUT][BLOCK]; /* fill's answers, and its AS sources */
	uint8_t asrc[BLOCK];
	_Static_assert(BLOCK == 128, "fill() and put_block() take rows of 128");
	const uint8_t *last_exp = NULL;
	const size_t n = v->n;
	uint64_t misses = e->st.cache_misses;
	e->use_cache = !e->bypass || e->calls++ % BYPASS_SAMPLE == 0;
	for (size_t i = 0; i < n && i < BLOCK; i++) {
		start_side(e, at(v, NG_F_SRC_ADDR, i), &ss[0][i]);
		start_side(e, at(v, NG_F_DST_ADDR, i), &ds[0][i]);
	}
	for (size_t lo = 0, cur = 0; lo < n; lo += BLOCK, cur ^= 1) {
		size_t m = n - lo < BLOCK ? n - lo : BLOCK;
		size_t nm = n - lo - m < BLOCK ? n - lo - m : BLOCK;
		struct side *sc = ss[cur], *dc = ds[cur], *sn = ss[cur ^ 1], *dn = ds[cur ^ 1];
		for (size_t i = 0; i < m; i++) {
			probe_side(e, at(v, NG_F_SRC_ADDR, lo + i), &sc[i], &s[i]);
			probe_side(e, at(v, NG_F_DST_ADDR, lo + i), &dc[i], &d[i]);
		}
		for (size_t i = 0; i < m; i++) {
			settle_side(e, get_u32(v, NG_F_SRC_AS, lo + i), &sc[i], &s[i]);
			settle_side(e, get_u32(v, NG_F_DST_AS, lo + i), &dc[i], &d[i]);
		}
		for (size_t i = 0; i < m; i++) {
			const size_t r = lo + i;
			/* the next block's sets are fetched while this one is
			 * filled: its memory waits overlap this work */
			if (i < nm) {
				start_side(e, at(v, NG_F_SRC_ADDR, r + m), &sn[i]);
				start_side(e, at(v, NG_F_DST_ADDR, r + m), &dn[i]);
			}
			name_side(e, get_u32(v, NG_F_SRC_AS, r), &sc[i], &s[i]);
			name_side(e, get_u32(v, NG_F_DST_AS, r), &dc[i], &d[i]);
			if (e->nexps) {
				const uint8_t *exp = at(v, NG_F_EXPORTER, r);
				if (!last_exp || memcmp(last_exp, exp, 16)) {
					x = find_exporter(e, exp);
					last_exp = exp;
				}
				if (x)
					name_interfaces(v, r, x);
			}
			xs[i] = x;
			fill(e, &fs, v, r, &s[i], &d[i], fo, i, &asrc[i]);
		}
		put_block(&fs, v, lo, m, fk, nfk, fo, asrc);
		if (e->cls)
			classify_block(e, view, lo, m, xs, ca);
	}
	uint64_t missed = e->st.cache_misses - misses;
	e->st.cache_hits += 2 * (uint64_t)n - missed;
	e->st.records += n;
	if (e->use_cache && n >= BLOCK) { /* a big enough sample: decide again */
		e->bypass = 2 * missed > 2 * (uint64_t)n;
		e->db_quiet = 16 * missed < 2 * (uint64_t)n;
	}
}

void ng_enrich_view_rows(ng_enrich_view *v, ng_flow *flows, size_t n)
{
	v->n = n;
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		v->at[f] = (uint8_t *)flows + ng_fields[f].offset;
		v->step[f] = sizeof *flows;
	}
}

void ng_enricher_apply(ng_enricher *e, ng_flow *flows, size_t n)
{
	ng_enrich_view v;
	ng_enrich_view_rows(&v, flows, n);
	ng_enricher_apply_view(e, &v);
}

ng_colset ng_enricher_fields(const ng_enricher *e)
{
	static const ng_colset always = NG_COLSET(NG_F_SRC_ADDR, NG_F_DST_ADDR, NG_F_SRC_AS,
	                                          NG_F_DST_AS, NG_F_SRC_NET, NG_F_DST_NET);
	static const ng_colset country = NG_COLSET(NG_F_SRC_COUNTRY, NG_F_DST_COUNTRY);
	static const ng_colset continent = NG_COLSET(NG_F_SRC_CONTINENT, NG_F_DST_CONTINENT);
	static const ng_colset city = NG_COLSET(NG_F_SRC_CITY, NG_F_DST_CITY);
	static const ng_colset as_name =
	    NG_COLSET(NG_F_SRC_AS_NAME, NG_F_DST_AS_NAME, NG_F_AS_SOURCE);
	static const ng_colset role = NG_COLSET(NG_F_SRC_NET_ROLE, NG_F_DST_NET_ROLE);
	static const ng_colset site = NG_COLSET(NG_F_SRC_NET_SITE, NG_F_DST_NET_SITE);
	static const ng_colset service =
	    NG_COLSET(NG_F_PROTOCOL, NG_F_SRC_PORT, NG_F_DST_PORT, NG_F_SERVICE);
	static const ng_colset exporter =
	    NG_COLSET(NG_F_EXPORTER, NG_F_IN_IF, NG_F_OUT_IF, NG_F_EXPORTER_NAME, NG_F_IN_IF_NAME,
	              NG_F_OUT_IF_NAME);
	static const ng_colset cls_exp =
	    NG_COLSET(NG_F_EXPORTER_GROUP, NG_F_EXPORTER_ROLE, NG_F_EXPORTER_SITE,
	              NG_F_EXPORTER_REGION, NG_F_EXPORTER_TENANT);
	static const ng_colset cls_if =
	    NG_COLSET(NG_F_IN_IF_BOUNDARY, NG_F_OUT_IF_BOUNDARY, NG_F_IN_IF_CONNECTIVITY,
	              NG_F_OUT_IF_CONNECTIVITY, NG_F_IN_IF_PROVIDER, NG_F_OUT_IF_PROVIDER);
	static const ng_colset if_desc = NG_COLSET(NG_F_IN_IF_DESC, NG_F_OUT_IF_DESC);
	static const ng_colset samp =
	    NG_COLSET(NG_F_SAMPLING_RATE, NG_F_SAMPLING_SOURCE, NG_F_BYTES, NG_F_PACKETS,
	              NG_F_BYTES_RAW, NG_F_PACKETS_RAW);
	ng_colset m = always;
	if (e->cls) /* reads the exporter, its name and the interfaces' */
		m = ng_colset_union(ng_colset_union(m, exporter), if_desc);
	if (e->cls_exp)
		m = ng_colset_union(m, cls_exp);
	if (e->cls_if)
		m = ng_colset_union(m, cls_if);
	if (e->cls_samp)
		m = ng_colset_union(m, samp);
	if (e->geo)
		m = ng_colset_union(m, country);
	if (e->geo && e->has_continent)
		m = ng_colset_union(m, continent);
	if (e->geo && e->has_city)
		m = ng_colset_union(m, city);
	if (e->asn)
		m = ng_colset_union(m, as_name);
	if (e->has_role)
		m = ng_colset_union(m, role);
	if (e->has_site)
		m = ng_colset_union(m, site);
	if (e->svc)
		m = ng_colset_union(m, service);
	if (e->nexps)
		m = ng_colset_union(m, exporter);
	return m;
}

ng_colset ng_enricher_fields_whole(const ng_enricher *e)
{
	const struct fillset fs = fillset_of(e);
	unsigned k[NOUT];
	const size_t nk = fill_outputs(&fs, k);
	ng_colset m = {{0}};
	for (size_t j = 0; j < nk; j++)
		if (out_f[k[j]] != NG_F_SRC_AS && out_f[k[j]] != NG_F_DST_AS) /* read first */
			ng_colset_add(&m, out_f[k[j]]);
	if (fs.asn)
		ng_colset_add(&m, NG_F_AS_SOURCE);
	/* classify_block writes every row of the columns it writes */
	if (e->cls)
		for (size_t j = e->cls_exp ? 0 : NG_CLASS_FIRST_IF;
		     j < (e->cls_if ? NCLS : NG_CLASS_FIRST_IF); j++)
			ng_colset_add(&m, cls_f[j]);
	return m;
}

/* " (N records, lookup tables X MiB built in Y ms)" of db, into buf;
 * `joined`: its IPv4 trie is in the set's joined table (not counted). */
static const char *describe_db(const ng_geodb *db, bool joined, char *buf, size_t len)
{
	if (!db)
		return "";
	size_t bytes;
	int64_t ns;
	ng_geodb_flat_cost(db, &bytes, &ns);
	if (ns)
		snprintf(buf, len, " (%zu records, lookup tables %.1f MiB%s built in %.0f ms)",
		         ng_geodb_nrecs(db), bytes / 1048576.0,
		         joined ? " + the joined IPv4 one" : "", ns / 1e6);
	else
		snprintf(buf, len, " (%zu records, looked up by its search tree)",
		         ng_geodb_nrecs(db));
	return buf;
}

char *ng_enricher_describe(const ng_enricher *e, char *buf, size_t len)
{
	char g[96], a[96], j[96] = "";
	if (e->has_joint)
		snprintf(j, sizeof j, ", the joined IPv4 table %.1f MiB",
		         e->joint.n * sizeof *e->joint.e / 1048576.0);
	snprintf(buf, len,
	         "GeoIP %s%s, ASN %s%s%s, %zu networks (+ built-in classes), %zu exporters, "
	         "services %s",
	         e->geo ? e->geo_path : "none", describe_db(e->geo, e->has_joint, g, sizeof g),
	         e->asn ? e->asn_path : "none",
	         e->asn == e->geo ? (e->asn ? " (the same file)" : "")
	                          : describe_db(e->asn, e->has_joint, a, sizeof a),
	         j, e->nnets, e->nexps, e->svc ? "on" : "off");
	return buf;
}

void ng_enricher_get_stats(const ng_enricher *e, ng_enrich_stats *s)
{
	*s = e->st;
	if (e->cls)
		ng_classifier_stats(e->cls, &s->class_evals, &s->class_resets);
	s->lookup_errors = (e->geo ? ng_geodb_errors(e->geo) : 0) +
	                   (e->asn && e->asn != e->geo ? ng_geodb_errors(e->asn) : 0);
}

bool ng_enricher_dbip(const ng_enricher *e)
{
	return (e->geo && ng_geodb_is_dbip(e->geo)) || (e->asn && ng_geodb_is_dbip(e->asn));
}

size_t ng_enricher_files(const ng_enricher *e, const char *paths[NG_ENRICH_MAX_FILES])
{
	for (size_t i = 0; i < e->npaths; i++)
		paths[i] = e->paths[i];
	return e->npaths;
}
