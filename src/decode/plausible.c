/*
 * plausible.c — the rare path of the plausibility checks (plausible.h):
 * what is done with a record found wrong.  Out of line so that the
 * record walker's inline checks stay a few compares.
 */
#include "decode/plausible.h"

static void count(struct ng_domain *dom, enum ng_exporter_counter_id reason)
{
	ng_exporter_counter_set(&dom->st, reason, ng_exporter_counter_get(&dom->st, reason) + 1);
}

__attribute__((cold, noinline)) void ng_plaus_flag(struct ng_domain *dom, ng_flow *f, uint16_t bit,
                                                   enum ng_exporter_counter_id reason)
{
	f->anomalies |= bit;
	count(dom, reason);
}

__attribute__((cold, noinline)) uint32_t ng_plaus_rate(struct ng_domain *dom, ng_flow *f,
                                                       uint64_t raw, enum ng_rate_verdict v,
                                                       uint32_t fixed)
{
	count(dom, v == NG_RATE_FIXED ? NG_XC_sampling_fixed : NG_XC_sampling_rejected);
	if (v == NG_RATE_FIXED)
		dom->rate_swapped = true;
	if (f) {
		f->anomalies |= NG_ANOMALY_SAMPLING;
		f->sampling_raw = raw > UINT32_MAX ? UINT32_MAX : (uint32_t)raw;
	}
	return v == NG_RATE_FIXED ? fixed : 0;
}

void ng_plaus_times_slow(struct ng_domain *dom, ng_flow *f, uint64_t export_ms, uint64_t boot_lo)
{
	uint64_t lim = export_ms + NG_PLAUS_DAY_MS;
	if ((f->flow_start > lim || f->flow_end > lim) && export_ms)
		ng_plaus_flag(dom, f, NG_ANOMALY_EXPORT_TIME, NG_XC_time_after_export);
	else if (f->flow_start < boot_lo || f->flow_end < boot_lo)
		ng_plaus_flag(dom, f, NG_ANOMALY_EXPORT_TIME, NG_XC_time_before_boot);
}

void ng_plaus_counters_slow(struct ng_domain *dom, ng_flow *f, bool pkts_sent)
{
	uint64_t b = f->bytes_raw, p = f->packets_raw;
	if (!p) {
		if (b && pkts_sent)
			ng_plaus_flag(dom, f, NG_ANOMALY_COUNTERS, NG_XC_packets_zero);
		return;
	}
	/* b < p x hdr  <=>  p > floor(b / hdr), without overflow */
	if (p > b / (f->ip_version == 6 ? 40 : 20))
		ng_plaus_flag(dom, f, NG_ANOMALY_COUNTERS, NG_XC_bytes_below_headers);
}
