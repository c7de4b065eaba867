/*
 * sflow.c — sFlow version 5 (sflow.org, "sFlow Version 5", July 2004; host
 * structures from "sFlow Host Structures"; discarded packets from "sFlow
 * Dropped Packet Notification Structures").
 *
 * All of sFlow is XDR (RFC 4506): big-endian 32-bit words.  A datagram:
 *
 *   version(5) | agent address type (1 IPv4, 2 IPv6) | agent address (4/16)
 *   | sub_agent_id | sequence_number | uptime (ms) | num_samples | samples
 *
 * a sample:  data_format (enterprise << 12 | format) | length | data
 *   0:1 flow_sample         seq, source_id, rate, pool, drops, input, output,
 *                           num records, flow records
 *   0:2 counters_sample     seq, source_id, num records, counter records
 *   0:3 expanded flow       as 0:1 with source_id and input/output as two words
 *   0:4 expanded counters   as 0:2 with source_id as two words
 *   0:5 discarded packet    seq, source_id (2 words), drops, input, output,
 *                           reason, num records, flow records
 * a record:  data_format | length | data (flow records: 0:1 sampled header,
 *   0:2 sampled Ethernet, 0:3 sampled IPv4, 0:4 sampled IPv6, 0:1001
 *   extended switch, 0:1002 extended router, 0:1003 extended gateway;
 *   counter records: 0:1 generic interface, 0:2 Ethernet, 0:2003..2006 host).
 *
 * Every flow or discard sample becomes one ng_flow standing for
 * sampling_rate packets (docs/sflow.md); counter samples are kept for
 * ng_decoder_take_counters.  Formats and records that are unknown (or of
 * another enterprise) are skipped by their length.  Every length is checked
 * against what is left before it is read; a bad sample or record is
 * counted and the rest of the datagram is still decoded where the lengths
 * allow it.
 */
#include "decode/sflow.h"

#include <stdlib.h>
#include <string.h>

#include "core/addr.h"
#include "decode/decode_int.h"
#include "decode/pkt_header.h"

#define SFLOW_VERSION_BYTE 0x50 /* flow_version / stats version of sFlow records */
#define DGRAM_MAX_GAP 100000u   /* datagram sequence: larger jumps are restarts */
#define SAMPLE_MAX_GAP 1000000u /* per source_id sample sequence */

/* Interface encoding (sFlow v5 §"Input/output port information"). */
#define IF_FORMAT_SINGLE 0
#define IF_FORMAT_DISCARD 1
#define IF_FORMAT_MULTIPLE 2
#define IF_INTERNAL 0x3fffffffu

/* Bytes an XDR opaque<> of `n` bytes occupies: padded to a multiple of 4
 * (RFC 4506 §4.10), but never past what is left (an agent that leaves the
 * padding out of its last record must not cost the record). */
static inline size_t xdr_advance(uint32_t n, size_t left)
{
	size_t a = ((size_t)n + 3) & ~(size_t)3;
	return a <= left ? a : left;
}

/* A sequence tracked per (exporter, sub-agent, source_id, sample kind). */
struct src_key {
	uint8_t exporter[16];
	uint32_t sub_agent;
	uint32_t type;
	uint32_t index;
	uint32_t kind; /* 0 flow, 1 counter, 2 discard: separate sequences */
};

struct src_seq {
	struct src_key k;
	struct ng_seq seq;
	bool used;
};

struct ng_sflow {
	ng_counter_batch pending;
	uint64_t dropped;
	struct src_seq *tab; /* open addressing, power-of-two size */
	size_t cap, n;
};

/* ---- state ---- */

static struct ng_sflow *state(ng_decoder *d)
{
	if (!d->sflow)
		d->sflow = calloc(1, sizeof *d->sflow);
	return d->sflow;
}

void ng_sflow_free(ng_decoder *d)
{
	if (!d->sflow)
		return;
	free(d->sflow->pending.s);
	free(d->sflow->tab);
	free(d->sflow);
	d->sflow = NULL;
}

/* A word-at-a-time hash (ng_hash_words): this runs once per sample, and
 * the byte-wise FNV of ng_hash_bytes cost more than the rest of the sample
 * (measured: ~40% of the decode time). */
static uint64_t key_hash(const struct src_key *k)
{
	uint64_t w[sizeof *k / 8];
	_Static_assert(sizeof *k % 8 == 0, "src_key is whole 64-bit words");
	memcpy(w, k, sizeof w);
	return ng_hash_words(w, sizeof w / sizeof w[0]);
}

static int seq_grow(struct ng_sflow *sf)
{
	size_t cap = sf->cap ? sf->cap * 2 : 256;
	struct src_seq *t = calloc(cap, sizeof *t);
	if (!t)
		return -1;
	for (size_t i = 0; i < sf->cap; i++) {
		if (!sf->tab[i].used)
			continue;
		size_t j = key_hash(&sf->tab[i].k) & (cap - 1);
		while (t[j].used)
			j = (j + 1) & (cap - 1);
		t[j] = sf->tab[i];
	}
	free(sf->tab);
	sf->tab = t;
	sf->cap = cap;
	return 0;
}

/* The sequence state of a source_id, created on first use; NULL when out
 * of memory.  Bounded by limits.sflow_sources: a hostile agent inventing
 * source_ids cannot grow it without limit.  When it is full the table
 * starts again empty (counted as sflow_sources_evicted): every source
 * resynchronises on its next sample, which costs one unseen gap each,
 * where evicting one at a time would cost a probe chain rebuild. */
static struct ng_seq *src_seq(ng_decoder *d, struct ng_sflow *sf, const struct src_key *k)
{
	if (sf->n * 2 >= sf->cap) {
		if (sf->n >= d->cfg.limits.sflow_sources) {
			memset(sf->tab, 0, sf->cap * sizeof *sf->tab);
			d->lim.sflow_sources_evicted += sf->n;
			sf->n = 0;
		} else if (seq_grow(sf)) {
			goto find_only;
		}
	}
	size_t j = key_hash(k) & (sf->cap - 1);
	while (sf->tab[j].used) {
		if (!memcmp(&sf->tab[j].k, k, sizeof *k))
			return &sf->tab[j].seq;
		j = (j + 1) & (sf->cap - 1);
	}
	sf->tab[j].used = true;
	sf->tab[j].k = *k;
	sf->n++;
	return &sf->tab[j].seq;
find_only:
	if (!sf->cap)
		return NULL;
	j = key_hash(k) & (sf->cap - 1);
	for (size_t i = 0; i < sf->cap && sf->tab[j].used; i++, j = (j + 1) & (sf->cap - 1))
		if (!memcmp(&sf->tab[j].k, k, sizeof *k))
			return &sf->tab[j].seq;
	return NULL;
}

/* After an agent restart (restart.c), its samples count again from 0: the
 * sequences of the sub-agent's sources resynchronise on their next sample
 * (one pass over the table, on a rare event). */
static void forget_sources(struct ng_sflow *sf, const uint8_t exporter[16], uint32_t sub_agent)
{
	for (size_t i = 0; i < sf->cap; i++)
		if (sf->tab[i].used && sf->tab[i].k.sub_agent == sub_agent &&
		    !memcmp(sf->tab[i].k.exporter, exporter, 16))
			sf->tab[i].seq.valid = false;
}

/* ---- datagram context ---- */

struct dgram {
	ng_decoder *d;
	struct ng_sflow *sf;
	struct ng_domain *dom;
	const ng_datagram *dg;
	ng_flow_batch *out;
	uint8_t agent[16];
	uint32_t sub_agent;
	uint32_t uptime_ms;
	size_t appended;
};

static void track_seq(struct dgram *g, uint32_t kind, uint32_t type, uint32_t index, uint32_t seq)
{
	struct src_key k;
	memset(&k, 0, sizeof k);
	memcpy(k.exporter, g->dg->exporter, 16);
	k.sub_agent = g->sub_agent;
	k.type = type;
	k.index = index;
	k.kind = kind;
	struct ng_seq *s = src_seq(g->d, g->sf, &k);
	if (s)
		ng_seq_check(s, seq, 1, SAMPLE_MAX_GAP, &g->dom->st.lost_samples);
}

/* ---- flow samples ---- */

/* The fields of a flow_sample, expanded_flow_sample or discarded-packet
 * event that the flow records are decoded against. */
struct fsample {
	uint32_t seq, src_type, src_index, rate;
	uint32_t in_fmt, in_val, out_fmt, out_val;
	bool discard_event;
	uint32_t reason;
};

/* What the records of one sample told, before it becomes a flow. */
struct fstate {
	uint32_t frame_length; /* sampled header / sampled Ethernet */
	uint32_t ip_length;    /* from the header, else sampled IPv4/IPv6 */
	bool have_switch;      /* extended switch VLANs take precedence */
	bool have_ip;
};

static void count_pkt_status(struct ng_domain *dom, enum ng_pkt_status s)
{
	switch (s) {
	case NG_PKT_OK: break;
	case NG_PKT_CUT_L2: ng_count_error(dom, NG_DERR_PKT_HEADER_CUT_L2); break;
	case NG_PKT_CUT_IP: ng_count_error(dom, NG_DERR_PKT_HEADER_CUT_IP); break;
	case NG_PKT_CUT_L4: ng_count_error(dom, NG_DERR_PKT_HEADER_CUT_L4); break;
	case NG_PKT_BAD: ng_count_error(dom, NG_DERR_PKT_HEADER_BAD); break;
	}
}

/* The MPLS label stack of a sampled header into the record's mpls_label,
 * mpls_label2 .. mpls_label10 and mpls_depth (the fields IPFIX IE 70-79
 * fill). */
static void put_mpls_stack(ng_flow *f, const ng_pkt_info *pi)
{
	static const size_t below[NG_PKT_MPLS_MAX - 1] = {
	    offsetof(ng_flow, mpls_label2), offsetof(ng_flow, mpls_label3),
	    offsetof(ng_flow, mpls_label4), offsetof(ng_flow, mpls_label5),
	    offsetof(ng_flow, mpls_label6), offsetof(ng_flow, mpls_label7),
	    offsetof(ng_flow, mpls_label8), offsetof(ng_flow, mpls_label9),
	    offsetof(ng_flow, mpls_label10)};
	f->mpls_label = pi->mpls_label;
	for (unsigned i = 1; i < pi->mpls_depth; i++)
		memcpy((char *)f + below[i - 1], &pi->mpls[i], sizeof pi->mpls[i]);
	f->mpls_depth = pi->mpls_depth;
}

/* 0:1 sampled_header: header_protocol, frame_length, stripped,
 * header_length, header<> (padded to 4). */
static void rec_header(struct dgram *g, const uint8_t *p, size_t len, ng_flow *f, struct fstate *fs)
{
	if (len < 16) {
		ng_count_error(g->dom, NG_DERR_SFLOW_RECORD_BAD);
		return;
	}
	uint32_t proto = ng_get_be32(p);
	fs->frame_length = ng_get_be32(p + 4);
	uint32_t hlen = ng_get_be32(p + 12);
	if (hlen > len - 16) {
		ng_count_error(g->dom, NG_DERR_SFLOW_RECORD_BAD);
		hlen = (uint32_t)(len - 16); /* decode what is there */
	}
	if (proto != NG_PKT_ETHERNET && proto != NG_PKT_IPV4 && proto != NG_PKT_IPV6)
		return; /* FDDI, token ring, PPP, …: frame length still counts */
	ng_pkt_info pi;
	enum ng_pkt_status st = ng_pkt_parse(p + 16, hlen, (enum ng_pkt_start)proto, &pi);
	count_pkt_status(g->dom, st);
	if (pi.has_mac) {
		memcpy(f->src_mac, pi.src_mac, 6);
		memcpy(f->dst_mac, pi.dst_mac, 6);
	}
	if (!fs->have_switch && pi.nvlan)
		f->src_vlan = pi.vlan[0];
	if (pi.mpls_depth)
		put_mpls_stack(f, &pi);
	const ng_pkt_ip *ip = &pi.ip;
	if (ip->version) {
		fs->have_ip = true;
		fs->ip_length = ip->ip_length;
		f->ip_version = ip->version;
		f->protocol = ip->protocol;
		f->tos = ip->tos;
		memcpy(f->src_addr, ip->src, 16);
		memcpy(f->dst_addr, ip->dst, 16);
		f->src_port = ip->src_port;
		f->dst_port = ip->dst_port;
		f->tcp_flags = ip->tcp_flags;
		f->icmp_type = ip->icmp_type;
		f->icmp_code = ip->icmp_code;
	}
	if (pi.inner.version) {
		memcpy(f->inner_src_addr, pi.inner.src, 16);
		memcpy(f->inner_dst_addr, pi.inner.dst, 16);
		f->inner_protocol = pi.inner.protocol;
		f->inner_src_port = pi.inner.src_port;
		f->inner_dst_port = pi.inner.dst_port;
	}
}

/* 0:3 sampled_ipv4 (32 bytes) and 0:4 sampled_ipv6 (56 bytes): length,
 * protocol, src, dst, src_port, dst_port, tcp_flags, tos/priority.  Used
 * when no sampled header gave the IP fields. */
static void rec_sampled_ip(struct dgram *g, const uint8_t *p, size_t len, bool v6, ng_flow *f,
                           struct fstate *fs)
{
	size_t alen = v6 ? 16 : 4;
	if (len < 8 + 2 * alen + 16) {
		ng_count_error(g->dom, NG_DERR_SFLOW_RECORD_BAD);
		return;
	}
	if (fs->have_ip)
		return;
	fs->have_ip = true;
	fs->ip_length = ng_get_be32(p);
	f->ip_version = v6 ? 6 : 4;
	f->protocol = (uint8_t)ng_get_be32(p + 4);
	const uint8_t *q = p + 8;
	if (v6) {
		memcpy(f->src_addr, q, 16);
		memcpy(f->dst_addr, q + 16, 16);
	} else {
		ng_addr_from_v4(f->src_addr, q);
		ng_addr_from_v4(f->dst_addr, q + 4);
	}
	q += 2 * alen;
	uint32_t sp = ng_get_be32(q), dp = ng_get_be32(q + 4);
	if (f->protocol == 1 || f->protocol == 58) {
		/* the agent puts ICMP type and code in the port fields */
		f->icmp_type = (uint8_t)sp;
		f->icmp_code = (uint8_t)dp;
	} else {
		f->src_port = (uint16_t)sp;
		f->dst_port = (uint16_t)dp;
	}
	f->tcp_flags = (uint8_t)ng_get_be32(q + 8);
	f->tos = (uint8_t)ng_get_be32(q + 12);
}

/* An sFlow address (type, 4 or 16 bytes) at p[0..len): its size, or 0 when
 * malformed. */
static size_t read_addr(const uint8_t *p, size_t len, uint8_t out[16])
{
	if (len < 4)
		return 0;
	uint32_t t = ng_get_be32(p);
	if (t == 1 && len >= 8) {
		ng_addr_from_v4(out, p + 4);
		return 8;
	}
	if (t == 2 && len >= 20) {
		memcpy(out, p + 4, 16);
		return 20;
	}
	if (t == 0) { /* UNKNOWN: no address bytes */
		memset(out, 0, 16);
		return 4;
	}
	return 0;
}

/* 0:1002 extended_router: next_hop, src_mask_len, dst_mask_len. */
static void rec_router(struct dgram *g, const uint8_t *p, size_t len, ng_flow *f)
{
	size_t n = read_addr(p, len, f->next_hop);
	if (!n || len < n + 8) {
		ng_count_error(g->dom, NG_DERR_SFLOW_RECORD_BAD);
		return;
	}
	f->src_mask = (uint8_t)ng_get_be32(p + n);
	f->dst_mask = (uint8_t)ng_get_be32(p + n + 4);
}

/* 0:1003 extended_gateway: nexthop, as, src_as, src_peer_as, dst_as_path
 * (segments of type, count, ASNs), communities, localpref.  dst_as is the
 * last AS of the path; an empty path means the destination is in the
 * router's own AS. */
static void rec_gateway(struct dgram *g, const uint8_t *p, size_t len, ng_flow *f)
{
	uint8_t nh[16];
	size_t o = read_addr(p, len, nh);
	if (!o || len < o + 16) {
		ng_count_error(g->dom, NG_DERR_SFLOW_RECORD_BAD);
		return;
	}
	static const uint8_t zero[16];
	if (!memcmp(f->next_hop, zero, 16))
		memcpy(f->next_hop, nh, 16);
	uint32_t own_as = ng_get_be32(p + o);
	f->src_as = ng_get_be32(p + o + 4);
	uint32_t nseg = ng_get_be32(p + o + 12);
	o += 16;
	uint32_t last = own_as;
	for (uint32_t i = 0; i < nseg; i++) {
		if (len - o < 8)
			goto bad;
		uint32_t cnt = ng_get_be32(p + o + 4);
		o += 8;
		if (cnt > (len - o) / 4)
			goto bad;
		if (cnt)
			last = ng_get_be32(p + o + 4 * (cnt - 1));
		o += 4 * (size_t)cnt;
	}
	f->dst_as = last;
	return;
bad:
	f->dst_as = last;
	ng_count_error(g->dom, NG_DERR_SFLOW_RECORD_BAD);
}

/* Decodes the flow records of one sample into `f`. */
static void flow_records(struct dgram *g, const uint8_t *p, size_t len, uint32_t nrec, ng_flow *f,
                         struct fstate *fs)
{
	for (uint32_t i = 0; i < nrec; i++) {
		if (len < 8) {
			ng_count_error(g->dom, NG_DERR_SFLOW_RECORD_BAD);
			return;
		}
		uint32_t fmt = ng_get_be32(p), rlen = ng_get_be32(p + 4);
		p += 8;
		len -= 8;
		if (rlen > len) {
			ng_count_error(g->dom, NG_DERR_SFLOW_RECORD_BAD);
			return;
		}
		switch (fmt) {
		case 1: rec_header(g, p, rlen, f, fs); break;
		case 2: /* sampled_ethernet: length, src_mac (padded to 8), dst_mac, type */
			if (rlen < 24) {
				ng_count_error(g->dom, NG_DERR_SFLOW_RECORD_BAD);
				break;
			}
			if (!fs->frame_length)
				fs->frame_length = ng_get_be32(p);
			static const uint8_t zmac[6];
			if (!memcmp(f->src_mac, zmac, 6) && !memcmp(f->dst_mac, zmac, 6)) {
				memcpy(f->src_mac, p + 4, 6);
				memcpy(f->dst_mac, p + 12, 6);
			}
			break;
		case 3: rec_sampled_ip(g, p, rlen, false, f, fs); break;
		case 4: rec_sampled_ip(g, p, rlen, true, f, fs); break;
		case 1001: /* extended_switch: src_vlan, src_priority, dst_vlan, dst_priority */
			if (rlen < 16) {
				ng_count_error(g->dom, NG_DERR_SFLOW_RECORD_BAD);
				break;
			}
			/* agents send 0xFFFFFFFF (or any value past 4095) for "none" */
			if (ng_get_be32(p) <= 4095) {
				fs->have_switch = true;
				f->src_vlan = (uint16_t)ng_get_be32(p);
			}
			if (ng_get_be32(p + 8) <= 4095)
				f->dst_vlan = (uint16_t)ng_get_be32(p + 8);
			break;
		case 1002: rec_router(g, p, rlen, f); break;
		case 1003: rec_gateway(g, p, rlen, f); break;
		default: break; /* other records (and enterprises): skipped by length */
		}
		size_t adv = xdr_advance(rlen, len);
		p += adv;
		len -= adv;
	}
}

/* Interface fields: in_if/out_if, direction (the sampling data source is
 * the input or the output interface), and a discard as output format 1. */
static void interfaces(const struct fsample *s, ng_flow *f)
{
	if (s->in_fmt == IF_FORMAT_SINGLE)
		f->in_if = s->in_val;
	if (s->out_fmt == IF_FORMAT_SINGLE)
		f->out_if = s->out_val;
	if (s->out_fmt == IF_FORMAT_DISCARD) {
		f->sample_kind = NG_SAMPLE_DISCARD;
		f->discard_reason = s->out_val;
	}
	f->direction = NG_DIR_UNKNOWN;
	if (s->src_type == 0 && s->src_index) {
		if (s->in_fmt == IF_FORMAT_SINGLE && s->src_index == s->in_val)
			f->direction = NG_DIR_INGRESS;
		else if (s->out_fmt == IF_FORMAT_SINGLE && s->src_index == s->out_val)
			f->direction = NG_DIR_EGRESS;
	}
}

/* One flow record from a sample whose records start at p[0..len). */
static void flow_sample_out(struct dgram *g, const struct fsample *s, const uint8_t *p, size_t len,
                            uint32_t nrec)
{
	ng_flow *f = ng_flow_batch_push(g->out);
	if (!f)
		return;
	struct fstate fs = {0};
	f->time_received = g->dg->time_received;
	f->flow_start = f->flow_end = g->dg->time_received; /* sFlow carries no flow times */
	memcpy(f->exporter, g->dg->exporter, 16);
	memcpy(f->agent_addr, g->agent, 16);
	f->observation_domain = g->sub_agent;
	f->flow_version = SFLOW_VERSION_BYTE;
	f->sampling_source = NG_SAMPLING_SFLOW;
	interfaces(s, f);
	if (s->discard_event) {
		f->sample_kind = NG_SAMPLE_DISCARD;
		f->discard_reason = s->reason;
	}
	flow_records(g, p, len, nrec, f, &fs);
	/* a discard event reports one packet; a flow sample stands for `rate` */
	uint32_t rate = s->discard_event ? 1 : s->rate ? s->rate : 1;
	f->sampling_rate = rate;
	f->packets_raw = 1;
	f->packets = rate;
	/* IP length (the NetFlow octet layer); a frame that is not IP counts
	 * its frame length */
	f->bytes_raw = fs.ip_length ? fs.ip_length : fs.frame_length;
	f->bytes = f->bytes_raw * rate;
	f->l2_bytes = (uint64_t)fs.frame_length * rate;
	g->dom->st.records++;
	g->dom->st.sampling_rate = rate;
	g->dom->st.sampling_source = NG_SAMPLING_SFLOW;
	if (f->sample_kind == NG_SAMPLE_DISCARD)
		g->dom->st.discards++;
	g->appended++;
}

/* 0:1 flow_sample (compact: 8 words + records) and 0:3 expanded (11 words). */
static void flow_sample(struct dgram *g, const uint8_t *p, size_t len, bool expanded)
{
	struct fsample s = {0};
	size_t hdr = expanded ? 44 : 32;
	if (len < hdr) {
		ng_count_error(g->dom, NG_DERR_SFLOW_SAMPLE_BAD);
		return;
	}
	s.seq = ng_get_be32(p);
	if (expanded) {
		s.src_type = ng_get_be32(p + 4);
		s.src_index = ng_get_be32(p + 8);
		s.rate = ng_get_be32(p + 12);
		s.in_fmt = ng_get_be32(p + 24);
		s.in_val = ng_get_be32(p + 28);
		s.out_fmt = ng_get_be32(p + 32);
		s.out_val = ng_get_be32(p + 36);
	} else {
		uint32_t sid = ng_get_be32(p + 4), in = ng_get_be32(p + 20),
		         out = ng_get_be32(p + 24);
		s.src_type = sid >> 24;
		s.src_index = sid & 0xffffff;
		s.rate = ng_get_be32(p + 8);
		s.in_fmt = in >> 30;
		s.in_val = in & IF_INTERNAL;
		s.out_fmt = out >> 30;
		s.out_val = out & IF_INTERNAL;
	}
	track_seq(g, 0, s.src_type, s.src_index, s.seq);
	flow_sample_out(g, &s, p + hdr, len - hdr, ng_get_be32(p + hdr - 4));
}

/* 0:5 event_discarded_packet: seq, source_id type and index, drops, input,
 * output, reason, records. */
static void discard_sample(struct dgram *g, const uint8_t *p, size_t len)
{
	struct fsample s = {0};
	if (len < 32) {
		ng_count_error(g->dom, NG_DERR_SFLOW_SAMPLE_BAD);
		return;
	}
	s.seq = ng_get_be32(p);
	s.src_type = ng_get_be32(p + 4);
	s.src_index = ng_get_be32(p + 8);
	s.in_val = ng_get_be32(p + 16);
	s.out_val = ng_get_be32(p + 20);
	s.reason = ng_get_be32(p + 24);
	s.discard_event = true;
	track_seq(g, 2, s.src_type, s.src_index, s.seq);
	flow_sample_out(g, &s, p + 32, len - 32, ng_get_be32(p + 28));
}

/* ---- counter samples ---- */

static float rd_float(const uint8_t *p)
{
	uint32_t v = ng_get_be32(p);
	float x;
	memcpy(&x, &v, sizeof x); /* XDR float: IEEE 754 single, big-endian (RFC 4506 §4.6) */
	return x;
}

static bool counter_record(struct dgram *g, uint32_t fmt, const uint8_t *p, size_t len,
                           ng_counter_sample *c)
{
	switch (fmt) {
	case 1: /* generic interface counters: 88 bytes */
		if (len < 88)
			return false;
		c->parts |= NG_CTR_IF;
		c->if_index = ng_get_be32(p);
		c->if_type = ng_get_be32(p + 4);
		c->if_speed = ng_get_be64(p + 8);
		c->if_direction = ng_get_be32(p + 16);
		c->if_status = ng_get_be32(p + 20);
		c->in_octets = ng_get_be64(p + 24);
		c->in_ucast = ng_get_be32(p + 32);
		c->in_mcast = ng_get_be32(p + 36);
		c->in_bcast = ng_get_be32(p + 40);
		c->in_discards = ng_get_be32(p + 44);
		c->in_errors = ng_get_be32(p + 48);
		c->in_unknown = ng_get_be32(p + 52);
		c->out_octets = ng_get_be64(p + 56);
		c->out_ucast = ng_get_be32(p + 64);
		c->out_mcast = ng_get_be32(p + 68);
		c->out_bcast = ng_get_be32(p + 72);
		c->out_discards = ng_get_be32(p + 76);
		c->out_errors = ng_get_be32(p + 80);
		c->promisc = ng_get_be32(p + 84);
		return true;
	case 2: /* ethernet interface counters: 13 words */
		if (len < 52)
			return false;
		c->parts |= NG_CTR_ETH;
		for (int i = 0; i < 13; i++)
			c->eth[i] = ng_get_be32(p + 4 * i);
		return true;
	case 2003: /* host_cpu: 3 floats, then proc_run, proc_total, cpu_num,
	            * cpu_speed, uptime, cpu_user, cpu_nice, cpu_system, cpu_idle … */
		if (len < 48)
			return false;
		c->parts |= NG_CTR_HOST_CPU;
		c->load_one = rd_float(p);
		c->load_five = rd_float(p + 4);
		c->load_fifteen = rd_float(p + 8);
		c->cpu_num = ng_get_be32(p + 20);
		c->cpu_speed_mhz = ng_get_be32(p + 24);
		c->host_uptime_s = ng_get_be32(p + 28);
		c->cpu_user_ms = ng_get_be32(p + 32);
		c->cpu_system_ms = ng_get_be32(p + 40);
		c->cpu_idle_ms = ng_get_be32(p + 44);
		return true;
	case 2004: /* host_memory: mem_total, mem_free, … (u64) */
		if (len < 16)
			return false;
		c->parts |= NG_CTR_HOST_MEM;
		c->mem_total = ng_get_be64(p);
		c->mem_free = ng_get_be64(p + 8);
		return true;
	case 2005: /* host_disk_io: disk_total, disk_free, part_max_used, reads,
	            * bytes_read, read_time, writes, bytes_written, write_time */
		if (len < 52)
			return false;
		c->parts |= NG_CTR_HOST_DISK;
		c->disk_total = ng_get_be64(p);
		c->disk_free = ng_get_be64(p + 8);
		c->disk_bytes_read = ng_get_be64(p + 24);
		c->disk_bytes_written = ng_get_be64(p + 40);
		return true;
	case 2006: /* host_net_io: bytes_in, pkts_in, errs_in, drops_in,
	            * bytes_out, packets_out, … */
		if (len < 40)
			return false;
		c->parts |= NG_CTR_HOST_NET;
		c->net_bytes_in = ng_get_be64(p);
		c->net_pkts_in = ng_get_be32(p + 8);
		c->net_bytes_out = ng_get_be64(p + 20);
		c->net_pkts_out = ng_get_be32(p + 28);
		return true;
	default: (void)g; return true; /* not kept: skipped by length */
	}
}

static ng_counter_sample *pending_push(struct ng_sflow *sf)
{
	ng_counter_batch *b = &sf->pending;
	if (b->n == b->cap) {
		if (b->cap >= NG_COUNTER_PENDING_MAX) {
			sf->dropped++;
			return NULL;
		}
		size_t cap = b->cap ? b->cap * 2 : 64;
		ng_counter_sample *s = realloc(b->s, cap * sizeof *s);
		if (!s) {
			sf->dropped++;
			return NULL;
		}
		b->s = s;
		b->cap = cap;
	}
	ng_counter_sample *c = &b->s[b->n++];
	memset(c, 0, sizeof *c);
	return c;
}

/* 0:2 counters_sample (seq, source_id, records) and 0:4 expanded
 * (seq, source_id type, index, records). */
static void counters_sample(struct dgram *g, const uint8_t *p, size_t len, bool expanded)
{
	size_t hdr = expanded ? 16 : 12;
	if (len < hdr) {
		ng_count_error(g->dom, NG_DERR_SFLOW_SAMPLE_BAD);
		return;
	}
	uint32_t seq = ng_get_be32(p), type, index;
	if (expanded) {
		type = ng_get_be32(p + 4);
		index = ng_get_be32(p + 8);
	} else {
		type = ng_get_be32(p + 4) >> 24;
		index = ng_get_be32(p + 4) & 0xffffff;
	}
	uint32_t nrec = ng_get_be32(p + hdr - 4);
	track_seq(g, 1, type, index, seq);
	g->dom->st.counter_samples++;
	ng_counter_sample *c = pending_push(g->sf);
	ng_counter_sample scratch;
	if (!c)
		c = &scratch; /* still checked and counted, not kept */
	memset(c, 0, sizeof *c);
	c->time_received = g->dg->time_received;
	memcpy(c->exporter, g->dg->exporter, 16);
	memcpy(c->agent, g->agent, 16);
	c->sub_agent = g->sub_agent;
	c->source_type = type;
	c->source_index = index;
	c->seq = seq;
	c->uptime_ms = g->uptime_ms;
	p += hdr;
	len -= hdr;
	for (uint32_t i = 0; i < nrec; i++) {
		if (len < 8) {
			ng_count_error(g->dom, NG_DERR_SFLOW_RECORD_BAD);
			return;
		}
		uint32_t fmt = ng_get_be32(p), rlen = ng_get_be32(p + 4);
		p += 8;
		len -= 8;
		if (rlen > len) {
			ng_count_error(g->dom, NG_DERR_SFLOW_RECORD_BAD);
			return;
		}
		if (!counter_record(g, fmt, p, rlen, c))
			ng_count_error(g->dom, NG_DERR_SFLOW_RECORD_BAD);
		size_t adv = xdr_advance(rlen, len);
		p += adv;
		len -= adv;
	}
}

/* ---- datagram ---- */

size_t ng_decode_sflow(ng_decoder *d, const ng_datagram *dg, ng_flow_batch *out)
{
	const uint8_t *p = dg->data;
	size_t len = dg->len;
	struct dgram g = {.d = d, .dg = dg, .out = out};
	/* header: version, address type, address (4/16), sub_agent_id,
	 * sequence_number, uptime, num_samples */
	uint32_t at = len >= 8 ? ng_get_be32(p + 4) : 0;
	size_t alen = at == 1 ? 4 : at == 2 ? 16 : 0;
	size_t hdr = 8 + alen + 16;
	if (!alen || len < hdr) {
		uint32_t sub = alen && len >= 12 + alen ? ng_get_be32(p + 8 + alen) : 0;
		g.dom = ng_domain_get(d, dg->exporter, sub);
		if (g.dom) {
			ng_domain_seen(g.dom, dg, len, SFLOW_VERSION_BYTE);
			ng_count_error(g.dom, NG_DERR_SFLOW_HEADER_SHORT);
		}
		return 0;
	}
	if (at == 1)
		ng_addr_from_v4(g.agent, p + 8);
	else
		memcpy(g.agent, p + 8, 16);
	p += 8 + alen;
	g.sub_agent = ng_get_be32(p);
	uint32_t seq = ng_get_be32(p + 4);
	g.uptime_ms = ng_get_be32(p + 8);
	uint32_t nsamples = ng_get_be32(p + 12);
	p += 16;
	len -= hdr;
	g.dom = ng_domain_get(d, dg->exporter, g.sub_agent);
	g.sf = state(d);
	if (!g.dom || !g.sf)
		return 0;
	ng_domain_seen(g.dom, dg, dg->len, SFLOW_VERSION_BYTE);
	/* uptime and sequence_number (incremented with each datagram of this
	 * sub-agent) going back: the agent restarted (restart.c) */
	struct ng_rhdr h = {.received_ms = dg->time_received,
	                    .seq = seq,
	                    .uptime_ms = g.uptime_ms,
	                    .port = dg->exporter_port,
	                    .version = SFLOW_VERSION_BYTE,
	                    .has_uptime = true};
	if (ng_unlikely(ng_restart_check(d, g.dom, &h) == NG_RS_RESTART))
		forget_sources(g.sf, dg->exporter, g.sub_agent);
	ng_seq_check(&g.dom->seq, seq, 1, DGRAM_MAX_GAP, &g.dom->st.lost);

	for (uint32_t i = 0; i < nsamples; i++) {
		if (len < 8) {
			ng_count_error(g.dom, NG_DERR_SFLOW_SAMPLES_LEFT);
			break;
		}
		uint32_t fmt = ng_get_be32(p), slen = ng_get_be32(p + 4);
		p += 8;
		len -= 8;
		if (slen > len) {
			ng_count_error(g.dom, NG_DERR_SFLOW_SAMPLE_BAD);
			break;
		}
		switch (fmt) { /* enterprise 0; others are skipped by length */
		case 1: flow_sample(&g, p, slen, false); break;
		case 2: counters_sample(&g, p, slen, false); break;
		case 3: flow_sample(&g, p, slen, true); break;
		case 4: counters_sample(&g, p, slen, true); break;
		case 5: discard_sample(&g, p, slen); break;
		default: break;
		}
		size_t adv = xdr_advance(slen, len);
		p += adv;
		len -= adv;
	}
	return g.appended;
}

/* ---- counter hand-out ---- */

size_t ng_decoder_take_counters(ng_decoder *d, ng_counter_batch *out)
{
	struct ng_sflow *sf = d->sflow;
	if (!sf || !sf->pending.n)
		return 0;
	size_t n = sf->pending.n;
	if (!out->n && out->cap < n) {
		/* hand the buffer over whole: no copy */
		ng_counter_batch t = *out;
		*out = sf->pending;
		sf->pending = t;
		sf->pending.n = 0;
		return n;
	}
	if (out->n + n > out->cap) {
		size_t cap = out->cap ? out->cap : 64;
		while (cap < out->n + n)
			cap *= 2;
		ng_counter_sample *s = realloc(out->s, cap * sizeof *s);
		if (!s)
			return 0;
		out->s = s;
		out->cap = cap;
	}
	memcpy(out->s + out->n, sf->pending.s, n * sizeof *out->s);
	out->n += n;
	sf->pending.n = 0;
	return n;
}

uint64_t ng_decoder_counters_dropped(const ng_decoder *d)
{
	return d->sflow ? d->sflow->dropped : 0;
}

void ng_counter_batch_free(ng_counter_batch *b)
{
	free(b->s);
	b->s = NULL;
	b->n = b->cap = 0;
}
