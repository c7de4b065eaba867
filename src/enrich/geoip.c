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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/bigmem.h"
#include "core/bytes.h"
#include "core/log.h"
#include "core/strtab.h"
#include "enrich/enrich_int.h"

struct ng_geodb {
	MMDB_s mmdb;
	bool open;
	char *path;
	char lang[16];
	dev_t dev;
	ino_t ino;
	int64_t mtime_ns;
	ng_geo_rec *recs; /* [0] = no data; distinct answers */
	size_t nrecs, caprecs;
	uint32_t *dslot; /* records by content (while walking): index, 0 = empty */
	size_t dcap;
	uint32_t *hkey, *hval;   /* data offset + 1 → record index; 0 = empty */
	size_t hcap, noffs;      /* slots, offsets held */
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

/* Adds the record at data offset `off` once; returns -1 on a corrupt
 * record or out of memory (err set). */
static int add_entry(ng_geodb *db, MMDB_entry_s *e, char *err, size_t errlen)
{
	uint32_t k = e->offset + 1;
	if (hash_grow(&db->hkey, &db->hval, &db->hcap, db->noffs) < 0)
		goto nomem;
	size_t j = hash_slot(db->hkey, db->hcap, k);
	if (db->hkey[j])
		return 0; /* seen */
	/* Full decode: follows every pointer, so a broken one shows now. */
	MMDB_entry_data_list_s *list = NULL;
	int rc = MMDB_get_entry_data_list(e, &list);
	MMDB_free_entry_data_list(list);
	if (rc != MMDB_SUCCESS) {
		msg(err, errlen, "%s: data record at offset %u: %s", db->path, e->offset,
		    MMDB_strerror(rc));
		return -1;
	}
	if (db->nrecs == db->caprecs) {
		size_t nc = db->caprecs * 2;
		ng_geo_rec *n = realloc(db->recs, nc * sizeof *n);
		if (!n)
			goto nomem;
		db->recs = n;
		db->caprecs = nc;
	}
	ng_geo_rec *r = &db->recs[db->nrecs];
	if (decode_rec(db, e, r) < 0) {
		msg(err, errlen, "%s: data record at offset %u is corrupt", db->path, e->offset);
		return -1;
	}
	if (dedup_grow(db) < 0)
		goto nomem;
	size_t d = dedup_slot(db, r);
	db->hkey[j] = k;
	db->noffs++;
	if (db->dslot[d]) { /* the same answer as an earlier record */
		db->hval[j] = db->dslot[d];
		return 0;
	}
	db->dslot[d] = (uint32_t)db->nrecs;
	db->hval[j] = (uint32_t)db->nrecs++;
	if (r->asn && r->as_name) {
		if (hash_grow(&db->askey, &db->asval, &db->ascap, db->asn_n) < 0)
			goto nomem;
		size_t a = hash_slot(db->askey, db->ascap, r->asn);
		if (!db->askey[a]) {
			db->askey[a] = r->asn;
			db->asval[a] = r->as_name;
			db->asn_n++;
		}
	}
	return 0;
nomem:
	msg(err, errlen, "%s: out of memory", db->path);
	return -1;
}

/* Walks the search tree depth first (explicit stack: the tree is up to
 * 128 deep, an IPv6 tree's IPv4 aliases are visited once). */
static int walk(ng_geodb *db, char *err, size_t errlen)
{
	uint32_t nodes = db->mmdb.metadata.node_count;
	uint8_t *seen = calloc(nodes / 8 + 1, 1);
	uint32_t *stack = malloc(sizeof *stack * 260);
	int rc = -1;
	if (!seen || !stack) {
		msg(err, errlen, "%s: out of memory", db->path);
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
		int r = MMDB_read_node(&db->mmdb, n, &sn);
		if (r != MMDB_SUCCESS) {
			msg(err, errlen, "%s: search tree node %u: %s", db->path, n,
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
					    db->path);
					goto out;
				}
				stack[sp++] = (uint32_t)recs[s];
				break;
			case MMDB_RECORD_TYPE_DATA:
				if (add_entry(db, ents[s], err, errlen) < 0)
					goto out;
				break;
			case MMDB_RECORD_TYPE_EMPTY: break;
			default:
				msg(err, errlen,
				    "%s: search tree node %u points outside the file "
				    "(invalid record %" PRIu64 ")",
				    db->path, n, recs[s]);
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
	const ng_geodb *db = ctx;
	size_t j = hash_slot(db->hkey, db->hcap, off + 1);
	return db->hkey[j] ? db->hval[j] : 0;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Builds the IPv4 trie (layout `layout`) from the IPv4 subtree (an IPv6
 * tree's node at ::/96, found as libmaxminddb does: 96 left records from
 * the root, or the leaf met before) and, for an IPv6 tree, the IPv6 trie.
 * A failure is not an error: the database is then looked up by its tree
 * (logged).  -1 only on a bad layout (err set). */
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
	const char *l6 = strchr(layout, '/') ? strchr(layout, '/') + 1 : "16-4";
	uint8_t type = MMDB_RECORD_TYPE_SEARCH_NODE;
	uint64_t val = 0;
	MMDB_entry_s ent = {.mmdb = &db->mmdb};
	bool v6 = db->mmdb.metadata.ip_version == 6;
	for (int d = 0; v6 && d < 96 && type == MMDB_RECORD_TYPE_SEARCH_NODE; d++) {
		MMDB_search_node_s sn;
		if (MMDB_read_node(&db->mmdb, (uint32_t)val, &sn) != MMDB_SUCCESS)
			return 0; /* the walk read every node: cannot happen */
		type = sn.left_record_type;
		val = sn.left_record;
		ent = sn.left_record_entry;
	}
	uint32_t v4start = type == MMDB_RECORD_TYPE_SEARCH_NODE ? (uint32_t)val : UINT32_MAX;
	if (v4start == UINT32_MAX) /* no IPv4 data: one leaf; no 2^24-entry root for it */
		ng_flat_layout(&db->f4, "4", 32);
	const char *why = NULL;
	MMDB_entry_s none = {.mmdb = &db->mmdb};
	if (ng_flat_build(&db->f4, &db->mmdb, type, val, &ent, UINT32_MAX, rec_of_offset, db,
	                  &why) < 0 ||
	    (v6 && (ng_flat_layout(&db->f6, l6, 128) < 0 ||
	            ng_flat_build(&db->f6, &db->mmdb, MMDB_RECORD_TYPE_SEARCH_NODE, 0, &none,
	                          v4start, rec_of_offset, db, &why) < 0))) {
		ng_warn("%s: looked up by its search tree, not flattened: %s", db->path,
		        why ? why : "bad layout");
		ng_flat_free(&db->f4);
		ng_flat_free(&db->f6);
		return 0;
	}
	db->flat4 = true;
	db->flat6 = v6;
	db->flat_ns = mono_ns() - t0;
	return 0;
}

const ng_flat *ng_geodb_flat4(const ng_geodb *db)
{
	return db->flat4 ? &db->f4 : NULL;
}

void ng_geodb_drop_flat4(ng_geodb *db)
{
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

ng_geodb *ng_geodb_open_layout(const char *path, const char *lang, const char *layout, char *err,
                               size_t errlen)
{
	ng_geodb *db = calloc(1, sizeof *db);
	if (!db || !(db->path = strdup(path))) {
		free(db);
		msg(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	snprintf(db->lang, sizeof db->lang, "%s", lang && *lang ? lang : "en");
	struct stat st;
	if (stat(path, &st) < 0) {
		msg(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		msg(err, errlen, "%s: %s", path,
		    S_ISDIR(st.st_mode) ? "is a directory, not a database file"
		                        : "not a regular file");
		goto fail;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) { /* MMDB_open would only say "IO error" */
		msg(err, errlen, "%s: cannot read: %s", path, strerror(errno));
		goto fail;
	}
	close(fd);
	db->dev = st.st_dev;
	db->ino = st.st_ino;
	db->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	int rc = MMDB_open(path, MMDB_MODE_MMAP, &db->mmdb);
	if (rc != MMDB_SUCCESS) {
		if (rc == MMDB_IO_ERROR)
			msg(err, errlen, "%s: %s (%s)", path, MMDB_strerror(rc), strerror(errno));
		else
			msg(err, errlen, "%s: not a usable MaxMind DB: %s", path,
			    MMDB_strerror(rc));
		goto fail;
	}
	db->open = true;
	db->caprecs = 256;
	db->recs = calloc(db->caprecs, sizeof *db->recs);
	if (!db->recs) {
		msg(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	db->nrecs = 1;
	if (walk(db, err, errlen) < 0)
		goto fail;
	/* the records on huge pages, 64 B aligned: read at random on a miss */
	size_t rbytes = (db->nrecs * sizeof *db->recs + 63) & ~(size_t)63;
	ng_geo_rec *recs =
	    rbytes >= ((size_t)2 << 20) ? ng_alloc_big(rbytes) : aligned_alloc(64, rbytes);
	if (!recs) {
		msg(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	memcpy(recs, db->recs, db->nrecs * sizeof *recs);
	free(db->recs);
	db->recs = recs;
	if (db->ascap) { /* a name is then one cache line away, not two */
		if (!(db->askv = ng_calloc_big(db->ascap * 2, sizeof *db->askv))) {
			msg(err, errlen, "%s: out of memory", path);
			goto fail;
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
	/* A 2^24-entry root (64 MiB) pays for itself on a big database
	 * (GeoLite2-Country and -ASN have about 2^19-2^20 nodes); a small
	 * one's nodes stay in the caches under a 2^16-entry root. */
	if (!layout)
		layout = db->mmdb.metadata.node_count >= (1u << 18) ? "24-4" : "16-4";
	if (build_flat(db, layout, err, errlen) < 0)
		goto fail;
	return db;
fail:
	ng_geodb_free(db);
	return NULL;
}

void ng_geodb_free(ng_geodb *db)
{
	if (!db)
		return;
	if (db->open)
		MMDB_close(&db->mmdb);
	free(db->path);
	free(db->recs);
	free(db->hkey);
	free(db->hval);
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
	if (v4) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;
		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, a + 12, 4);
	} else {
		if (db->mmdb.metadata.ip_version == 4) {
			*plen = 0; /* no IPv6 data at all */
			return 0;
		}
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
		memset(s, 0, sizeof *s);
		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, a, 16);
	}
	int merr;
	MMDB_lookup_result_s r = MMDB_lookup_sockaddr(&db->mmdb, (struct sockaddr *)&ss, &merr);
	if (merr != MMDB_SUCCESS) {
		db->errors++;
		*plen = v4 ? 32 : 128;
		return 0;
	}
	unsigned nm = r.netmask;
	if (v4 && db->mmdb.metadata.ip_version == 6) /* IPv4 in an IPv6 tree: ::a.b.c.d/96+n; */
		nm = nm >= 96 ? nm - 96 : 0;         /* a leaf above ::/96 holds for all IPv4 */
	*plen = nm;
	if (!r.found_entry)
		return 0;
	size_t j = hash_slot(db->hkey, db->hcap, r.entry.offset + 1);
	if (!db->hkey[j]) {
		db->errors++; /* the walk saw every record: cannot happen */
		return 0;
	}
	return db->hval[j];
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

int ng_geodb_probe(const char *path, uint64_t *built, char *type, size_t typelen, char *err,
                   size_t errlen)
{
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
