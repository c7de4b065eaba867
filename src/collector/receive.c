/*
 * receive.c — the receive thread: sockets → decoder → store.
 *
 * The thread that called ng_collector_run spends its life here.  It owns
 * the listener, the decoder (templates, held data sets, per-exporter
 * counters: ng_decoder is not thread-safe), the flow batch and the NDJSON
 * stream; nothing else touches them while it runs.
 *
 *   ng_listener_recv    up to 64 datagrams (recvmmsg), 250 ms at most
 *   ng_decode           each datagram into the flow batch (TCP/SCTP: each
 *                       IPFIX message; then the sessions that ended lose
 *                       their templates, ng_decoder_session_end)
 *   hand_on             every ~256 records: check their times
 *                       (timecheck.c: flag or drop), enrich them (only with
 *                       NDJSON, else the flush does: enrichment.c), put
 *                       interface names from options data on them, append
 *                       them to the store writer (a memcpy under its
 *                       mutex), write them as NDJSON
 *   once a second       expire held data sets, move sFlow counter samples
 *                       to the counter store, publish the live counters
 *                       (live.c), take interface names (interfaces.c)
 *   every stats interval   log the counters and hand them to the flush
 *                       thread (report.c), write interfaces.tsv
 *
 * Nothing here waits on the disk: appends are a memcpy, and the slow
 * writes (segments, exporters.json) happen on the flush thread.  What the
 * thread cannot take in time waits in the socket's kernel buffer (64 MiB
 * asked).
 *
 * The enrichment slot is entered once per receive batch and left after
 * it (or when idle), so a reload's swap waits at most one batch.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "collector/collector_int.h"
#include "core/log.h"
#include "core/timefmt.h"
#include "sink/json.h"

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

/* Records handed on at a time: decoded, enriched (with --json) and stored
 * while they are in the core's second-level cache.  A receive batch handed on whole
 * (64 datagrams, up to ~2000 records of 328 bytes: 640 KB) went through
 * memory three times, and pushed the enrichment cache's lines out of the
 * cache each time. */
#define STEP_RECORDS 256

/* Enriches the records decoded so far (e: the tables, or NULL) unless the
 * store does, hands them to the store and the NDJSON output, and empties
 * the batch. */
static void hand_on(ng_collector *c, ng_enricher *e)
{
	if (!c->batch.n)
		return;
	ng_coll_check_times(c); /* may flag, move or drop records */
	if (!c->batch.n)
		return;
	if (e && !c->enrich_at_flush)
		ng_enricher_apply(e, c->batch.flows, c->batch.n);
	/* names from options data and SNMP; configured names win, before or
	 * after.  With SNMP, apply adds the interfaces records name to the
	 * table: a worker past the first does that under its mutex, which
	 * worker 0 takes to read the table (interfaces.c; uncontended but
	 * once a stats interval) */
	pthread_mutex_t *ifmu = c->main && c->main->snmp ? &((ng_coll_worker *)c)->mu : NULL;
	if (ifmu)
		pthread_mutex_lock(ifmu);
	ng_iftab_apply(c->ifs, c->batch.flows, c->batch.n);
	if (ifmu)
		pthread_mutex_unlock(ifmu);
	int rc = ng_store_writer_append(c->w, c->batch.flows, c->batch.n);
	if (rc >= 0)
		c->rx_records += c->batch.n;
	if (rc == 1) { /* a flush is due: now, not at the next 250 ms poll */
		ng_coll_flush_now(c->main ? c->main : c);
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

/* Decodes a batch of datagrams and hands their records on, a few hundred
 * at a time (whole datagrams). */
static void take_batch(ng_collector *c, const ng_datagram *dgs, int n)
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

/* The TCP/SCTP sessions the last receive call ended: their templates go
 * (RFC 7011 §8), after the messages that call read were decoded. */
static void end_sessions(ng_collector *c)
{
	const ng_session_end *e;
	size_t n = ng_listener_ended(c->lis, &e);
	for (size_t i = 0; i < n; i++)
		ng_decoder_session_end(c->dec, e[i].exporter, e[i].session);
}

/* Moves the sFlow counter samples the decoder collected into the counter
 * store's buffer (a memcpy; the flush thread writes them). */
static void take_counters(ng_collector *c)
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

/* The pause after a thin batch: the short one when any socket got less
 * than half the receive buffer asked for. */
static long thin_batch_pause_ns(const ng_listener *lis)
{
	for (size_t i = 0; i < ng_listener_count(lis); i++)
		if (ng_listener_rcvbuf(lis, i) < NG_LISTEN_RCVBUF / 2)
			return COALESCE_SMALL_NS;
	return COALESCE_NS;
}

/* Once a second: what must not wait for the next report. */
static void each_second(ng_collector *c, uint64_t now)
{
	ng_decoder_expire(c->dec, now);
	ng_coll_log_limits(c, now);
	ng_coll_log_restarts(c, now);
	ng_coll_timecheck_log(c, now);
	take_counters(c);
	ng_coll_save_templates(c, now);
	ng_coll_take_interfaces(c); /* each worker's own exporters */
	if (c->main) {              /* another worker: worker 0 reports for all */
		ng_coll_worker_publish(c);
		return;
	}
	ng_coll_publish_live(c);
	if (c->json)
		fflush(c->json);
}

/* Stopping: take what the kernel already holds, but do not chase a
 * flood forever (1024 batches is at most 64 Ki datagrams). */
static void drain(ng_collector *c)
{
	for (int i = 0; i < 1024; i++) {
		const ng_datagram *dgs;
		int n = ng_listener_recv(c->lis, 0, &dgs);
		if (n > 0)
			take_batch(c, dgs, n);
		end_sessions(c);
		if (n <= 0)
			break;
	}
	take_counters(c);
	ng_coll_timecheck_log(c, UINT64_MAX); /* what is not logged yet, now */
	ng_coll_take_interfaces(c);           /* worker 0 saves them after the others stop */
}

int ng_coll_receive_loop(ng_collector *c)
{
	const uint64_t report_ms = (uint64_t)c->cfg->stats_interval * 1000;
	const long pause_ns = thin_batch_pause_ns(c->lis);
	uint64_t now = ng_now_ms();
	uint64_t next_expire = now + 1000, next_report = now + report_ms;
	while (!ng_coll_stop_requested) {
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
		end_sessions(c);
		if (n > 0 && n < NG_LISTEN_BATCH / 2) {
			/* a thin batch: let datagrams gather in the socket buffer
			 * for a moment rather than wake for each one; a wake-up
			 * costs more than a datagram's decoding here, and receive
			 * times are stamped per batch (ms) anyway */
			struct timespec pause = {0, pause_ns};
			nanosleep(&pause, NULL);
		}
		now = ng_now_ms();
		if (now >= next_expire) {
			each_second(c, now);
			ng_coll_service_alive(c, now); /* systemd's watchdog (service.c) */
			next_expire = now + 1000;
		}
		if (now >= next_report && !c->main) {
			ng_coll_report(c);
			ng_coll_save_interfaces(c);
			next_report = now + report_ms;
		}
	}
	drain(c);
	atomic_store(&c->enrich.closed, true);
	return 0;
}
