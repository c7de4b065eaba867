/*
 * restart.c — telling that an exporter restarted, from its message headers.
 *
 * An exporter that reboots, or whose export process restarts, forgets its
 * templates and may define the same template IDs with other fields: RFC
 * 3954 §5.2 says a changed template's ID "SHOULD NOT be reused until the
 * NetFlow process or Exporter restarts", so after a restart it may be.  A
 * collector that kept the old definition decodes the new data with the old
 * layout: numbers that look like flows and are garbage.  So each domain
 * keeps a mark of its latest datagram (struct ng_rmark: sequence number,
 * uptime, export time, receive time) and each header is compared with it,
 * once per datagram (never per record).  On a restart:
 *
 *   - the domain's epoch moves on: its templates, learnt at the old epoch,
 *     are stale (ng_tpl_current): a data set of a stale template is held
 *     like one whose template is unknown (templates.c) and decoded when
 *     the template is announced again; one announced unchanged resumes at
 *     once (ng_tpl_add puts it in the new epoch);
 *   - data sets held before the restart are dropped (held_dropped): the
 *     template of their layout will not come again;
 *   - the sequence tracking resynchronises (without this, the numbers that
 *     start again from 0 look like late datagrams and the loss count goes
 *     wrong) and the system init time learnt from options data (IE 160,
 *     which the restart changed) is forgotten;
 *   - restarts is counted in the domain's counters, and the decoder keeps
 *     the latest one for the collector's log line (ng_decoder_restarts).
 *
 * The signals, and what must not look like one (UDP loses and reorders
 * datagrams, numbers wrap at 2^32):
 *
 *   uptime went back  NetFlow v9 sysUpTime (RFC 3954 §5.1: "Time in
 *                     milliseconds since this device was first booted"),
 *                     sFlow uptime: lower than the mark's by more than
 *                     RS_UPTIME_SLACK_MS (a late datagram is ms behind),
 *                     unless it wrapped: 2^32 ms is 49.7 days, and a wrap
 *                     moves the uptime on by about the time that passed.
 *                     An uptime that stays constant (some exporters send
 *                     0) never went back.  With the export time (v9 UNIX
 *                     Secs) gone back too, it is a late datagram (or
 *                     captures replayed out of order).  With the sequence
 *                     number moved on by 1 to NG_RS_SEQ_ON_MAX, the
 *                     exporter kept counting: not a restart either (an
 *                     exporter in the corpus sends an uptime that goes
 *                     back 113 s between datagrams 16 apart).  sFlow has
 *                     no export time: uptime and sequence tell.
 *   sequence restarted  v9: "Incremental sequence counter of all Export
 *                     Packets" (RFC 3954 §5.1); IPFIX: the count of data
 *                     records sent before this message (RFC 7011 §3.1);
 *                     sFlow: datagrams of the sub-agent.  A restart starts
 *                     it again from 0, so the new number went back from
 *                     the mark's (a signed 32-bit difference, which a
 *                     wrap does not fool) AND is nearer 0 than the mark
 *                     (new < back: "starting again from a small value"),
 *                     AND went back by more than reordering explains: a
 *                     message with a later export time was sent later
 *                     (RS_SEQ_BACK_LATER), one in the same second may be
 *                     a late one (RS_SEQ_BACK_SAME); with an export time
 *                     that went back it is a late datagram, never a
 *                     restart (the thresholds are RS_<protocol>_BACK_*).
 *
 * Two export processes behind one address with the same observation
 * domain (nfdump#159) look like a restart at each turn.  The first turn
 * is taken for one; when the "restarted" process then sends again from
 * its own UDP port, its sequence going on, they are two: the templates
 * are made current again, the held sets decode, and the domain is no
 * longer checked (NG_RS_TWO).  An exporter that restarts gets a new port
 * (a new socket) or keeps its fixed one; neither goes on with the old
 * sequence from the old port.
 *
 * A late (reordered) datagram does not move the mark on, so the next one
 * is compared with the latest.  v9 and sFlow count either signal (the
 * uptime only while the sequence does not move on); IPFIX has only the
 * sequence (its export time alone cannot tell).
 *
 * After the state file is loaded (state.c), each domain's mark is the one
 * of the datagram before the collector stopped: the first datagram after
 * the start is compared with it by the same rules, so a collector restart
 * alone decodes at once with the saved templates (the sequence moved on,
 * the uptime went forward), and an exporter restart while the collector
 * was down holds its data until the templates come again.  A domain
 * without a mark (a state file of format 1) trusts its saved templates.
 * docs/exporters.md ("When an exporter restarts") has the choices in
 * words.
 */
#include "decode/decode_int.h"

#include <string.h>

/* A late datagram's uptime is ms to a few seconds behind the mark's. */
#define RS_UPTIME_SLACK_MS 10000u
/* Sequence steps back a restart must pass, by the unit of the protocol
 * (v9, sFlow: datagrams; IPFIX: records).  LATER: the export time moved on
 * by a second or more, so the message cannot be an earlier one that came
 * late (RFC 7011 §3.1); SAME: no later export time to tell. */
#define RS_V9_BACK_LATER 16u
#define RS_V9_BACK_SAME 1000u
#define RS_IPFIX_BACK_LATER 256u
#define RS_IPFIX_BACK_SAME 100000u

/* True when `up` is lower than the mark's uptime `was` by more than the
 * slack and is not a wrap: a wrap moves the uptime on, modulo 2^32, by no
 * more than the time that passed (`elapsed` ms) plus the slack. */
static bool uptime_back(uint32_t was, uint32_t up, uint64_t elapsed)
{
	if ((uint64_t)up + RS_UPTIME_SLACK_MS >= was)
		return false;
	uint32_t fwd = up - was; /* the step if it wrapped */
	return fwd > elapsed + RS_UPTIME_SLACK_MS;
}

/* True when sequence number `seq` restarted from the mark's `was` (rules
 * in the file comment), with `min_back` the steps back reordering can
 * explain. */
static bool seq_restarted(uint32_t was, uint32_t seq, uint32_t min_back)
{
	int32_t dlt = (int32_t)(seq - was);
	if (dlt >= 0)
		return false;
	uint32_t back = (uint32_t) - (int64_t)dlt;
	return back > min_back && seq < back;
}

/* The larger of the two clocks' advance since the mark, ms (0 when both
 * went back): the wrap test wants the most time that can have passed. */
static uint64_t elapsed_ms(const struct ng_rmark *r, const struct ng_rhdr *h)
{
	uint64_t a = h->received_ms > r->received_ms ? h->received_ms - r->received_ms : 0;
	uint64_t b = h->export_ms > r->export_ms ? h->export_ms - r->export_ms : 0;
	return a > b ? a : b;
}

/* True when header `h` shows that the exporter restarted since mark `r`
 * (same protocol version). */
static bool restarted(const struct ng_rmark *r, const struct ng_rhdr *h)
{
	/* an export time that went back: a late datagram (or a clock step),
	 * whatever its uptime and sequence number say */
	if (h->export_ms < r->export_ms)
		return false;
	if (h->has_uptime) {
		/* a sequence that moves on says the exporter kept counting,
		 * whatever the uptime says (some send an uptime that jumps
		 * back and forth: akvorado/samplingrate-*.pcap, 113 s back
		 * with the sequence 16 on) */
		int32_t on = (int32_t)(h->seq - r->seq);
		if (on > 0 && (uint32_t)on <= NG_RS_SEQ_ON_MAX)
			return false;
		if (uptime_back(r->uptime_ms, h->uptime_ms, elapsed_ms(r, h)))
			return true;
	}
	bool later = h->export_ms >= r->export_ms + 1000;
	uint32_t min_back;
	if (h->version == 10)
		min_back = later ? RS_IPFIX_BACK_LATER : RS_IPFIX_BACK_SAME;
	else
		min_back = later ? RS_V9_BACK_LATER : RS_V9_BACK_SAME;
	return seq_restarted(r->seq, h->seq, min_back);
}

/* The restart of `dom`: counted, its templates made stale, its sequence
 * and system init time forgotten. */
static void apply_restart(ng_decoder *d, struct ng_domain *dom)
{
	dom->st.restarts++;
	dom->epoch++;
	dom->seq.valid = false;
	dom->sysinit_ms = 0;
	/* sets held before the restart wait for a template of the old
	 * layout, which will not come: the new one must not decode them */
	if (dom->nheld)
		ng_held_drop_domain(d, dom);
	d->restarts++;
	memcpy(d->rs_last.exporter, dom->st.exporter, 16);
	d->rs_last.domain = dom->st.domain;
	d->rs_last.version = dom->st.version;
}

/* True when `h` comes from the port the mark had before the last restart,
 * not the mark's own, and goes on with that port's sequence: the process
 * that "restarted" is still sending, so the other was a second one. */
static bool second_process(const struct ng_rmark *r, const struct ng_rhdr *h)
{
	return r->prev_port && h->port == r->prev_port && h->port != r->port &&
	       (int32_t)(h->seq - r->prev_seq) > 0;
}

/* Two export processes share `dom` (nfdump#159: several behind one
 * address with one observation domain; RFC 7011 §8.4 tells them by port,
 * nagare by address and domain): what the last restart made stale is
 * current again, and the domain is not checked any more (the two
 * sequences alternate). */
static void two_streams(struct ng_domain *dom)
{
	dom->mark.two_streams = true;
	for (struct ng_lru *n = dom->tpls.next; n != &dom->tpls; n = n->next)
		ng_lru_entry(n, struct ng_tpl, dlru)->epoch = dom->epoch;
	dom->last_tpl = NULL;
}

enum ng_restart_verdict ng_restart_check_all(ng_decoder *d, struct ng_domain *dom,
                                             const struct ng_rhdr *h)
{
	struct ng_rmark *r = &dom->mark;
	enum ng_restart_verdict v = NG_RS_NONE;
	if (ng_unlikely(r->two_streams))
		return NG_RS_NONE;
	if (ng_likely(r->version == h->version)) {
		if (ng_unlikely(second_process(r, h))) {
			two_streams(dom);
			return NG_RS_TWO;
		}
		if (restarted(r, h)) {
			v = NG_RS_RESTART;
			apply_restart(d, dom);
			r->prev_port = r->port;
			r->prev_seq = r->seq;
		} else if ((int32_t)(h->seq - r->seq) < 0) {
			return NG_RS_NONE; /* a late datagram leaves the mark */
		}
	}
	r->version = h->version;
	r->seq = h->seq;
	r->uptime_ms = h->uptime_ms;
	r->export_ms = h->export_ms;
	r->received_ms = h->received_ms;
	r->port = h->port;
	return v;
}

uint64_t ng_decoder_restarts(const ng_decoder *d, ng_restart_info *last)
{
	if (last)
		*last = d->rs_last;
	return d->restarts;
}
