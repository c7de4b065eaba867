/*
 * collector_int.h — the state of a running collector, shared by the
 * files of src/collector/ (not a public API: collector.h is).
 *
 * Each field says which thread owns it; collector.c's essay draws the
 * threads and what crosses between them.
 */
#ifndef NG_COLLECTOR_INT_H
#define NG_COLLECTOR_INT_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "store/exporters.h"
#include "collector/collector.h"
#include "decode/decoder.h"
#include "enrich/enrich.h"
#include "enrich/interfaces.h"
#include "enrich/snmp.h"
#include "http/http.h"
#include "net/listener.h"
#include "store/counters.h"
#include "store/store.h"

/* The time window's counts and the example of the next log line
 * (timecheck.c); receive thread only. */
typedef struct ng_coll_timecheck {
	uint64_t past, future;   /* the window, ms (the configuration's or defaults) */
	uint64_t kept, rejected; /* since start */
	uint64_t unlogged;       /* implausible records not yet logged */
	uint64_t logged_ms;      /* last log line, 0: none yet */
	uint8_t ex_exporter[16]; /* the first unlogged one */
	uint64_t ex_start, ex_end, ex_received;
} ng_coll_timecheck;

typedef struct ng_coll_worker ng_coll_worker;

typedef struct ng_collector {
	const ng_collector_config *cfg; /* borrowed, read-only: every thread */
	/* receive workers (workers.c): a worker past the first runs the
	 * receive loop on a collector of its own, whose `main` is worker 0's
	 * (NULL in worker 0's own) */
	struct ng_collector *main;
	unsigned worker;         /* 0 .. nworkers - 1 */
	unsigned nworkers;       /* worker 0's: cfg->workers, at least 1 */
	ng_coll_worker *workers; /* worker 0's: workers 1 .. nworkers - 1 */
	uint64_t rx_records;     /* records this worker handed to the store */
	ng_limits limits;        /* cfg->config->limits, defaults filled in */
	ng_limits wlimits;       /* a worker's decoder's share (workers.c) */
	uint64_t started_ms;
	char tpl_path[PATH_MAX]; /* STORE/state/templates */
	char exp_path[PATH_MAX]; /* STORE/state/exporters.json */
	char ifs_path[PATH_MAX]; /* STORE/state/interfaces.tsv, for status */
	/* receive thread only */
	ng_decoder *dec; /* not thread-safe: its counters are copied out */
	ng_listener *lis;
	ng_flow_batch batch;
	FILE *json; /* NDJSON output, NULL once it failed */
	const char *json_name;
	ng_counter_batch counters;         /* sFlow counter samples, taken once a second */
	uint64_t counters_lost;            /* samples the counter store could not take */
	uint64_t append_lost;              /* rows the writer could not take */
	ng_exporters_file base;            /* counters of earlier runs, from exporters.json */
	ng_limit_stats lim_logged;         /* the bound counters when last logged (report.c) */
	uint64_t lim_logged_ms;            /* and when */
	uint64_t lim_trimmed;              /* evictions at the last malloc_trim */
	uint64_t rs_logged;                /* exporter restarts when last logged (report.c) */
	uint64_t rs_logged_ms;             /* and when */
	ng_iftab *ifs;                     /* interface names from options data; NULL: off */
	uint64_t ifs_dropped;              /* names not kept: limits.interfaces reached */
	uint64_t ifnames_refused;          /* renames not kept: limits.interface_names */
	uint64_t ifs_log_ms;               /* start of the minute of interface log lines */
	uint64_t ifs_logged, ifs_unlogged; /* lines logged and not, that minute */
	ng_coll_timecheck tc;              /* the time window (timecheck.c) */
	uint64_t tpl_hash;                 /* of the template state last handed on */
	uint64_t tpl_next_ms;              /* when to look at the template state again */
	/* SNMP (interfaces.c): worker 0's poller (enrich/snmp.h), NULL none;
	 * the other workers use main->snmp */
	ng_snmp *snmp;
	uint64_t snmp_gen; /* the poller's generation last taken into ifs */
	/* appended to by the receive thread, flushed by the flush thread:
	 * each takes its own lock (store.h, counters.h) */
	ng_store_writer *w;
	ng_counter_store *cs;
	/* ClickHouse: fed by the flush thread through the writer's tap, its
	 * own sender thread; NULL: none (worker 0's only) */
	ng_ch_sink *ch;
	ng_sink_stats ch_final; /* its counters once closed (ch_closed) */
	bool ch_closed;
	/* flush thread (flush.c); the fields below `mu` are under it */
	pthread_t flusher;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool flusher_stop;
	_Atomic uint64_t flush_beat_ms; /* each round of the flush loop (service.c) */
	bool flush_wanted;              /* a flush became due: do not wait */
	ng_exporters_file *pending;     /* counters for the flush thread to save */
	uint8_t *tpl_img;               /* a template state image for it to write */
	size_t tpl_len;
	/* enrichment (enrichment.c, enrich/enrich.h): the slot has its own
	 * protocol between the receive, flush and reloader threads */
	ng_enrich_slot enrich;
	bool enrich_at_flush; /* the store enriches its columns (enrich_columns) */
	ng_reloader *reloader;
	/* HTTP (live.c): the counter snapshot the receive thread publishes
	 * once a second, copied out by the server threads under live_mu */
	ng_http_server *http;
	pthread_mutex_t live_mu;
	bool attribution_dbip; /* the tables at start use DB-IP data (live.c) */
	ng_exporters_file *live;
	/* systemd (service.c): the watchdog interval (0: none) and whether a
	 * stuck flush thread was logged; receive thread */
	uint64_t watchdog_ms;
	bool flush_stuck_logged;
} ng_collector;

/* A receive worker past the first (workers.c): its collector first, so
 * that a pointer to one is a pointer to the other. */
struct ng_coll_worker {
	ng_collector c;
	pthread_t th;
	bool started;
	pthread_mutex_t mu;              /* the snapshot below, between it and worker 0 */
	ng_exporters_file snap;          /* its decoder's rows, once a second */
	ng_listener_stats snap_listener; /* its sockets' counters then */
	uint64_t snap_records;           /* its rx_records then */
};

/* ---- workers.c -------------------------------------------------------- */

/* A worker's share of the caps `all` among n workers: the caps on the
 * whole state divided by n (at least 1), those per exporter or domain
 * whole. */
ng_limits ng_coll_worker_limits(const ng_limits *all, unsigned n);
/* Worker w's template state file into out[len]: STORE/state/templates
 * for 0, templates.W for the others. */
void ng_coll_tpl_path(const ng_collector *c, unsigned worker, char *out, size_t len);
/* Loads into `dec` what the template files at `base` (base, base.1, …,
 * oldest first) hold of the exporters of `worker` among `n` (all of them
 * when n is 1).  Returns 0, or -1 when a file could not be read (warned;
 * the others are loaded). */
int ng_coll_load_templates_of(ng_decoder *dec, const char *base, unsigned worker, unsigned n);
/* At start, on worker 0's collector (nworkers set): the other workers'
 * collectors and decoders, their templates loaded; takes lis[1..n).
 * Returns 0, or -1 when out of memory (ng_coll_workers_close frees). */
int ng_coll_workers_open(ng_collector *c, ng_listener **lis);
/* Starts their threads.  Returns 0, or -1 (logged) when one cannot
 * start; those started keep going until the stop request. */
int ng_coll_workers_start(ng_collector *c);
/* After the stop request: waits for them to drain and end. */
void ng_coll_workers_join(ng_collector *c);
/* After the join: saves their templates and logs their losses.  Returns
 * 0, or -1 when anything was lost. */
int ng_coll_workers_save(ng_collector *c);
void ng_coll_workers_close(ng_collector *c);
/* A worker past the first, once a second: publishes its counters. */
void ng_coll_worker_publish(ng_collector *x);
/* Worker 0: adds every other worker's last published counters to f. */
void ng_coll_workers_merge(ng_collector *c, ng_exporters_file *f);
/* Worker w's socket counters and records handed to the store (worker
 * 0's now, the others' as last published). */
void ng_coll_workers_stats(ng_collector *c, unsigned w, ng_listener_stats *st, uint64_t *records);

/* ---- signals.c -------------------------------------------------------- */

/* Set by SIGTERM/SIGINT; read by the receive loop.  Set by SIGHUP; read
 * (and reset) by the enrichment reloader. */
extern volatile sig_atomic_t ng_coll_stop_requested;
extern volatile sig_atomic_t ng_coll_hup_requested;

/* Clears the stop request and installs the handlers of SIGTERM, SIGINT
 * and SIGHUP; ignores SIGPIPE. */
void ng_coll_signals_install(void);

/* ---- receive.c -------------------------------------------------------- */

/* The receive thread's loop until a stop is requested, then the drain of
 * the sockets.  Returns 0, or -1 when waiting for datagrams failed. */
int ng_coll_receive_loop(ng_collector *c);

/* ---- timecheck.c ------------------------------------------------------ */

/* Receive thread, on c->batch before it goes to the store and NDJSON:
 * each record whose flow_start or flow_end is outside [time_received -
 * cfg->max_past_ms, time_received + cfg->max_future_ms] is counted
 * (time_implausible) and then flagged and moved to its receive time
 * (keep) or removed from the batch (cfg->reject_implausible). */
void ng_coll_check_times(ng_collector *c);
/* Receive thread, once a second: the summary log line when one is due
 * (at most once a minute; now UINT64_MAX: at once, when stopping). */
void ng_coll_timecheck_log(ng_collector *c, uint64_t now);

/* ---- service.c: systemd notifications (sd_notify) ------------------- */

/* Once everything is open, before the receive loop: READY=1 with STATUS=
 * `status` (up to 1 KiB), and whether the watchdog is on (WatchdogSec). */
void ng_coll_service_ready(ng_collector *c, const char *status);
/* Receive loop, once a second (now: ng_now_ms): WATCHDOG=1 when the
 * watchdog is on and the flush thread went round within half of it. */
void ng_coll_service_alive(ng_collector *c, uint64_t now);
/* RELOADING=1 when a rebuild starts (done false), READY=1 when it ended. */
void ng_coll_service_reloading(bool done);
/* STOPPING=1: the clean stop began. */
void ng_coll_service_stopping(void);

/* ---- flush.c ---------------------------------------------------------- */

/* Starts the flush thread (stop signals blocked in it).  Returns 0 or the
 * pthread_create error. */
int ng_coll_flusher_start(ng_collector *c);
/* Stops and joins it; a snapshot it had not yet written is dropped (the
 * final write supersedes it). */
void ng_coll_flusher_stop(ng_collector *c);
/* Receive thread: a flush is due (the writer said so), wake the thread. */
void ng_coll_flush_now(ng_collector *c);
/* Receive thread: hands `f` (malloc'd, taken) to the flush thread to
 * write to exporters.json; a snapshot still waiting is freed instead. */
void ng_coll_flusher_save(ng_collector *c, ng_exporters_file *f);

/* Every NG_TEMPLATE_SAVE_MS (collector.h), on the receive thread: when
 * the decoder's template state differs from what was last handed on, its
 * image goes to the flush thread, which writes STORE/state/templates.
 * flush.c. */
void ng_coll_save_templates(ng_collector *c, uint64_t now);

/* ---- report.c --------------------------------------------------------- */

/* Receive thread: every counter now, earlier runs' included, into *f
 * (the caller frees it with ng_exporters_free). */
void ng_coll_snapshot(ng_collector *c, ng_exporters_file *f);
/* The counter log lines: one summary, then one line per exporter for the
 * `max` with the most records, one for the rest. */
void ng_coll_log_counters(const ng_exporters_file *f, size_t max);
/* Receive thread, once a second: logs the evictions since the last such
 * line, at most one line every 10 s, and gives the heap's free pages back
 * to the system when anything was evicted in the last second. */
void ng_coll_log_limits(ng_collector *c, uint64_t now);
/* Receive thread, once a second: logs the exporter restarts the decoder
 * saw since the last such line (decode/restart.c), at most one line every
 * 10 s, naming the latest. */
void ng_coll_log_restarts(ng_collector *c, uint64_t now);
/* With more than one worker, one line per worker: the records it handed
 * to the store, its sockets' datagrams and kernel drops (the others' as
 * they last published them). */
void ng_coll_log_workers(ng_collector *c);
/* Writes exporters.json at `path`; logs a failure. */
void ng_coll_save_counters(const char *path, ng_exporters_file *f);
/* Receive thread, every stats interval: logs the counters and hands them
 * to the flush thread to write. */
void ng_coll_report(ng_collector *c);

/* At start: the machine's checks of `nagare doctor` (kernel tuning, the
 * receive buffer granted, clock, store space, databases, HTTP), each
 * warning and failure logged, and the sysctl lines that fix the kernel's.
 * report.c. */
void ng_coll_doctor(const ng_collector_config *cfg);

/* ---- interfaces.c ----------------------------------------------------- */

/* Receive thread: takes the interface names the decoder learnt from
 * options data into c->ifs (logged when new or changed); with SNMP, hands
 * the interfaces flows named to the poller and takes what it learnt. */
void ng_coll_take_interfaces(ng_collector *c);
/* Worker 0's thread: writes STORE/state/interfaces.tsv, with every
 * worker's names (taken under each one's mutex). */
void ng_coll_save_interfaces(ng_collector *c);

/* ---- enrichment.c ----------------------------------------------------- */

/* At start: builds the tables when cfg->enrich and logs what they hold.
 * Returns 0, or -1 with the cause on stderr. */
int ng_coll_enrich_open(ng_collector *c);
/* At start, once the NDJSON output is known: without it, the store's
 * flush enriches the columns it writes instead of the receive thread. */
void ng_coll_enrich_place(ng_collector *c);
/* Starts the reloader thread when there are tables (warns when it
 * cannot). */
void ng_coll_reloader_start(ng_collector *c);
/* At exit: one log line on what enrichment did this run. */
void ng_coll_log_enrichment(ng_collector *c);

/* ---- live.c ----------------------------------------------------------- */

/* Starts the HTTP server unless cfg->http is off.  Returns 0, or -1 when
 * an address given in the configuration cannot be served (on stderr). */
int ng_coll_http_start(ng_collector *c);
/* Stops the server and frees the published snapshot. */
void ng_coll_http_stop(ng_collector *c);
/* Receive thread: a fresh counter snapshot for the HTTP threads. */
void ng_coll_publish_live(ng_collector *c);

#endif
