/*
 * interfaces.c — interface names a running collector learns, and
 * STORE/state/interfaces.tsv.
 *
 * Exporters name their interfaces in options data (NetFlow v9 / IPFIX
 * interface tables); the decoder collects them as they come, and once a
 * second the receive thread moves them into its table (c->ifs,
 * enrich/interfaces.h), from which hand_on (receive.c) fills the records'
 * interface names.  With SNMP (enrich/snmp.h) the same second hands the
 * poller the interfaces records named since (ng_iftab_take_new) and takes
 * what it learnt into the table (ng_snmp_take: names, ifAlias, speeds),
 * which wins over options data.  Names from the configuration (exporters: in the YAML
 * file) win wherever both exist: the enrichment tables apply those, before
 * or after (enrich/).  Each worker's table is read and written by that
 * worker alone, with one exception: worker 0 writes interfaces.tsv with
 * every worker's names, reading the others' tables under their mutex,
 * which they take only to change them (once a second at most, when
 * options data named something).
 *
 * For `nagare status`, every stats interval and at exit, the names from
 * both sources (of every worker's exporters) are written to
 * STORE/state/interfaces.tsv by worker 0, one per line:
 *
 *   # exporter<TAB>ifindex|-<TAB>name<TAB>description<TAB>source
 *   192.0.2.1<TAB>-<TAB>edge1<TAB><TAB>config         the exporter's name
 *   192.0.2.1<TAB>3<TAB>uplink<TAB>to ISP<TAB>config
 *   192.0.2.1<TAB>7<TAB>ge-0/0/7<TAB>lab<TAB>options
 *   192.0.2.1<TAB>9<TAB>xe-0/0/9<TAB>Transit: X<TAB>snmp
 *
 * Small; written whole to a temporary file and renamed, without fsync
 * (it is written again at the next report).
 */
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "collector/collector_int.h"
#include "core/addr.h"
#include "core/log.h"
#include "core/timefmt.h"

/* At most this many interface names a minute are logged one by one; the
 * rest are summed in one line (a sender renaming its interfaces without
 * end must not flood the log). */
#define IF_LOG_PER_MINUTE 20

/* Logs interface `index` of `ex` learnt (rc 1) or refused (-2, -3) from
 * `source` ("options data", "SNMP"), within the rate. */
static void log_interface(ng_collector *c, const uint8_t ex[16], uint32_t index, const char *name,
                          const char *desc, const char *source, int rc)
{
	char a[NG_ADDR_STRLEN];
	if (rc == -2 && !c->ifs_dropped++)
		ng_warn("interface names from %s: limits.interfaces (%" PRIu64
		        ") reached, new ones are not kept (counted as interfaces_dropped)",
		        source, c->limits.interfaces);
	if (rc == -3 && !c->ifnames_refused++)
		ng_warn("interface names from %s: limits.interface_names (%" PRIu64
		        ") new names reached, renames are not kept (counted as "
		        "interface_names_refused)",
		        source, c->limits.interface_names);
	if (rc != 1)
		return;
	const uint64_t now = ng_now_ms();
	if (now >= c->ifs_log_ms + 60000) {
		if (c->ifs_unlogged)
			ng_info("%" PRIu64 " more interface names learnt in the last minute "
			        "(STORE/state/interfaces.tsv lists them)",
			        c->ifs_unlogged);
		c->ifs_log_ms = now;
		c->ifs_logged = c->ifs_unlogged = 0;
	}
	if (c->ifs_logged++ >= IF_LOG_PER_MINUTE) {
		c->ifs_unlogged++;
		return;
	}
	ng_info("exporter %s: interface %" PRIu32 " is %s (%s), from %s", ng_addr_format(ex, a),
	        index, name ? name : "", desc ? desc : "", source);
}

/* ng_snmp_take callback: one interface the poller learnt into c->ifs. */
static void snmp_put(void *arg, const uint8_t ex[16], uint32_t index, const char *name,
                     const char *desc, uint64_t speed)
{
	ng_collector *c = arg;
	log_interface(c, ex, index, name, desc, "SNMP",
	              ng_iftab_set_snmp(c->ifs, ex, index, name, desc, speed));
}

/* The interfaces records named for the poller, and what it learnt. */
static void exchange_snmp(ng_collector *c)
{
	ng_snmp *s = c->main ? c->main->snmp : c->snmp;
	if (!s || !c->ifs)
		return;
	uint8_t ex[256][16];
	uint32_t index[256];
	size_t n;
	while ((n = ng_iftab_take_new(c->ifs, ex, index, 256)) > 0)
		ng_snmp_want(s, (const uint8_t(*)[16])ex, index, n);
	/* a worker past the first changes its table under its mutex (see
	 * receive.c's hand_on); lock order: that mutex, then the poller's */
	pthread_mutex_t *mu = c->main ? &((ng_coll_worker *)c)->mu : NULL;
	if (mu)
		pthread_mutex_lock(mu);
	c->snmp_gen = ng_snmp_take(s, c->snmp_gen, snmp_put, c);
	if (mu)
		pthread_mutex_unlock(mu);
}

void ng_coll_take_interfaces(ng_collector *c)
{
	ng_if_info in[64];
	size_t n;
	/* a worker past the first changes its table under its mutex: worker
	 * 0 reads it from its own thread for interfaces.tsv (rare: only when
	 * options data named something) */
	pthread_mutex_t *mu = c->main ? &((ng_coll_worker *)c)->mu : NULL;
	while (c->ifs && (n = ng_decoder_take_interfaces(c->dec, in, 64)) > 0) {
		if (mu)
			pthread_mutex_lock(mu);
		for (size_t i = 0; i < n; i++)
			log_interface(c, in[i].exporter, in[i].index, in[i].name, in[i].description,
			              "options data",
			              ng_iftab_set(c->ifs, in[i].exporter, in[i].index, in[i].name,
			                           in[i].description));
		if (mu)
			pthread_mutex_unlock(mu);
	}
	exchange_snmp(c);
}

/* ng_iftab_foreach callback: one "options" or "snmp" line into the FILE
 * `arg`. */
static void put_iface(const uint8_t ex[16], uint32_t index, const char *name, const char *desc,
                      uint64_t speed, bool snmp, void *arg)
{
	(void)speed;
	char a[NG_ADDR_STRLEN];
	fprintf(arg, "%s\t%" PRIu32 "\t%s\t%s\t%s\n", ng_addr_format(ex, a), index, name, desc,
	        snmp ? "snmp" : "options");
}

/* The configuration's exporters and their interfaces, as "config" lines. */
static void put_configured(FILE *f, const ng_config *cfg)
{
	for (size_t i = 0; i < cfg->nexps; i++) {
		char a[NG_ADDR_STRLEN];
		const ng_cfg_exporter *x = &cfg->exps[i];
		ng_addr_format(x->addr, a);
		fprintf(f, "%s\t-\t%s\t\tconfig\n", a, x->name ? x->name : "");
		for (size_t j = 0; j < x->nifs; j++)
			fprintf(f, "%s\t%" PRIu32 "\t%s\t%s\tconfig\n", a, x->ifs[j].index,
			        x->ifs[j].name ? x->ifs[j].name : "",
			        x->ifs[j].description ? x->ifs[j].description : "");
	}
}

void ng_coll_save_interfaces(ng_collector *c)
{
	char tmp[PATH_MAX + 8];
	snprintf(tmp, sizeof tmp, "%s.tmp", c->ifs_path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	fputs("# exporter\tifindex|-\tname\tdescription\tsource\n", f);
	put_configured(f, c->cfg->config);
	if (c->ifs)
		ng_iftab_foreach(c->ifs, put_iface, f);
	/* and the other workers' exporters (each learns its own) */
	for (unsigned w = 1; w < c->nworkers && c->workers; w++) {
		ng_coll_worker *wk = &c->workers[w - 1];
		pthread_mutex_lock(&wk->mu);
		if (wk->c.ifs)
			ng_iftab_foreach(wk->c.ifs, put_iface, f);
		pthread_mutex_unlock(&wk->mu);
	}
	if (fclose(f) == 0)
		rename(tmp, c->ifs_path);
	else
		unlink(tmp);
}
