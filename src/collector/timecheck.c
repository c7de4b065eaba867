/*
 * timecheck.c — the plausibility window on flow times (docs/security.md,
 * "Time-hostile input").
 *
 * A flow record's start and end come from the exporter: from its clock,
 * its sysUptime, fields of the record.  Anyone who can reach the UDP port
 * can send any of them, and a broken exporter does too: 100 000 junk
 * NetFlow v5 datagrams decoded into 200 000 flows dated anywhere from
 * 1970 to 2106.  The store files rows by the hour of flow_start, so such
 * flows scattered it, one segment per hour they touched, and the flush
 * that wrote them took minutes while good rows waited.
 *
 * So every record is checked here, once, as the receive thread hands a
 * batch to the store and the NDJSON output (hand_on, receive.c), for
 * every protocol and for held data decoded late alike: a record whose
 * flow_start or flow_end lies more than collect.max_past (default 7 days:
 * softflowd's longest flow lifetime; up to 36600 days, i.e. no limit, for
 * a replay of old captures) before its receive time, or more
 * than collect.max_future (default 1 hour: exporters' clocks drift; an
 * active timeout moves flow_start back, never forward) after it, is
 * time-implausible.  The receive time is the collector's clock when the
 * datagram came in, which is the one time here that a sender cannot set.
 *
 * Then, as collect.implausible_time says:
 *   keep    (the default: nothing is lost) flow_start and flow_end become
 *           time_received, the times as decoded go to orig_start and
 *           orig_end, and anomalies gets NG_ANOMALY_TIME.  The record is
 *           filed in the hour it arrived, and a query by time finds it
 *           there; the store's own rules (each segment's rows in its hour,
 *           sorted by flow_start, rollups by flow_start) stay true.
 *   reject  the record is dropped from the batch.
 * Either way it is counted per exporter and observation domain
 * (time_implausible, NG_EXPORTER_COUNTERS) and logged: the first time at
 * once, then a summary at most once a minute.
 *
 * Why here and not in the decoders or the store writer: this is where
 * every record of every protocol passes once, on the thread that owns the
 * decoder's counters (so counting takes no lock), with the collector's
 * configuration at hand, before both outputs; the writer, a lower layer
 * used by compaction and tests with any times, bounds its own work
 * instead (NG_FLUSH_MAX_HOURS, store/writer.c).  `nagare decode` (pcap to
 * NDJSON) does not pass here: it stores nothing, and a capture's flows
 * are as old as the capture.
 *
 * Cost on the hot path: a few arithmetic operations and two compares a
 * record (the window as one unsigned range), on records in the cache; the
 * slow path runs for implausible records only.
 */
#include <inttypes.h>
#include <string.h>

#include "collector/collector_int.h"
#include "core/addr.h"
#include "core/log.h"
#include "core/timefmt.h"

#define LOG_EVERY_MS 60000u /* a summary of implausible records at most this often */

/* True when t lies in [lo, lo + span], lo = the receive time - max_past:
 * unsigned, so a time before lo wraps above span (one compare). */
static inline bool in_window(uint64_t t, uint64_t lo, uint64_t span)
{
	return t - lo <= span;
}

/* The window of a record received at `recv`: [*lo, *lo + *span].  A
 * max_past beyond the epoch (--max-past 36600d: no limit back) starts it
 * at 0. */
static inline void window(const ng_collector *c, uint64_t recv, uint64_t *lo, uint64_t *span)
{
	uint64_t past = c->tc.past < recv ? c->tc.past : recv;
	*lo = recv - past;
	*span = past + c->tc.future;
}

/* Notes an implausible record for the log (the first one of a period is
 * the example). */
static void note(ng_collector *c, const ng_flow *f)
{
	ng_coll_timecheck *t = &c->tc;
	if (!t->unlogged++) {
		memcpy(t->ex_exporter, f->exporter, 16);
		t->ex_start = f->flow_start;
		t->ex_end = f->flow_end;
		t->ex_received = f->time_received;
	}
}

/* Counts `n` implausible records of (exporter, domain) in the decoder. */
static void count(ng_collector *c, const uint8_t exporter[16], uint32_t domain, uint64_t n)
{
	if (n)
		ng_decoder_count(c->dec, exporter, domain, NG_XC_time_implausible, n);
}

/* The slow path from record i on (the first implausible one): keeps
 * (flags) or drops each implausible record, counting runs of one
 * exporter and domain at a time.  Returns the records left in the batch. */
static size_t handle(ng_collector *c, size_t i)
{
	ng_flow *f = c->batch.flows;
	const size_t n = c->batch.n;
	const bool reject = c->cfg->reject_implausible;
	size_t out = i, run = 0;
	bool key = false; /* a run being counted: its exporter and domain */
	uint8_t key_exp[16];
	uint32_t key_dom = 0;
	for (; i < n; i++) {
		ng_flow *r = &f[i];
		uint64_t lo, span;
		window(c, r->time_received, &lo, &span);
		if (in_window(r->flow_start, lo, span) && in_window(r->flow_end, lo, span)) {
			if (out != i)
				f[out] = *r;
			out++;
			continue;
		}
		if (!key || key_dom != r->observation_domain || memcmp(key_exp, r->exporter, 16)) {
			if (key)
				count(c, key_exp, key_dom, run);
			key = true;
			memcpy(key_exp, r->exporter, 16);
			key_dom = r->observation_domain;
			run = 0;
		}
		run++;
		note(c, r);
		if (reject) {
			c->tc.rejected++;
			continue;
		}
		r->orig_start = r->flow_start;
		r->orig_end = r->flow_end;
		r->flow_start = r->flow_end = r->time_received;
		r->anomalies |= NG_ANOMALY_TIME;
		c->tc.kept++;
		if (out != i)
			f[out] = *r;
		out++;
	}
	if (key)
		count(c, key_exp, key_dom, run);
	return out;
}

void ng_coll_check_times(ng_collector *c)
{
	const ng_flow *f = c->batch.flows;
	const size_t n = c->batch.n;
	for (size_t i = 0; i < n; i++) {
		uint64_t lo, span;
		window(c, f[i].time_received, &lo, &span);
		if (__builtin_expect(!in_window(f[i].flow_start, lo, span) ||
		                         !in_window(f[i].flow_end, lo, span),
		                     0)) {
			c->batch.n = handle(c, i);
			if (!c->tc.logged_ms) /* the first: at once */
				ng_coll_timecheck_log(c, ng_now_ms());
			return;
		}
	}
}

void ng_coll_timecheck_log(ng_collector *c, uint64_t now)
{
	ng_coll_timecheck *t = &c->tc;
	if (!t->unlogged || (t->logged_ms && now - t->logged_ms < LOG_EVERY_MS))
		return;
	char a[NG_ADDR_STRLEN], s[40], e[40], r[40];
	ng_warn("%" PRIu64 " flow records with times outside the window (%" PRIu64
	        " s before to %" PRIu64 " s after their receive time) %s, e.g. from exporter %s: "
	        "flow_start %s, flow_end %s, received %s (time_implausible in nagare status; "
	        "collect.max_past, max_future, implausible_time; %" PRIu64 " kept, %" PRIu64
	        " rejected since start)",
	        t->unlogged, t->past / 1000, t->future / 1000,
	        c->cfg->reject_implausible ? "were rejected"
	                                   : "were kept in the hour they arrived, flagged "
	                                     "(anomalies 1, times in orig_start/orig_end)",
	        ng_addr_format(t->ex_exporter, a), ng_time_format(t->ex_start, s),
	        ng_time_format(t->ex_end, e), ng_time_format(t->ex_received, r), t->kept,
	        t->rejected);
	t->logged_ms = now;
	t->unlogged = 0;
}
