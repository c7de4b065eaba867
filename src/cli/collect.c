/*
 * collect.c — `nagare collect`: receive exports, decode, store.
 *
 * Two threads:
 *
 *   receive thread (main)                 flush thread
 *   ───────────────────────               ─────────────────────────────
 *   recvmmsg batch (listener.c)           every 250 ms: due? → flush
 *   ng_decode each datagram               (encode, compress, fsync,
 *   ng_store_writer_append (a memcpy)      rename: the slow part)
 *   NDJSON (--json)
 *   once a second: expire held sets
 *   every --stats-interval: log counters,
 *     write STORE/state/exporters.json
 *
 * The store writer is made for exactly this split (store.h: append holds
 * its mutex only for a memcpy; flush takes the whole buffer out and writes
 * without it), so a slow disk never stops the socket reads; the kernel
 * buffer (64 MiB asked) absorbs what the receive thread cannot take.
 *
 * On SIGTERM or SIGINT the receive loop ends, what the sockets already
 * hold is read and decoded, the flush thread stops, the writer flushes
 * everything appended, templates are saved to STORE/state/templates and
 * counters to STORE/state/exporters.json; exit status 0 (1 when the final
 * flush failed: those rows are lost and the log says how many).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/exporters.h"
#include "collector/maint.h"
#include "cli/usage.h"
#include "core/addr.h"
#include "core/config.h"
#include "core/log.h"
#include "core/timefmt.h"
#include "decode/decoder.h"
#include "enrich/enrich.h"
#include "http/http.h"
#include "enrich/interfaces.h"
#include "net/listener.h"
#include "sink/json.h"
#include "store/counters.h"
#include "store/store.h"

static const char collect_help[] =
    "usage: nagare collect --store DIR [--listen ADDR:PORT]... [--json FILE|-]\n"
    "                      [--stats-interval SECONDS] [--config FILE]\n"
    "                      [--geoip-db FILE] [--asn-db FILE] [--geoip-optional]\n"
    "                      [--retention AGE] [--max-size SIZE]\n"
    "\n"
    "Receives NetFlow v1/v5/v7/v9, IPFIX and sFlow on UDP, decodes every record\n"
    "and appends it to the flow store DIR (created when absent).  Segments are\n"
    "flushed at least every 5 seconds; templates survive restarts\n"
    "(DIR/state/templates); per-exporter counters go to DIR/state/exporters.json\n"
    "(see 'nagare status').  SIGTERM or SIGINT stops it cleanly.\n"
    "\n"
    "  -s, --store DIR             flow store directory (required)\n"
    "  -l, --listen ADDR:PORT      UDP address to listen on, repeatable:\n"
    "                              0.0.0.0:2055 (IPv4), [::]:2055 (IPv6 and IPv4),\n"
    "                              [::1]:2055, 127.0.0.1:2055, :2055 (every address)\n"
    "                              default: :2055 :4739 :6343 :9995\n"
    "  -j, --json FILE|-           also write every flow as NDJSON to FILE\n"
    "                              (appended) or stdout\n"
    "  -i, --stats-interval SECS   log counters and write exporters.json every\n"
    "                              SECS seconds (default 60)\n"
    "  -c, --config FILE           YAML configuration (docs/configuration.md);\n"
    "                              flags and NAGARE_* variables override it\n"
    "      --geoip-db FILE         MaxMind-format country/city database\n"
    "      --asn-db FILE           MaxMind-format ASN database (may be the same\n"
    "                              file, e.g. IPinfo lite)\n"
    "      --geoip-optional        run on without a database that cannot be\n"
    "                              opened (logged); default: refuse to start\n"
    "      --enrich / --no-enrich  enrichment on even with nothing configured\n"
    "                              (network classes, services) / off\n"
    "      --http ADDR:PORT        dashboards and JSON API (docs/api.md) on this\n"
    "                              TCP address (default 127.0.0.1:8080); any\n"
    "                              address but loopback needs a token\n"
    "      --http-token TOKEN      token for the HTTP API (or NAGARE_HTTP_TOKEN)\n"
    "      --no-http               no HTTP server\n"
    "      --retention AGE         delete segments older than AGE (30d, 12h, 2w;\n"
    "                              s m h d w), checked once a minute\n"
    "      --max-size SIZE         then delete the oldest segments while the store\n"
    "                              holds more than SIZE (50G, 500M; K M G T = 1024)\n"
    "                              Small segments of hours that ended 10 minutes\n"
    "                              ago are merged once a minute (compaction).\n"
    "  -h, --help                  this help\n"
    "\n"
    "SIGHUP, or a database or configuration file being replaced, reloads the\n"
    "enrichment tables without stopping ingest (docs/enrichment.md).\n";

/* Set by the signal handler; read by the receive loop. */
static volatile sig_atomic_t stop_requested;
/* Pause after a thin receive batch (fewer than NG_LISTEN_BATCH / 2
 * datagrams), so that datagrams gather in the socket buffer rather than
 * wake the loop one by one: 4 ms (at 500 k records/s 67 datagrams, about a
 * full batch) when every socket got the receive buffer asked for.  A
 * wake-up costs some 8 µs of CPU on a paravirtualized guest (perf: the
 * context switch back from nanosleep); at 1 ms they were 4.5 % of the
 * collector's CPU at 500 k records/s, and 4 ms took 5 % off its CPU a
 * record (collectors run side by side, 8 rounds).  With a smaller buffer
 * (net.core.rmem_max, not root: warned at start) 1 ms, which at 2 M
 * records/s is 70 datagrams, within the default 208 KiB. */
#define COALESCE_NS 4000000L
#define COALESCE_SMALL_NS 1000000L

/* Set by SIGHUP; read (and reset) by the enrichment reloader. */
static volatile sig_atomic_t hup_requested;

static void on_hup_signal(int sig)
{
	(void)sig;
	hup_requested = 1;
}

/* The first SIGTERM/SIGINT asks for a clean stop; the handler then steps
 * aside, so a second one ends the process at once (an impatient ^C^C). */
static void on_stop_signal(int sig)
{
	stop_requested = 1;
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigaction(sig, &dfl, NULL);
}

struct collect {
	const char *store_dir;
	char tpl_path[PATH_MAX];
	char exp_path[PATH_MAX];
	ng_store_writer *w;
	ng_decoder *dec;
	ng_listener *lis;
	FILE *json;
	const char *json_name;
	ng_flow_batch batch;
	ng_counter_store *cs;      /* sFlow counter samples (store/counters.h) */
	ng_counter_batch counters; /* taken from the decoder once a second */
	uint64_t counters_lost;    /* samples the counter store could not take */
	ng_exporters_file base;    /* counters of earlier runs, from exporters.json */
	uint64_t started_ms;
	uint64_t append_lost; /* rows the writer could not take (out of memory) */
	/* flush thread */
	pthread_t flusher;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool flusher_stop;
	bool flush_wanted;          /* a flush became due: do not wait */
	ng_exporters_file *pending; /* counters for the flush thread to save */
	/* enrichment (enrich/enrich.h) */
	ng_enrich_slot enrich;
	bool enrich_at_flush; /* the store enriches its columns (enrich_columns) */
	long pause_ns;        /* after a thin receive batch: COALESCE_NS or _SMALL_NS */
	ng_reloader *reloader;
	const struct collect_opts *opts; /* to rebuild the configuration on reload */
	/* HTTP API (http/http.h): a snapshot of the counters the receive
	 * thread publishes once a second, copied out by the server threads */
	ng_http_server *http;
	pthread_mutex_t live_mu;
	ng_exporters_file *live;
	ng_iftab *ifs;           /* interface names from options data */
	char ifs_path[PATH_MAX]; /* STORE/state/interfaces.tsv, for status */
};

/* ---- options ---------------------------------------------------------- */

struct collect_opts {
	const char *store;
	const char **listen;
	size_t nlisten;
	const char *json;
	unsigned stats_interval;
	const char *config, *geoip_db, *asn_db;
	int geoip_optional;            /* -1 not given */
	int enrich;                    /* -1 not given, 0 --no-enrich, 1 --enrich */
	const char *http, *http_token; /* NULL: default / none */
	bool no_http;
	uint64_t retention_ms, max_bytes; /* 0: no limit */
	uint64_t maint_ms;                /* hidden --maint-interval (tests); 0: 60 s */
	ng_config cfg;                    /* file + environment + flags */
};

/* The configuration: the file (--config or NAGARE_CONFIG), then the
 * NAGARE_* environment, then the flags.  Run again on every reload. */
static int load_config(const struct collect_opts *o, ng_config *cfg, char *err, size_t errlen)
{
	const char *path = o->config ? o->config : getenv("NAGARE_CONFIG");
	memset(cfg, 0, sizeof *cfg);
	if (path && *path && ng_config_load(path, cfg, err, errlen) < 0)
		return -1;
	if (ng_config_env(cfg, err, errlen) < 0)
		goto fail;
	if ((o->store && ng_config_set(&cfg->store, o->store) < 0) ||
	    (o->json && ng_config_set(&cfg->json, o->json) < 0) ||
	    (o->geoip_db && ng_config_set(&cfg->geoip_db, o->geoip_db) < 0) ||
	    (o->asn_db && ng_config_set(&cfg->asn_db, o->asn_db) < 0)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (o->stats_interval)
		cfg->stats_interval = o->stats_interval;
	if (o->geoip_optional >= 0)
		cfg->geoip_optional = o->geoip_optional;
	return 0;
fail:
	ng_config_free(cfg);
	return -1;
}

/* Enrichment runs when something is configured for it, or --enrich. */
static bool enrich_wanted(const struct collect_opts *o)
{
	if (o->enrich >= 0)
		return o->enrich;
	const ng_config *c = &o->cfg;
	return c->path || c->geoip_db || c->asn_db;
}

static int parse_opts(int argc, char **argv, struct collect_opts *o)
{
	static const struct option opts[] = {
	    {"store", required_argument, NULL, 's'},
	    {"listen", required_argument, NULL, 'l'},
	    {"json", required_argument, NULL, 'j'},
	    {"stats-interval", required_argument, NULL, 'i'},
	    {"config", required_argument, NULL, 'c'},
	    {"geoip-db", required_argument, NULL, 'G'},
	    {"asn-db", required_argument, NULL, 'A'},
	    {"geoip-optional", no_argument, NULL, 'O'},
	    {"enrich", no_argument, NULL, 'E'},
	    {"no-enrich", no_argument, NULL, 'N'},
	    {"http", required_argument, NULL, 'H'},
	    {"http-token", required_argument, NULL, 'T'},
	    {"no-http", no_argument, NULL, 'X'},
	    {"retention", required_argument, NULL, 'R'},
	    {"max-size", required_argument, NULL, 'M'},
	    {"maint-interval", required_argument, NULL, 'I'},
	    {"help", no_argument, NULL, 'h'},
	    {0, 0, 0, 0},
	};
	int c;
	optind = 0;
	opterr = 0;
	o->stats_interval = 0;
	o->geoip_optional = o->enrich = -1;
	while ((c = getopt_long(argc, argv, ":s:l:j:i:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': o->store = optarg; break;
		case 'l': o->listen[o->nlisten++] = optarg; break;
		case 'j': o->json = optarg; break;
		case 'i': {
			char *end;
			errno = 0;
			unsigned long v = strtoul(optarg, &end, 10);
			if (errno || *end || v < 1 || v > 86400 || optarg[0] == '-')
				return ng_usage_fail("collect",
				                     "--stats-interval '%s': give whole seconds, "
				                     "1 to 86400",
				                     optarg);
			o->stats_interval = (unsigned)v;
			break;
		}
		case 'c': o->config = optarg; break;
		case 'G': o->geoip_db = optarg; break;
		case 'A': o->asn_db = optarg; break;
		case 'O': o->geoip_optional = 1; break;
		case 'E': o->enrich = 1; break;
		case 'N': o->enrich = 0; break;
		case 'H': o->http = optarg; break;
		case 'T': o->http_token = optarg; break;
		case 'X': o->no_http = true; break;
		case 'R':
			if (!ng_parse_duration_ms(optarg, &o->retention_ms) || !o->retention_ms)
				return ng_usage_fail("collect",
				                     "--retention '%s': give an age such as 30d, "
				                     "12h, 90m or 2w",
				                     optarg);
			break;
		case 'M':
			if (!ng_parse_size_bytes(optarg, &o->max_bytes) || !o->max_bytes)
				return ng_usage_fail(
				    "collect", "--max-size '%s': give a size such as 50G or 500M",
				    optarg);
			break;
		case 'I':
			if (!ng_parse_duration_ms(optarg, &o->maint_ms) || !o->maint_ms)
				return ng_usage_fail("collect",
				                     "--maint-interval '%s': bad duration", optarg);
			break;
		case 'h': fputs(collect_help, stdout); return 0;
		default: return ng_usage_error("collect", c, argv);
		}
	}
	if (optind < argc)
		return ng_usage_fail("collect", "unexpected argument '%s'", argv[optind]);
	char err[512];
	if (load_config(o, &o->cfg, err, sizeof err) < 0) {
		fprintf(stderr, "nagare collect: %s\n", err);
		return 1;
	}
	if (!o->cfg.store)
		return ng_usage_fail("collect", "--store DIR is required");
	o->store = o->cfg.store;
	o->json = o->cfg.json;
	if (!o->nlisten)
		for (size_t i = 0; i < o->cfg.nlisten && i < 64; i++)
			o->listen[o->nlisten++] = o->cfg.listen[i];
	o->stats_interval = o->cfg.stats_interval ? o->cfg.stats_interval : 60;
	return -1; /* go on */
}

/* ---- counters --------------------------------------------------------- */

static void add_row(const ng_exporter_stats *s, void *arg)
{
	ng_exporters_file *f = arg;
	ng_exporter_stats *n = realloc(f->rows, (f->n + 1) * sizeof *n);
	if (!n)
		return; /* counted rows are missing from this write only */
	f->rows = n;
	f->rows[f->n++] = *s;
}

/* Snapshot of every counter, earlier runs included. */
static void snapshot(struct collect *c, ng_exporters_file *f)
{
	memset(f, 0, sizeof *f);
	ng_decoder_foreach_stats(c->dec, add_row, f);
	ng_listener_get_stats(c->lis, &f->listener);
	ng_store_writer_get_stats(c->w, &f->store);
	f->started_ms = c->started_ms;
	f->updated_ms = ng_now_ms();
	ng_exporters_merge(f, &c->base);
}

static void log_row(const ng_exporter_stats *s)
{
	char a[NG_ADDR_STRLEN], errs[512] = "";
	size_t off = 0;
	for (int i = 0; i < NG_DERR_COUNT && off < sizeof errs; i++)
		if (s->errors[i])
			off += (size_t)snprintf(errs + off, sizeof errs - off, " %s=%" PRIu64,
			                        ng_decode_error_name(i), s->errors[i]);
	ng_info("exporter %s domain %" PRIu32 " %s: packets %" PRIu64 " records %" PRIu64
	        " lost %" PRIu64 " template_misses %" PRIu64 " errors %" PRIu64 "%s",
	        ng_addr_format(s->exporter, a), s->domain, ng_protocol_name(s->version), s->packets,
	        s->records, s->lost, s->template_misses, ng_exporter_errors_total(s), errs);
}

static void log_counters(const ng_exporters_file *f)
{
	ng_info("received %" PRIu64 " datagrams (%" PRIu64 " bytes), kernel drops %" PRIu64
	        "; this run stored %" PRIu64 " rows in %" PRIu64 " segments, dropped %" PRIu64
	        " rows the store could not take",
	        f->listener.datagrams, f->listener.bytes, f->listener.drops, f->store.rows,
	        f->store.segments, f->store.dropped);
	for (size_t i = 0; i < f->n; i++)
		log_row(&f->rows[i]);
}

static void save_counters(const char *path, ng_exporters_file *f)
{
	if (ng_exporters_save(path, f) < 0)
		ng_error("cannot write %s: %s", path, strerror(errno));
}

/*
 * Periodic report, in the receive thread: the snapshot (a copy of the
 * decoder's counters, which only this thread may read) is logged here and
 * handed to the flush thread to write, so the file's fsync never holds up
 * the socket reads.
 */
static void report(struct collect *c)
{
	ng_exporters_file *f = malloc(sizeof *f);
	if (!f)
		return;
	snapshot(c, f);
	log_counters(f);
	pthread_mutex_lock(&c->mu);
	ng_exporters_file *old = c->pending;
	c->pending = f;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	if (old) { /* the flush thread is behind: the newer snapshot wins */
		ng_exporters_free(old);
		free(old);
	}
}

/* ---- flush thread ----------------------------------------------------- */

static void *flush_main(void *arg)
{
	struct collect *c = arg;
	uint64_t last_err_log = 0, next_counters = ng_now_ms() + 5000;
	pthread_mutex_lock(&c->mu);
	while (!c->flusher_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (!c->flush_wanted) /* a wake-up sent while flushing is not lost */
			pthread_cond_timedwait(&c->cv, &c->mu, &ts);
		c->flush_wanted = false;
		if (c->flusher_stop)
			break;
		ng_exporters_file *counters = c->pending;
		c->pending = NULL;
		pthread_mutex_unlock(&c->mu);
		if (counters) {
			save_counters(c->exp_path, counters);
			ng_exporters_free(counters);
			free(counters);
		}
		uint64_t now = ng_now_ms();
		if (ng_store_writer_due(c->w, now) && ng_store_writer_flush(c->w) < 0 &&
		    now - last_err_log >= 60000) {
			/* the writer logs each failure's cause; rows stay buffered */
			ng_warn("store flush failed; rows are kept and retried");
			last_err_log = now;
		}
		if (now >= next_counters) {
			/* samples stay buffered on failure; the store logs why */
			ng_counter_store_flush(c->cs);
			next_counters = now + 5000;
		}
		pthread_mutex_lock(&c->mu);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* Starts the flush thread with the stop signals blocked in it, so they
 * always interrupt the receive thread's wait. */
static int start_flusher(struct collect *c)
{
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	int rc = pthread_create(&c->flusher, NULL, flush_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static void stop_flusher(struct collect *c)
{
	pthread_mutex_lock(&c->mu);
	c->flusher_stop = true;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->flusher, NULL);
	if (c->pending) { /* superseded by the final write */
		ng_exporters_free(c->pending);
		free(c->pending);
		c->pending = NULL;
	}
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
}

/* ---- receive loop ----------------------------------------------------- */

/* Enriches the records decoded so far (e: the tables, or NULL) unless the
 * store does, hands them to the store and the NDJSON output, and empties
 * the batch. */
static void hand_on(struct collect *c, ng_enricher *e)
{
	if (!c->batch.n)
		return;
	if (e && !c->enrich_at_flush)
		ng_enricher_apply(e, c->batch.flows, c->batch.n);
	/* names from options data; configured names win, before or after */
	ng_iftab_apply(c->ifs, c->batch.flows, c->batch.n);
	int rc = ng_store_writer_append(c->w, c->batch.flows, c->batch.n);
	if (rc == 1) { /* a flush is due: now, not at the next 250 ms poll */
		pthread_mutex_lock(&c->mu);
		c->flush_wanted = true;
		pthread_cond_signal(&c->cv);
		pthread_mutex_unlock(&c->mu);
	} else if (rc < 0) {
		if (!c->append_lost)
			ng_error("the store cannot take more flow records (flushes fall behind "
			         "or fail, or memory ran out): records are being dropped and "
			         "counted (store.dropped in nagare status); check the disk "
			         "and the log above");
		c->append_lost += c->batch.n;
	}
	if (c->json && ng_json_write_flows(c->json, c->batch.flows, c->batch.n) < 0) {
		ng_error("writing NDJSON to %s: %s; NDJSON output stopped", c->json_name,
		         strerror(errno));
		if (c->json != stdout)
			fclose(c->json);
		c->json = NULL;
	}
	ng_flow_batch_clear(&c->batch);
}

/* Records handed on at a time: decoded, enriched (with --json) and stored
 * while they are in the core's second-level cache.  A receive batch handed on whole
 * (64 datagrams, up to ~2000 records of 328 bytes: 640 KB) went through
 * memory three times, and pushed the enrichment cache's lines out of the
 * cache each time. */
#define STEP_RECORDS 256

/* Decodes a batch of datagrams and hands their records on, a few hundred
 * at a time (whole datagrams). */
static void take_batch(struct collect *c, const ng_datagram *dgs, int n)
{
	ng_flow_batch_clear(&c->batch);
	ng_enricher *e = ng_enrich_enter(&c->enrich);
	for (int i = 0; i < n; i++) {
		ng_decode(c->dec, &dgs[i], &c->batch);
		if (c->batch.n >= STEP_RECORDS || i == n - 1)
			hand_on(c, e);
	}
	ng_enrich_leave(&c->enrich);
}

/* Moves the sFlow counter samples the decoder collected into the counter
 * store's buffer (a memcpy; the flush thread writes them). */
static void take_counters(struct collect *c)
{
	c->counters.n = 0;
	if (!ng_decoder_take_counters(c->dec, &c->counters))
		return;
	if (ng_counter_store_append(c->cs, c->counters.s, c->counters.n) < 0) {
		if (!c->counters_lost)
			ng_error("out of memory: sFlow counter samples are being dropped");
		c->counters_lost += c->counters.n;
	}
}

/* Takes the interface names the decoder learnt from options data. */
static void take_interfaces(struct collect *c)
{
	ng_if_info in[64];
	size_t n;
	while (c->ifs && (n = ng_decoder_take_interfaces(c->dec, in, 64)) > 0)
		for (size_t i = 0; i < n; i++) {
			char a[NG_ADDR_STRLEN];
			if (ng_iftab_set(c->ifs, in[i].exporter, in[i].index, in[i].name,
			                 in[i].description) == 1)
				ng_info("exporter %s: interface %" PRIu32
				        " is %s (%s), from options data",
				        ng_addr_format(in[i].exporter, a), in[i].index, in[i].name,
				        in[i].description);
		}
}

static void put_iface(const uint8_t ex[16], uint32_t index, const char *name, const char *desc,
                      void *arg)
{
	char a[NG_ADDR_STRLEN];
	fprintf(arg, "%s\t%" PRIu32 "\t%s\t%s\toptions\n", ng_addr_format(ex, a), index, name,
	        desc);
}

/* STORE/state/interfaces.tsv for `nagare status`: exporter names and
 * interface names, from the configuration and from options data.  Small;
 * written whole and renamed (no fsync: it is rewritten every report). */
static void save_interfaces(struct collect *c)
{
	char tmp[PATH_MAX + 8];
	snprintf(tmp, sizeof tmp, "%s.tmp", c->ifs_path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	fputs("# exporter\tifindex|-\tname\tdescription\tsource\n", f);
	const ng_config *cfg = &c->opts->cfg;
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
	if (c->ifs)
		ng_iftab_foreach(c->ifs, put_iface, f);
	if (fclose(f) == 0)
		rename(tmp, c->ifs_path);
	else
		unlink(tmp);
}

/* ---- HTTP server ------------------------------------------------------ */

/* Hands a fresh counter snapshot to the HTTP threads (the decoder's
 * counters may be read only by this thread; they copy the snapshot). */
static void publish_live(struct collect *c)
{
	if (!c->http)
		return;
	ng_exporters_file *f = malloc(sizeof *f);
	if (!f)
		return;
	snapshot(c, f);
	pthread_mutex_lock(&c->live_mu);
	ng_exporters_file *old = c->live;
	c->live = f;
	pthread_mutex_unlock(&c->live_mu);
	if (old) {
		ng_exporters_free(old);
		free(old);
	}
}

/* ng_http_exporters_fn: a copy of the last published snapshot. */
static int live_exporters(void *arg, ng_http_exporters *out, char *err, size_t errlen)
{
	struct collect *c = arg;
	int rc = -1;
	pthread_mutex_lock(&c->live_mu);
	const ng_exporters_file *f = c->live;
	if (!f) {
		snprintf(err, errlen, "the collector is starting: no counters yet");
	} else if ((out->rows = malloc((f->n ? f->n : 1) * sizeof *out->rows))) {
		if (f->n) /* rows is NULL before any exporter: memcpy(…, NULL, 0) is UB */
			memcpy(out->rows, f->rows, f->n * sizeof *out->rows);
		out->n = f->n;
		out->listener = f->listener;
		out->store = f->store;
		out->started_ms = f->started_ms;
		out->updated_ms = f->updated_ms;
		out->live = true;
		rc = 0;
	} else {
		snprintf(err, errlen, "out of memory");
	}
	pthread_mutex_unlock(&c->live_mu);
	return rc;
}

/* Starts the HTTP server on its own threads (the stop signals blocked
 * in them).  Returns 0, or -1 when an address given by the user cannot
 * be served; the default address being taken only warns (the collector
 * runs on without HTTP). */
static int start_http(struct collect *c, const struct collect_opts *o)
{
	pthread_mutex_init(&c->live_mu, NULL);
	if (o->no_http)
		return 0;
	/* flags, else the configuration (file, then NAGARE_HTTP[_TOKEN]) */
	const char *token = o->http_token ? o->http_token : o->cfg.http_token;
	const char *addr = o->http ? o->http : o->cfg.http;
	ng_http_config hc = {.store_dir = o->store,
	                     .listen = addr ? addr : "127.0.0.1:8080",
	                     .token = token,
	                     .exporters = live_exporters,
	                     .exporters_arg = c};
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	char err[512];
	c->http = ng_http_start(&hc, err, sizeof err);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!c->http && addr) {
		fprintf(stderr, "nagare collect: %s\n", err);
		return -1;
	}
	if (!c->http) {
		ng_warn("%s; running without the dashboards (--http ADDR:PORT to choose "
		        "another address, --no-http to silence this)",
		        err);
		return 0;
	}
	publish_live(c);
	char url[128];
	ng_http_url(c->http, url, sizeof url);
	ng_info("dashboards and API at %s%s", url,
	        token && *token ? " (token required: open it once with ?token=TOKEN)" : "");
	return 0;
}

static void stop_http(struct collect *c)
{
	ng_http_stop(c->http);
	c->http = NULL;
	if (c->live) {
		ng_exporters_free(c->live);
		free(c->live);
		c->live = NULL;
	}
}

static int receive_loop(struct collect *c, unsigned stats_interval)
{
	uint64_t now = ng_now_ms();
	uint64_t next_expire = now + 1000, next_report = now + (uint64_t)stats_interval * 1000;
	while (!stop_requested) {
		const ng_datagram *dgs;
		int n = ng_listener_recv(c->lis, 250, &dgs);
		if (n < 0) {
			ng_error("waiting for datagrams: %s", strerror(errno));
			return -1;
		}
		if (n)
			take_batch(c, dgs, n);
		else
			ng_enrich_leave(&c->enrich); /* idle: a pending swap may go on */
		if (n > 0 && n < NG_LISTEN_BATCH / 2) {
			/* a thin batch: let datagrams gather in the socket buffer
			 * for a moment rather than wake for each one; a wake-up
			 * costs more than a datagram's decoding here, and receive
			 * times are stamped per batch (ms) anyway */
			struct timespec pause = {0, c->pause_ns};
			nanosleep(&pause, NULL);
		}
		now = ng_now_ms();
		if (now >= next_expire) {
			ng_decoder_expire(c->dec, now);
			take_counters(c);
			publish_live(c);
			take_interfaces(c);
			if (c->json)
				fflush(c->json);
			next_expire = now + 1000;
		}
		if (now >= next_report) {
			report(c);
			save_interfaces(c);
			next_report = now + (uint64_t)stats_interval * 1000;
		}
	}
	/* Stopping: take what the kernel already holds, but do not chase a
	 * flood forever (1024 batches is at most 64 Ki datagrams). */
	for (int i = 0; i < 1024; i++) {
		const ng_datagram *dgs;
		int n = ng_listener_recv(c->lis, 0, &dgs);
		if (n <= 0)
			break;
		take_batch(c, dgs, n);
	}
	take_counters(c);
	take_interfaces(c);
	save_interfaces(c);
	atomic_store(&c->enrich.closed, true);
	return 0;
}

/* ---- setup and teardown ----------------------------------------------- */

/* Reloader thread: the configuration read again (file, environment,
 * flags) and a fresh table set built from it.  Collector settings in the
 * file (store, listen) take effect only at the next start. */
static ng_enricher *rebuild_enricher(void *arg, char *err, size_t errlen)
{
	struct collect *c = arg;
	ng_config cfg;
	if (load_config(c->opts, &cfg, err, errlen) < 0)
		return NULL;
	ng_enricher *e = ng_enricher_build(&cfg, err, errlen);
	ng_config_free(&cfg);
	return e;
}

/*
 * The store's derive function (store.h): enriches the rows of a segment
 * about to be written, column by column.  Without an output that needs
 * enriched records as they arrive (NDJSON), enrichment waits for the
 * flush: its columns are then written once, in their final order, rather
 * than copied out of every record into the store's buffer and sorted with
 * the rest (5-12 % less CPU a record with enrichment, run side by side).
 * The rows carry the tables of the segment write: normally within a flush
 * interval (5 s) of their arrival, later when a flush is retried.
 */
static int enrich_columns(void *arg, ng_store_cols *sc)
{
	struct collect *c = arg;
	int rc = 0;
	ng_enricher *e = ng_enrich_hold(&c->enrich);
	if (e) {
		ng_enrich_view v = {.n = ng_store_cols_rows(sc)};
		for (uint64_t bits = ng_enricher_fields(e); bits && !rc; bits &= bits - 1) {
			enum ng_field_id f = (enum ng_field_id)__builtin_ctzll(bits);
			v.at[f] = ng_store_cols_get(sc, f);
			v.step[f] = ng_fields[f].size;
			rc = v.at[f] ? 0 : -1;
		}
		if (!rc)
			ng_enricher_apply_view(e, &v);
	}
	ng_enrich_release(&c->enrich);
	return rc;
}

static int open_all(struct collect *c, const struct collect_opts *o)
{
	char err[512], state[PATH_MAX - 32];
	c->w = ng_store_writer_open(o->store, err, sizeof err);
	if (!c->w) {
		fprintf(stderr, "nagare collect: %s\n", err);
		return -1;
	}
	c->cs = ng_counter_store_open(o->store, err, sizeof err);
	if (!c->cs) {
		fprintf(stderr, "nagare collect: %s\n", err);
		return -1;
	}
	if (!ng_store_state_dir(o->store, state, sizeof state)) {
		fprintf(stderr, "nagare collect: cannot create %s/state: %s\n", o->store,
		        strerror(errno));
		return -1;
	}
	snprintf(c->tpl_path, sizeof c->tpl_path, "%s/templates", state);
	snprintf(c->exp_path, sizeof c->exp_path, "%s/exporters.json", state);
	snprintf(c->ifs_path, sizeof c->ifs_path, "%s/interfaces.tsv", state);
	if (o->enrich != 0 && !(c->ifs = ng_iftab_new())) {
		fprintf(stderr, "nagare collect: out of memory\n");
		return -1;
	}
	c->dec = ng_decoder_new(NULL);
	if (!c->dec) {
		fprintf(stderr, "nagare collect: out of memory\n");
		return -1;
	}
	if (ng_decoder_load(c->dec, c->tpl_path) < 0)
		ng_warn("ignoring template state %s: %s (templates will be learnt again)",
		        c->tpl_path, strerror(errno));
	if (ng_exporters_load(c->exp_path, &c->base, err, sizeof err) < 0 && errno != ENOENT)
		ng_warn("%s; counters start from zero", err);
	if (enrich_wanted(o)) {
		ng_enricher *e = ng_enricher_build(&o->cfg, err, sizeof err);
		if (!e) {
			fprintf(stderr, "nagare collect: enrichment: %s\n", err);
			if (!o->cfg.geoip_optional)
				fprintf(stderr, "nagare collect: (--geoip-optional runs on without "
				                "a database that cannot be used)\n");
			return -1;
		}
		char d[1024];
		ng_info("enrichment: %s", ng_enricher_describe(e, d, sizeof d));
		atomic_store(&c->enrich.cur, e);
	}
	c->lis = ng_listener_open(o->listen, o->nlisten, err, sizeof err);
	if (!c->lis) {
		fprintf(stderr, "nagare collect: %s\n", err);
		return -1;
	}
	c->pause_ns = COALESCE_NS;
	for (size_t i = 0; i < ng_listener_count(c->lis); i++)
		if (ng_listener_rcvbuf(c->lis, i) < NG_LISTEN_RCVBUF / 2)
			c->pause_ns = COALESCE_SMALL_NS;
	if (o->json) {
		c->json_name = strcmp(o->json, "-") ? o->json : "stdout";
		c->json = strcmp(o->json, "-") ? fopen(o->json, "a") : stdout;
		if (!c->json) {
			fprintf(stderr, "nagare collect: cannot write %s: %s\n", o->json,
			        strerror(errno));
			return -1;
		}
	}
	if (atomic_load(&c->enrich.cur) && !c->json) {
		c->enrich_at_flush = true;
		ng_store_writer_set_derive(c->w, enrich_columns, c);
	}
	return 0;
}

static void announce(const struct collect *c)
{
	char names[1024] = "";
	size_t off = 0;
	for (size_t i = 0; i < ng_listener_count(c->lis) && off < sizeof names; i++) {
		char n[64];
		off += (size_t)snprintf(names + off, sizeof names - off, "%sudp %s", i ? ", " : "",
		                        ng_listener_name(c->lis, i, n, sizeof n));
	}
	ng_info("listening on %s; storing flows in %s%s%s", names, c->store_dir,
	        c->json ? "; NDJSON to " : "", c->json ? c->json_name : "");
}

/* Frees what open_all made; the writers are closed (flushed) here only
 * on a failed start, finish() closes them otherwise. */
static void close_all(struct collect *c)
{
	if (c->w)
		ng_store_writer_close(c->w);
	ng_counter_store_close(c->cs);
	if (c->json && c->json != stdout)
		fclose(c->json);
	else if (c->json)
		fflush(c->json);
	ng_listener_close(c->lis);
	ng_decoder_free(c->dec);
	ng_exporters_free(&c->base);
	ng_flow_batch_free(&c->batch);
	ng_counter_batch_free(&c->counters);
	ng_enricher_free(atomic_exchange(&c->enrich.cur, NULL));
	pthread_mutex_destroy(&c->enrich.hold);
	ng_iftab_free(c->ifs);
}

static void install_signals(void)
{
	struct sigaction sa = {0};
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: the signal must interrupt epoll_wait */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_hup_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* One line on what enrichment did this run, at exit. */
static void log_enrichment(struct collect *c)
{
	ng_enricher *e = ng_enrich_enter(&c->enrich);
	if (e) {
		ng_enrich_stats st;
		ng_enricher_get_stats(e, &st);
		uint64_t probes = st.cache_hits + st.cache_misses;
		ng_info("enrichment: %" PRIu64 " records, %" PRIu64 " address lookups of which "
		        "%.1f %% answered by the cache, %" PRIu64 " lookup errors",
		        st.records, probes,
		        probes ? 100.0 * (double)st.cache_hits / (double)probes : 0.0,
		        st.lookup_errors);
	}
	ng_enrich_leave(&c->enrich);
}

/* Final flush, template and counter state (the flush thread has
 * stopped: everything here runs in the one remaining thread).
 * Returns the exit status. */
static int finish(struct collect *c)
{
	ng_exporters_file f;
	snapshot(c, &f);
	save_counters(c->exp_path, &f); /* first: counters survive a failing disk */
	ng_exporters_free(&f);
	int rc = 0;
	if (ng_store_writer_flush(c->w) < 0) {
		ng_error("final store flush failed: the records received since the last "
		         "segment are lost");
		rc = 1;
	}
	log_enrichment(c); /* after the flush: it may enrich (enrich_columns) */
	snapshot(c, &f);   /* again, with the final store counts */
	log_counters(&f);
	save_counters(c->exp_path, &f);
	ng_exporters_free(&f);
	ng_store_writer_close(c->w);
	c->w = NULL;
	if (ng_counter_store_close(c->cs) < 0) {
		ng_error("final flush of sFlow counter samples failed: they are lost");
		rc = 1;
	}
	c->cs = NULL;
	if (c->counters_lost) {
		ng_error("%" PRIu64 " sFlow counter samples were dropped for lack of memory",
		         c->counters_lost);
		rc = 1;
	}
	if (ng_decoder_save(c->dec, c->tpl_path) < 0) {
		ng_error("cannot save templates to %s: %s", c->tpl_path, strerror(errno));
		rc = 1;
	}
	if (c->append_lost) {
		ng_error("%" PRIu64 " flow records were dropped: the store could not take them",
		         c->append_lost);
		rc = 1;
	}
	return rc;
}

int ng_cmd_collect(int argc, char **argv)
{
	const char *listen[(argc > 0 ? argc : 1) + 64]; /* flags, or up to 64 from the file */
	struct collect_opts o = {.listen = listen};
	int rc = parse_opts(argc, argv, &o);
	if (rc >= 0) {
		ng_config_free(&o.cfg);
		return rc;
	}
	struct collect c = {.store_dir = o.store, .started_ms = ng_now_ms(), .opts = &o};
	pthread_mutex_init(&c.enrich.hold, NULL);
	stop_requested = 0;
	install_signals();
	if (open_all(&c, &o) < 0) {
		close_all(&c);
		ng_config_free(&o.cfg);
		return 1;
	}
	announce(&c);
	if (start_http(&c, &o) < 0) {
		close_all(&c);
		ng_config_free(&o.cfg);
		return 1;
	}
	if (atomic_load(&c.enrich.cur) &&
	    !(c.reloader = ng_reloader_start(&c.enrich, rebuild_enricher, &c, &hup_requested)))
		ng_warn("cannot start the enrichment reloader: SIGHUP will not reload");
	if (start_flusher(&c) != 0) {
		fprintf(stderr, "nagare collect: cannot start the flush thread\n");
		stop_http(&c);
		atomic_store(&c.enrich.closed, true);
		ng_reloader_stop(c.reloader);
		close_all(&c);
		ng_config_free(&o.cfg);
		return 1;
	}
	ng_maint_config mc = {.store_dir = o.store,
	                      .retention_ms = o.retention_ms,
	                      .max_bytes = o.max_bytes,
	                      .interval_ms = o.maint_ms};
	ng_maint *maint = ng_maint_start(&mc);
	if (!maint)
		ng_warn("cannot start the maintenance thread: no compaction or retention");
	rc = receive_loop(&c, o.stats_interval) < 0 ? 1 : 0;
	ng_maint_stop(maint); /* waits for a merge in progress */
	stop_http(&c);        /* before the decoder and writers go */
	atomic_store(&c.enrich.closed, true);
	ng_reloader_stop(c.reloader);
	stop_flusher(&c);
	ng_info("stopping: flushing the store, saving templates and counters");
	if (finish(&c))
		rc = 1;
	close_all(&c);
	ng_config_free(&o.cfg);
	return rc;
}
