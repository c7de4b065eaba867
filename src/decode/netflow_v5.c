/*
 * netflow_v5.c — NetFlow versions 1, 5 and 7 (fixed formats).
 *
 * There is no RFC; the formats are Cisco's "NetFlow Export Datagram Format"
 * (Cisco IOS NetFlow Configuration Guide, "NetFlow Export Datagram Formats"):
 *
 *   v1 header 16 bytes: version, count, sysUptime, unix_secs, unix_nsecs;
 *      records 48 bytes, at most 24 a datagram.
 *   v5 header 24 bytes: … + flow_sequence, engine_type, engine_id,
 *      sampling_interval (2 bits mode, 14 bits interval); records 48 bytes,
 *      at most 30.
 *   v7 header 24 bytes: … + flow_sequence, reserved; records 52 bytes,
 *      at most 28.
 *
 *   record: srcaddr(0) dstaddr(4) nexthop(8) input(12,2) output(14,2)
 *      dPkts(16) dOctets(20) First(24) Last(28) srcport(32,2) dstport(34,2)
 *      v5/v7: pad1(36) tcp_flags(37) prot(38) tos(39) src_as(40,2)
 *             dst_as(42,2) src_mask(44) dst_mask(45)
 *      v1:    pad(36,2) prot(38) tos(39) tcp_flags(40)
 *
 * First/Last are sysUptime (ms) at the flow's first/last packet; with the
 * header's unix time they give absolute times (signed difference, since
 * some exporters stamp flows a little after the header's sysUptime).
 * flow_sequence counts flow records, so a gap is a number of lost records.
 */
#include "decode/decode_int.h"
#include "decode/plausible.h"

#include <string.h>

#include "core/addr.h"

/* Largest believable forward gap, in records; beyond it = restart. */
#define V5_MAX_GAP 1000000u

struct v5_format {
	size_t hdr, rec, max;
};

static void v5_record(const uint8_t *r, unsigned version, ng_flow *f, uint64_t export_ms,
                      uint32_t uptime)
{
	ng_addr_from_v4(f->src_addr, r);
	ng_addr_from_v4(f->dst_addr, r + 4);
	ng_addr_from_v4(f->next_hop, r + 8);
	f->in_if = ng_get_be16(r + 12);
	f->out_if = ng_get_be16(r + 14);
	f->packets_raw = ng_get_be32(r + 16);
	f->bytes_raw = ng_get_be32(r + 20);
	int32_t ago_first = (int32_t)(uptime - ng_get_be32(r + 24));
	int32_t ago_last = (int32_t)(uptime - ng_get_be32(r + 28));
	f->flow_start = (uint64_t)((int64_t)export_ms - ago_first);
	f->flow_end = (uint64_t)((int64_t)export_ms - ago_last);
	f->src_port = ng_get_be16(r + 32);
	f->dst_port = ng_get_be16(r + 34);
	f->protocol = r[38];
	f->tos = r[39];
	f->ip_version = 4;
	if (version == 1) {
		f->tcp_flags = r[40];
		ng_icmp_from_port(f);
		return;
	}
	f->tcp_flags = r[37];
	f->src_as = ng_get_be16(r + 40);
	f->dst_as = ng_get_be16(r + 42);
	f->src_mask = r[44];
	f->dst_mask = r[45];
	ng_icmp_from_port(f);
}

size_t ng_decode_v5(ng_decoder *d, const ng_datagram *dg, ng_flow_batch *out)
{
	const uint8_t *p = dg->data;
	unsigned version = ng_get_be16(p);
	struct v5_format fmt = version == 1   ? (struct v5_format){16, 48, 24}
	                       : version == 5 ? (struct v5_format){24, 48, 30}
	                                      : (struct v5_format){24, 52, 28};
	struct ng_domain *dom = ng_domain_get(d, dg->exporter, 0);
	if (!dom)
		return 0;
	ng_domain_seen(dom, dg, dg->len, (uint8_t)version);
	/* Cisco format: the fixed header must be present */
	if (ng_unlikely(dg->len < fmt.hdr)) {
		ng_count_error(dom, NG_DERR_SHORT_HEADER);
		return 0;
	}
	size_t count = ng_get_be16(p + 2);
	uint32_t uptime = ng_get_be32(p + 4);
	uint64_t export_ms = (uint64_t)ng_get_be32(p + 8) * 1000 + ng_get_be32(p + 12) / 1000000;
	/* Cisco format: count is 1..max and the records must fit the
	 * datagram; decode those that do fit, count the mismatch. */
	size_t fit = (dg->len - fmt.hdr) / fmt.rec;
	if (ng_unlikely(count == 0 || count > fmt.max || count > fit)) {
		ng_count_error(dom, NG_DERR_BAD_LENGTH);
		if (count > fit)
			count = fit;
	}
	uint32_t rate = 1;
	uint8_t src = NG_SAMPLING_NONE;
	if (version == 5) {
		uint16_t si = ng_get_be16(p + 22);
		if (si & 0x3fff) {
			rate = si & 0x3fff;
			src = NG_SAMPLING_HEADER;
		}
		/* flow_sequence: records sent before this datagram */
		ng_seq_check(&dom->seq, ng_get_be32(p + 16), (uint32_t)count, V5_MAX_GAP,
		             &dom->st.lost);
	} else if (version == 7) {
		ng_seq_check(&dom->seq, ng_get_be32(p + 16), (uint32_t)count, V5_MAX_GAP,
		             &dom->st.lost);
	}
	size_t n = 0;
	for (size_t i = 0; i < count; i++) {
		ng_flow *f = ng_flow_batch_push(out);
		if (!f)
			break;
		v5_record(p + fmt.hdr + i * fmt.rec, version, f, export_ms, uptime);
		memcpy(f->exporter, dg->exporter, 16);
		f->time_received = dg->time_received;
		f->flow_version = (uint8_t)version;
		f->sampling_rate = rate;
		f->sampling_source = src;
		f->bytes = f->bytes_raw * rate;
		f->packets = f->packets_raw * rate;
		/* plausible.h: dPkts is always sent */
		ng_plaus_times(dom, f, export_ms, 0);
		if (ng_plaus_counters_odd(f))
			ng_plaus_counters_slow(dom, f, true);
		n++;
	}
	dom->st.records += n;
	dom->st.sampling_rate = rate;
	dom->st.sampling_source = src;
	return n;
}
