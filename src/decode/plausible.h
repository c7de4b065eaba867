/*
 * plausible.h — values of a flow record that cannot be right (issue 18,
 * docs/fields.md "anomalies", docs/exporters.md).
 *
 * Exporters in the field send numbers no device could have measured.  A
 * collector that stores them as they are is wrong without a word, so the
 * decoder checks a few, per record, after the record walker has read them
 * (record.c finish_record, netflow_v5.c), and says what it found: a bit in
 * ng_flow.anomalies and a per-exporter counter with the reason
 * (NG_EXPORTER_COUNTERS).  Nothing is "fixed" but the one case below whose
 * correction is unambiguous.
 *
 * Sampling rate (NG_ANOMALY_SAMPLING).  Some MikroTik RouterOS versions put
 * samplingInterval (IE 34) in the data record in little-endian order, so
 * 1000 arrives as 0xE8030000 = 3 892 510 720 and every byte count would be
 * multiplied by billions (goflow2 issue 113, akvorado issue 417,
 * fastnetmon issue 985).  The rule, for a rate read from a record or from
 * options data, `sw` being the value with its bytes reversed over the
 * field's length (IE 34/50 only):
 *   - up to NG_RATE_SWAP_MAX (65 535) a rate is taken as sent;
 *   - past NG_RATE_MAX (2^24 - 1 = 16 777 215: one packet in 16 million,
 *     far past any sampler's setting) it cannot be a rate: when sw is
 *     1..65 535 (the low 16 bits sent are zero, as a 16-bit rate sent
 *     little-endian in 4 bytes leaves them) the rate was byte-swapped and
 *     sw is used (sampling_fixed; the domain is then known to swap);
 *     otherwise it is refused (sampling_rejected), and so is any rate
 *     past the bound computed from IE 305/306 or 309/310: the record is
 *     scaled as if it carried no rate (the options data's rate, else 1);
 *   - in between, a value whose sw is 1..65 535 (a multiple of 65 536:
 *     256 sent little-endian arrives as 65 536, 512 as 131 072) is
 *     ambiguous (akvorado issue 417: "if we read 65536, we can't really
 *     know"): swapped only when its domain has already sent an
 *     unambiguously swapped rate, else taken as sent.  A RouterOS whose
 *     rate is a multiple of 256 and that never sends another is scaled by
 *     the value as sent: docs/exporters.md says to choose another rate;
 *   - a rate in 2 bytes sent little-endian (1000 as 59 395) cannot be told
 *     from a real one and is taken as sent.
 * When a rate was swapped or refused the value as sent stays in
 * sampling_raw.  A rate from options data is checked once, when the
 * options record is read: it is stored corrected, or not at all, and
 * counted; the records it then applies to carry no flag.
 *
 * Times (NG_ANOMALY_EXPORT_TIME).  A flow is exported after it is
 * measured, so a start or end more than NG_PLAUS_DAY_MS after the export
 * time of its message (time_after_export) came from a wrong clock or a
 * wrong field.  For NetFlow v9, a start or end more than a day before the
 * boot its header implies (export time - sysUpTime) is counted as
 * time_before_boot.  One day of margin because sysUpTime wraps every
 * 2^32 ms (49.7 days), and then the header's "boot" is the wrap: a flow
 * running across it lies before that by as long as it ran before the
 * wrap, which a flow of less than a day never exceeds.  An exporter whose
 * export time is 0 (no clock) is not checked.  Unlike the collector's
 * window (collector/timecheck.c, against the receive time, which a sender
 * cannot set), these compare the exporter's times with each other; the
 * times are stored as decoded and the collector's window still applies on
 * its own.
 *
 * Counters (NG_ANOMALY_COUNTERS).  octetDeltaCount counts IP headers and
 * payload (RFC 7012 IE 1), so bytes below packets x the smallest header
 * (20 for IPv4, RFC 791; 40 for IPv6, RFC 8200; 20 when the family is
 * unknown) cannot be (bytes_below_headers); a record that sends a packet
 * counter of 0 with bytes (packets_zero) neither.  A record that sends no
 * packet counter (Cisco NSEL) is not checked.  bytes and packets are
 * stored as sent (and scaled).
 *
 * Cost: per record a compare for the rate, an add and two compares for
 * the times, a division by a constant and two compares for the counters;
 * what is found is handled out of line (plausible.c).
 */
#ifndef NG_DECODE_PLAUSIBLE_H
#define NG_DECODE_PLAUSIBLE_H

#include "decode/decode_int.h"

#define NG_RATE_MAX UINT32_C(0xffffff) /* largest sampling rate taken as sent */
#define NG_RATE_SWAP_MAX 0xffffu       /* largest byte-swapped rate corrected */
#define NG_PLAUS_DAY_MS UINT64_C(86400000)

enum ng_rate_verdict { NG_RATE_OK, NG_RATE_FIXED, NG_RATE_REJECTED };

/* Checks a sampling rate `raw` (0 < raw) as read from a field of `len`
 * bytes (0: computed from several fields, which no swap explains) by the
 * rule above; `swapped`: the domain is known to swap.  Sets *rate to the
 * rate to use (not set when refused). */
static inline enum ng_rate_verdict ng_rate_check(uint64_t raw, unsigned len, bool swapped,
                                                 uint32_t *rate)
{
	if (ng_likely(raw <= NG_RATE_SWAP_MAX)) {
		*rate = (uint32_t)raw;
		return NG_RATE_OK;
	}
	/* sw: raw with its len bytes reversed (raw > 2^16 needs 3 or more) */
	uint64_t sw = len >= 3 && len <= 8 ? __builtin_bswap64(raw) >> (64 - 8 * len) : 0;
	bool swappable = sw >= 1 && sw <= NG_RATE_SWAP_MAX;
	if (raw <= NG_RATE_MAX && !(swappable && swapped)) {
		*rate = (uint32_t)raw;
		return NG_RATE_OK;
	}
	if (swappable) {
		*rate = (uint32_t)sw;
		return NG_RATE_FIXED;
	}
	return NG_RATE_REJECTED;
}

/* Flags `f` with anomaly `bit` and counts counter `reason` of `dom`
 * (plausible.c, out of line: the rare path). */
void ng_plaus_flag(struct ng_domain *dom, ng_flow *f, uint16_t bit,
                   enum ng_exporter_counter_id reason);

/* Handles a sampling rate `raw` that ng_rate_check did not take as sent,
 * with its verdict `v` and the corrected rate `fixed` (NG_RATE_FIXED):
 * counts the verdict in dom (a fixed one marks it as known to swap) and,
 * for a flow record's own rate (f not
 * NULL; NULL for options data), flags f and keeps `raw` in
 * f->sampling_raw.  Returns the rate to use, 0 when refused. */
uint32_t ng_plaus_rate(struct ng_domain *dom, ng_flow *f, uint64_t raw, enum ng_rate_verdict v,
                       uint32_t fixed);

/* The rare paths of the two checks below (plausible.c): the exact tests,
 * flagging and counting. */
void ng_plaus_times_slow(struct ng_domain *dom, ng_flow *f, uint64_t export_ms, uint64_t boot_lo);
/* The exact test of f's counters: flags and counts bytes below packets x
 * the smallest header of f's family, or 0 packets with bytes when the
 * record sent a packet counter (`pkts_sent`). */
void ng_plaus_counters_slow(struct ng_domain *dom, ng_flow *f, bool pkts_sent);

/* The checks of f's times against the export time `export_ms` of its
 * message (0: unknown, not checked) and `boot_lo`, the exporter's boot
 * less a day (0: not known).  The OR of the two times is at least the
 * later one and their AND at most the earlier, so a record passes here
 * when both lie in the window; the few others take the exact test. */
static inline void ng_plaus_times(struct ng_domain *dom, ng_flow *f, uint64_t export_ms,
                                  uint64_t boot_lo)
{
	if (ng_unlikely((f->flow_start | f->flow_end) > export_ms + NG_PLAUS_DAY_MS ||
	                (f->flow_start & f->flow_end) < boot_lo))
		ng_plaus_times_slow(dom, f, export_ms, boot_lo);
}

/* True when f's bytes_raw and packets_raw need the exact test
 * (ng_plaus_counters_slow): not 1 <= packets < 2^58 with bytes >= packets
 * x 40, which is sound for either family (and cannot overflow).  A
 * predicate, so that the caller works out what the slow path needs only
 * when it runs. */
static inline bool ng_plaus_counters_odd(const ng_flow *f)
{
	uint64_t p = f->packets_raw;
	return ng_unlikely(p - 1 >= (UINT64_C(1) << 58) - 1 || p * 40 > f->bytes_raw);
}

#endif
