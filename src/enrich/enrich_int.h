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

/* What one data record of a database resolves to (all interned IDs). */
typedef struct ng_geo_rec {
	uint32_t country, continent, city, as_name;
	uint32_t asn;
} ng_geo_rec;

typedef struct ng_geodb ng_geodb;

/* Opens `path`, walks its whole search tree and decodes every data record
 * it reaches (so a corrupt file fails here, at start, not per record), and
 * interns the names: city names in `lang` (falling back to "en").
 * Understands GeoIP2/GeoLite2 Country, City and ASN, DB-IP lite and IPinfo
 * lite layouts.  Returns NULL with "PATH: what is wrong" in err. */
ng_geodb *ng_geodb_open(const char *path, const char *lang, char *err, size_t errlen);
void ng_geodb_free(ng_geodb *db);

/* Looks `a` (16 bytes, IPv4-mapped) up.  Returns the record index (0: no
 * data) and the prefix length, in the address's own family (IPv4: 0-32),
 * over which the answer holds.  Counts lookup errors. */
uint32_t ng_geodb_lookup(ng_geodb *db, const uint8_t a[16], unsigned *plen);
const ng_geo_rec *ng_geodb_rec(const ng_geodb *db, uint32_t idx);
/* AS organisation of `asn` as the database names it (0 when unknown). */
uint32_t ng_geodb_as_name(const ng_geodb *db, uint32_t asn);
/* Starts fetching what ng_geodb_as_name(db, asn) will read (a hint: the
 * table is MBs, and a batch asks for many names at once). */
void ng_geodb_prefetch_as_name(const ng_geodb *db, uint32_t asn);
size_t ng_geodb_nrecs(const ng_geodb *db);
uint64_t ng_geodb_errors(const ng_geodb *db);
/* Identity of the file when opened, for replacement checks. */
void ng_geodb_stamp(const ng_geodb *db, dev_t *dev, ino_t *ino, int64_t *mtime_ns);

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

typedef struct ng_services ng_services;

/* Reads the system's services database (getservent) once into per-port
 * tables for tcp, udp and sctp.  NULL when out of memory. */
ng_services *ng_services_new(void);
/* Service name of the server side of a flow: the registered port of the
 * two (the lower one when both are), 0 when neither or not TCP/UDP/SCTP. */
uint32_t ng_services_lookup(const ng_services *s, uint8_t proto, uint16_t sport, uint16_t dport);
void ng_services_free(ng_services *s);

#endif
