/*
 * pkt_header.c — sampled packet header parser (see pkt_header.h).
 *
 * Each layer checks its length before every read.  A layer cut short
 * fills what it could and reports where the cut was; the layers above it
 * stay zero.  Tunnels are followed once (depth 1): the inner packet of a
 * tunnel inside a tunnel is not looked at.
 */
#include "decode/pkt_header.h"

#include <string.h>

#include "core/addr.h"
#include "core/bytes.h"

#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6 0x86dd
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88a8
#define ETH_P_QINQ_OLD 0x9100 /* pre-802.1ad QinQ, still sent by some switches */
#define ETH_P_MPLS_UC 0x8847
#define ETH_P_MPLS_MC 0x8848
#define ETH_P_TEB 0x6558 /* transparent Ethernet bridging (GRE, RFC 1701) */

#define VXLAN_PORT 4789 /* RFC 7348 §5 */
#define MAX_TAGS 8
#define MAX_LABELS 16
#define MAX_EXT_HDRS 16

/* Layer 2 as far as the network header: Ethernet, tags, MPLS.  Sets
 * `*off` to the start of the network header and `*etype` to its type
 * (ETH_P_IPV4/IPV6, or another EtherType that is not followed).  `l2` may
 * be NULL (inner frames: MACs and tags are not kept). */
static enum ng_pkt_status parse_l2(const uint8_t *p, size_t len, ng_pkt_info *l2, size_t *off,
                                   uint16_t *etype)
{
	if (len < 14)
		return NG_PKT_CUT_L2;
	if (l2) {
		memcpy(l2->dst_mac, p, 6);
		memcpy(l2->src_mac, p + 6, 6);
		l2->has_mac = 1;
	}
	size_t o = 12;
	uint16_t t = ng_get_be16(p + o);
	o += 2;
	/* IEEE 802.1Q tags: TPID, then TCI (PCP 3 bits, DEI 1, VID 12) */
	for (int i = 0;
	     (t == ETH_P_8021Q || t == ETH_P_8021AD || t == ETH_P_QINQ_OLD) && i < MAX_TAGS; i++) {
		if (len < o + 4)
			return NG_PKT_CUT_L2;
		if (l2) {
			if (l2->nvlan < 2)
				l2->vlan[l2->nvlan] = ng_get_be16(p + o) & 0x0fff;
			l2->nvlan++;
		}
		t = ng_get_be16(p + o + 2);
		o += 4;
	}
	if (l2)
		l2->ethertype = t;
	if (t == ETH_P_MPLS_UC || t == ETH_P_MPLS_MC) {
		/* RFC 3032 §2.1: label 20 bits, TC 3, S (bottom of stack) 1, TTL 8 */
		for (int i = 0;; i++) {
			if (len < o + 4)
				return NG_PKT_CUT_L2;
			uint32_t e = (uint32_t)p[o] << 24 | (uint32_t)p[o + 1] << 16 |
			             (uint32_t)p[o + 2] << 8 | p[o + 3];
			if (l2 && i == 0)
				l2->mpls_label = e >> 12;
			if (l2 && i < NG_PKT_MPLS_MAX)
				l2->mpls[l2->mpls_depth++] = e >> 12;
			o += 4;
			if (e & 0x100)
				break;
			if (i + 1 >= MAX_LABELS)
				return NG_PKT_OK; /* absurd stack: stop, not malformed enough to
				                     count */
		}
		/* no type field after the stack: guess from the IP version nibble */
		if (len < o + 1)
			return NG_PKT_CUT_IP;
		unsigned v = p[o] >> 4;
		t = v == 4 ? ETH_P_IPV4 : v == 6 ? ETH_P_IPV6 : 0;
	}
	*off = o;
	*etype = t;
	return NG_PKT_OK;
}

/* Transport header at p[0..len) for protocol ip->protocol. */
static enum ng_pkt_status parse_l4(const uint8_t *p, size_t len, ng_pkt_ip *ip)
{
	switch (ip->protocol) {
	case 6: /* TCP, RFC 9293 §3.1: ports in bytes 0-3, flags in byte 13 */
		if (len < 4)
			break;
		ip->src_port = ng_get_be16(p);
		ip->dst_port = ng_get_be16(p + 2);
		ip->has_l4 = 1;
		/* Huawei cuts the header after the ports when the frame has
		 * VLAN tags (fastnetmon issue 990): the ports are kept, the
		 * missing flags make it a cut header */
		if (len < 14)
			break;
		ip->tcp_flags = p[13];
		return NG_PKT_OK;
	case 17:  /* UDP, RFC 768 */
	case 132: /* SCTP, RFC 9260: ports first, same place */
	case 136: /* UDP-Lite, RFC 3828 */
		if (len < 4)
			break;
		ip->src_port = ng_get_be16(p);
		ip->dst_port = ng_get_be16(p + 2);
		ip->has_l4 = 1;
		return NG_PKT_OK;
	case 1:  /* ICMP, RFC 792 */
	case 58: /* ICMPv6, RFC 4443 §2.1 */
		if (len < 2)
			break;
		ip->icmp_type = p[0];
		ip->icmp_code = p[1];
		ip->has_l4 = 1;
		return NG_PKT_OK;
	default: return NG_PKT_OK; /* no transport header we read */
	}
	return NG_PKT_CUT_L4;
}

/* IPv4 header, RFC 791 §3.1.  `*l4` gets the transport header offset. */
static enum ng_pkt_status parse_ipv4(const uint8_t *p, size_t len, ng_pkt_ip *ip, size_t *l4)
{
	if (len < 1)
		return NG_PKT_CUT_IP;
	if (p[0] >> 4 != 4)
		return NG_PKT_BAD;
	ip->version = 4;
	if (len < 4)
		return NG_PKT_CUT_IP;
	ip->tos = p[1];
	ip->ip_length = ng_get_be16(p + 2);
	if (len < 20)
		return NG_PKT_CUT_IP;
	size_t ihl = (size_t)(p[0] & 0x0f) * 4;
	if (ihl < 20)
		return NG_PKT_BAD;
	ip->protocol = p[9];
	ip->fragment = (ng_get_be16(p + 6) & 0x1fff) != 0;
	ng_addr_from_v4(ip->src, p + 12);
	ng_addr_from_v4(ip->dst, p + 16);
	if (len < ihl)
		return NG_PKT_CUT_IP; /* options cut: addresses are still good */
	*l4 = ihl;
	return NG_PKT_OK;
}

/* IPv6 header and extension headers, RFC 8200 §3, §4. */
static enum ng_pkt_status parse_ipv6(const uint8_t *p, size_t len, ng_pkt_ip *ip, size_t *l4)
{
	if (len < 1)
		return NG_PKT_CUT_IP;
	if (p[0] >> 4 != 6)
		return NG_PKT_BAD;
	ip->version = 6;
	if (len < 6)
		return NG_PKT_CUT_IP;
	ip->tos = (uint8_t)((ng_get_be16(p) >> 4) & 0xff);
	ip->ip_length = (uint32_t)ng_get_be16(p + 4) + 40;
	if (len < 40)
		return NG_PKT_CUT_IP;
	memcpy(ip->src, p + 8, 16);
	memcpy(ip->dst, p + 24, 16);
	uint8_t nh = p[6];
	size_t o = 40;
	for (int i = 0; i < MAX_EXT_HDRS; i++) {
		size_t hl;
		switch (nh) {
		case 0:   /* Hop-by-Hop Options */
		case 43:  /* Routing */
		case 60:  /* Destination Options */
		case 135: /* Mobility, RFC 6275 */
		case 139: /* HIP, RFC 7401 */
		case 140: /* Shim6, RFC 5533 */
			if (len < o + 2) {
				ip->protocol = nh;
				return NG_PKT_CUT_IP;
			}
			hl = ((size_t)p[o + 1] + 1) * 8;
			break;
		case 44: /* Fragment, RFC 8200 §4.5: 8 bytes, offset in 13 bits */
			if (len < o + 8) {
				ip->protocol = nh;
				return NG_PKT_CUT_IP;
			}
			hl = 8;
			if (ng_get_be16(p + o + 2) >> 3)
				ip->fragment = 1;
			break;
		case 51: /* AH, RFC 4302 §2.2: length in 4-byte units minus 2 */
			if (len < o + 2) {
				ip->protocol = nh;
				return NG_PKT_CUT_IP;
			}
			hl = ((size_t)p[o + 1] + 2) * 4;
			break;
		default:
			ip->protocol = nh;
			*l4 = o;
			return NG_PKT_OK;
		}
		nh = p[o];
		o += hl;
		if (ip->fragment) {
			ip->protocol = nh;
			*l4 = o;
			return NG_PKT_OK;
		}
	}
	ip->protocol = nh; /* too many extension headers: stop reading */
	return NG_PKT_BAD;
}

static enum ng_pkt_status parse_ip(const uint8_t *p, size_t len, uint16_t etype, ng_pkt_ip *ip,
                                   size_t *l4)
{
	if (etype == ETH_P_IPV4)
		return parse_ipv4(p, len, ip, l4);
	if (etype == ETH_P_IPV6)
		return parse_ipv6(p, len, ip, l4);
	return NG_PKT_OK; /* ARP, LLDP, …: not IP, nothing more to read */
}

/* IP then transport at p[0..len).  `*l4` is set to the transport header
 * offset when the IP header was read whole (else left at SIZE_MAX). */
static enum ng_pkt_status parse_l3l4(const uint8_t *p, size_t len, uint16_t etype, ng_pkt_ip *ip,
                                     size_t *l4)
{
	*l4 = SIZE_MAX;
	enum ng_pkt_status s = parse_ip(p, len, etype, ip, l4);
	if (s != NG_PKT_OK || *l4 == SIZE_MAX || ip->fragment)
		return s;
	if (*l4 > len)
		return NG_PKT_CUT_IP; /* extension headers longer than the sample */
	return parse_l4(p + *l4, len - *l4, ip);
}

/* The inner packet of a tunnel, when the outer one is one.  Returns the
 * status of the inner parse (NG_PKT_OK when there is no tunnel). */
static enum ng_pkt_status parse_tunnel(const uint8_t *p, size_t len, size_t l4, ng_pkt_info *o)
{
	const ng_pkt_ip *ip = &o->ip;
	const uint8_t *q = p + l4;
	size_t n = len - l4, off, ignored;
	uint16_t etype;
	enum ng_pkt_status s;

	if (ip->protocol == 17 && ip->has_l4 && ip->dst_port == VXLAN_PORT) {
		/* RFC 7348 §5: UDP header (8), VXLAN header (8), inner Ethernet */
		if (n < 16)
			return NG_PKT_OK; /* header cut after UDP: no inner packet seen */
		o->tunnel = 1;
		q += 16;
		n -= 16;
		s = parse_l2(q, n, NULL, &off, &etype);
		if (s != NG_PKT_OK)
			return s;
		return parse_l3l4(q + off, n - off, etype, &o->inner, &ignored);
	}
	if (ip->protocol == 47) {
		/* GRE, RFC 2784 §2.1 with RFC 2890 key and sequence: flags C, K, S
		 * add 4 bytes each; version must be 0 (1 is PPTP, not followed) */
		if (n < 4)
			return NG_PKT_CUT_L4;
		uint16_t fl = ng_get_be16(q);
		if ((fl & 7) != 0)
			return NG_PKT_OK;
		size_t h =
		    4 + ((fl & 0x8000) ? 4 : 0) + ((fl & 0x2000) ? 4 : 0) + ((fl & 0x1000) ? 4 : 0);
		etype = ng_get_be16(q + 2);
		if (n < h)
			return NG_PKT_CUT_L4;
		o->tunnel = 2;
		q += h;
		n -= h;
		if (etype == ETH_P_TEB) {
			s = parse_l2(q, n, NULL, &off, &etype);
			if (s != NG_PKT_OK)
				return s;
			q += off;
			n -= off;
		}
		return parse_l3l4(q, n, etype, &o->inner, &ignored);
	}
	if (ip->protocol == 4 || ip->protocol == 41) {
		/* IP in IP, RFC 2003 / RFC 4213 */
		o->tunnel = 3;
		return parse_l3l4(q, n, ip->protocol == 4 ? ETH_P_IPV4 : ETH_P_IPV6, &o->inner,
		                  &ignored);
	}
	return NG_PKT_OK;
}

enum ng_pkt_status ng_pkt_parse(const uint8_t *p, size_t len, enum ng_pkt_start start,
                                ng_pkt_info *out)
{
	memset(out, 0, sizeof *out);
	size_t off = 0, l4;
	uint16_t etype;
	enum ng_pkt_status s;

	switch (start) {
	case NG_PKT_ETHERNET:
		s = parse_l2(p, len, out, &off, &etype);
		if (s != NG_PKT_OK)
			return s;
		break;
	case NG_PKT_IPV4: etype = ETH_P_IPV4; break;
	case NG_PKT_IPV6: etype = ETH_P_IPV6; break;
	default: return NG_PKT_OK;
	}
	s = parse_l3l4(p + off, len - off, etype, &out->ip, &l4);
	if (s != NG_PKT_OK || l4 == SIZE_MAX || out->ip.fragment)
		return s;
	return parse_tunnel(p + off, len - off, l4, out);
}
