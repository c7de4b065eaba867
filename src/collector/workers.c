/*
 * workers.c — the receive workers past the first (--workers N,
 * collect.workers).
 *
 * Worker 0 is the thread that called ng_collector_run, with everything
 * receive.c says it owns.  Workers 1..N-1 each run the same receive loop
 * (ng_coll_receive_loop) on an ng_collector of their own that holds only
 * what a receive thread owns: its listener (a SO_REUSEPORT socket on
 * every UDP address, net/listener.h), its decoder, flow batch, counter
 * batch and time-window counts; `main` points to worker 0's collector.
 * The kernel's reuseport program (net/reuseport.h) sends every datagram
 * of one exporter address to one worker, so each decoder's templates and
 * sequence state are its own and need no lock.  What the workers share
 * is what was shared already: the store writer and the counter store
 * (each append is a memcpy under the writer's own mutex), the flush
 * thread (woken through main), the stop flag.
 *
 * What worker 0 alone does, for all: the counter reports, exporters.json,
 * the live snapshot for the API (ng_coll_snapshot merges each worker's
 * rows: a worker publishes a snapshot of its decoder and listener under
 * its own mutex once a second), STORE/state/interfaces.tsv (every
 * worker's names: interfaces.c reads the others' tables under their
 * mutex), TCP and SCTP (the streams
 * stay on worker 0's listener).  Interface names from options data are
 * learnt and applied by each worker for its own exporters (an exporter's
 * options data and its records reach the same worker), in a table of
 * its own: each holds up to limits.interfaces.
 * Enrichment needs to happen at the store's flush, so more than one
 * worker needs no NDJSON output (collect refuses the mix).
 *
 * Bounds (core/limits.h, docs/security.md): the caps on the whole
 * collector's state (exporters, domains, templates, template_bytes,
 * held_bytes, sflow_sources, interfaces, interface_names) are shared out,
 * each worker's decoder holding 1/N of each, so that N workers hold no
 * more than one did; the caps per exporter or domain stay whole.
 *
 * Templates: worker w saves its decoder's state to STORE/state/templates
 * (w = 0) or templates.W, and at start every worker reads every such
 * file, oldest first, keeping the exporters ng_reuseport_worker gives it
 * (ng_decoder_load_some), so templates survive a restart whichever worker
 * held them, with the same or another number of workers.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collector/collector_int.h"
#include "core/log.h"
#include "core/thread.h"
#include "net/reuseport.h"

#define NG_LK_COUNTER 0
#define NG_LK_GAUGE 1

struct keep_arg {
	uint32_t worker, n;
};

static bool keep_mine(const uint8_t addr[16], void *arg)
{
	const struct keep_arg *k = arg;
	return ng_reuseport_worker(addr, k->n) == k->worker;
}

struct tpl_file {
	char path[PATH_MAX];
	struct timespec mtime;
};

static int by_mtime(const void *a, const void *b)
{
	const struct timespec *x = &((const struct tpl_file *)a)->mtime,
	                      *y = &((const struct tpl_file *)b)->mtime;
	if (x->tv_sec != y->tv_sec)
		return x->tv_sec < y->tv_sec ? -1 : 1;
	return x->tv_nsec < y->tv_nsec ? -1 : x->tv_nsec > y->tv_nsec;
}

/* The template files of base (PATH) and PATH.1 .. PATH.63 that exist,
 * oldest first, into f[]; returns how many. */
static size_t tpl_files(const char *base, struct tpl_file *f)
{
	size_t n = 0;
	for (unsigned w = 0; w < NG_REUSEPORT_MAX; w++) {
		struct stat st;
		if (w)
			snprintf(f[n].path, sizeof f[n].path, "%.4000s.%u", base, w);
		else
			snprintf(f[n].path, sizeof f[n].path, "%s", base);
		if (stat(f[n].path, &st) == 0) {
			f[n].mtime = st.st_mtim;
			n++;
		}
	}
	qsort(f, n, sizeof *f, by_mtime);
	return n;
}

void ng_coll_tpl_path(const ng_collector *c, unsigned worker, char *out, size_t len)
{
	const char *base = c->main ? c->main->tpl_path : c->tpl_path;
	if (worker)
		snprintf(out, len, "%.4000s.%u", base, worker);
	else
		snprintf(out, len, "%s", base);
}

int ng_coll_load_templates_of(ng_decoder *dec, const char *base, unsigned worker, unsigned n)
{
	struct tpl_file *f = malloc(NG_REUSEPORT_MAX * sizeof *f);
	if (!f)
		return -1;
	struct keep_arg k = {worker, n};
	size_t nf = tpl_files(base, f);
	int rc = 0;
	for (size_t i = 0; i < nf; i++)
		if (ng_decoder_load_some(dec, f[i].path, n > 1 ? keep_mine : NULL, &k) < 0) {
			ng_warn("ignoring template state %s: %s (templates will be learnt again)",
			        f[i].path, strerror(errno));
			rc = -1;
		}
	free(f);
	return rc;
}

ng_limits ng_coll_worker_limits(const ng_limits *all, unsigned n)
{
	ng_limits l = *all;
	if (n <= 1)
		return l;
	uint64_t *caps[] = {&l.exporters,  &l.domains,       &l.templates,  &l.template_bytes,
	                    &l.held_bytes, &l.sflow_sources, &l.interfaces, &l.interface_names};
	for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
		*caps[i] = *caps[i] / n ? *caps[i] / n : 1;
	return l;
}

/* Worker w's collector, decoder and templates (w >= 1).  Returns 0, or
 * -1 when out of memory. */
static int worker_open(ng_collector *c, ng_coll_worker *wk, unsigned w, ng_listener *lis)
{
	ng_collector *x = &wk->c;
	*x = (ng_collector){.cfg = c->cfg,
	                    .limits = c->limits,
	                    .started_ms = c->started_ms,
	                    .w = c->w,
	                    .cs = c->cs,
	                    .lis = lis,
	                    .main = c,
	                    .worker = w,
	                    .tc = {.past = c->tc.past, .future = c->tc.future}};
	ng_coll_tpl_path(x, w, x->tpl_path, sizeof x->tpl_path);
	pthread_mutex_init(&wk->mu, NULL);
	x->wlimits = c->wlimits;
	ng_decoder_config dc = {.limits = c->wlimits};
	if (!(x->dec = ng_decoder_new(&dc)))
		return -1;
	/* interface names from options data: an exporter's options and its
	 * records reach the same worker, so each has a table of its own */
	if (c->cfg->options_names && !(x->ifs = ng_iftab_new((size_t)c->wlimits.interfaces,
	                                                     (size_t)c->wlimits.interface_names)))
		return -1;
	if (c->snmp && x->ifs)
		ng_iftab_watch(x->ifs, ng_snmp_polled, c->snmp);
	ng_coll_load_templates_of(x->dec, c->tpl_path, w, c->nworkers);
	return 0;
}

int ng_coll_workers_open(ng_collector *c, ng_listener **lis)
{
	if (c->nworkers <= 1)
		return 0;
	c->workers = calloc(c->nworkers - 1, sizeof *c->workers);
	if (!c->workers)
		return -1;
	for (unsigned w = 1; w < c->nworkers; w++) {
		if (worker_open(c, &c->workers[w - 1], w, lis[w]) < 0)
			return -1;
		lis[w] = NULL; /* the worker's now */
	}
	return 0;
}

void ng_coll_worker_publish(ng_collector *x)
{
	ng_coll_worker *wk = (ng_coll_worker *)x; /* x is its first member */
	ng_exporters_file f;
	ng_coll_snapshot(x, &f);
	pthread_mutex_lock(&wk->mu);
	ng_exporters_file old = wk->snap;
	wk->snap = f;
	wk->snap_listener = f.listener;
	wk->snap_records = x->rx_records;
	pthread_mutex_unlock(&wk->mu);
	ng_exporters_free(&old);
}

void ng_coll_workers_merge(ng_collector *c, ng_exporters_file *f)
{
	for (unsigned w = 1; w < c->nworkers; w++) {
		ng_coll_worker *wk = &c->workers[w - 1];
		pthread_mutex_lock(&wk->mu);
		if (ng_exporters_merge(f, &wk->snap) < 0)
			ng_warn("out of memory: worker %u's counters are missing from a report", w);
			/* the merge sums the COUNTER entries; what each holds now adds up too */
#define X(field, name, kind, doc)                                                                  \
	if (NG_LK_##kind)                                                                          \
		f->limits.field += wk->snap.limits.field;
		NG_LIMIT_COUNTERS(X)
#undef X
		pthread_mutex_unlock(&wk->mu);
	}
}

void ng_coll_workers_stats(ng_collector *c, unsigned w, ng_listener_stats *st, uint64_t *records)
{
	memset(st, 0, sizeof *st);
	*records = 0;
	if (w == 0) {
		ng_listener_get_stats(c->lis, st);
		*records = c->rx_records;
		return;
	}
	ng_coll_worker *wk = &c->workers[w - 1];
	pthread_mutex_lock(&wk->mu);
	*st = wk->snap_listener;
	*records = wk->snap_records;
	pthread_mutex_unlock(&wk->mu);
}

static void *worker_main(void *arg)
{
	ng_collector *x = arg;
	if (ng_coll_receive_loop(x) < 0)
		ng_error("worker %u stopped receiving", x->worker);
	ng_coll_worker_publish(x); /* the final counts, for the last report */
	return NULL;
}

int ng_coll_workers_start(ng_collector *c)
{
	for (unsigned w = 1; w < c->nworkers; w++) {
		ng_coll_worker *wk = &c->workers[w - 1];
		int e = ng_thread_create(&wk->th, worker_main, &wk->c);
		if (e) {
			ng_error("cannot start receive worker %u: %s", w, strerror(e));
			return -1;
		}
		wk->started = true;
	}
	return 0;
}

void ng_coll_workers_join(ng_collector *c)
{
	for (unsigned w = 1; w < c->nworkers; w++)
		if (c->workers[w - 1].started) {
			pthread_join(c->workers[w - 1].th, NULL);
			c->workers[w - 1].started = false;
		}
}

int ng_coll_workers_save(ng_collector *c)
{
	int rc = 0;
	for (unsigned w = 1; w < c->nworkers; w++) {
		ng_collector *x = &c->workers[w - 1].c;
		if (x->dec && ng_decoder_save(x->dec, x->tpl_path) < 0) {
			ng_error("cannot save templates to %s: %s", x->tpl_path, strerror(errno));
			rc = -1;
		}
		if (x->append_lost) {
			ng_error("worker %u: %" PRIu64
			         " flow records were dropped: the store could not take them",
			         w, x->append_lost);
			rc = -1;
		}
	}
	return rc;
}

void ng_coll_workers_close(ng_collector *c)
{
	if (!c->workers)
		return;
	for (unsigned w = 1; w < c->nworkers; w++) {
		ng_coll_worker *wk = &c->workers[w - 1];
		ng_listener_close(wk->c.lis);
		ng_decoder_free(wk->c.dec);
		ng_iftab_free(wk->c.ifs);
		ng_flow_batch_free(&wk->c.batch);
		ng_counter_batch_free(&wk->c.counters);
		ng_exporters_free(&wk->snap);
		pthread_mutex_destroy(&wk->mu);
	}
	free(c->workers);
	c->workers = NULL;
}
