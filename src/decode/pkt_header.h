/*
 * pkt_header.h — the parser of sampled packet headers (sFlow v5
 * sampled_header record, sflow.org "sFlow Version 5" §"Packet Header").
 *
 * An agent copies the first bytes of a sampled frame (typically 128) into
 * the datagram.  ng_pkt_parse walks them as far as they go:
 *
 *   Ethernet (IEEE 802.3) → 802.1Q / 802.1ad tags (QinQ, any depth ≤ 8)
 *     → MPLS label stack (RFC 3032) → IPv4 (RFC 791) | IPv6 (RFC 8200,
 *     extension headers) → TCP (RFC 9293) | UDP (RFC 768) | ICMP (RFC 792)
 *     | ICMPv6 (RFC 4443)
 *
 * and, when the packet is a tunnel, once more inside it: VXLAN (RFC 7348,
 * UDP port 4789), GRE (RFC 2784/2890, Ethernet or IP payloads) and
 * IP-in-IP (protocol 4 and 41).  Nothing is allocated; the parser never
 * reads past `len`.
 */
#ifndef NG_PKT_HEADER_H
#define NG_PKT_HEADER_H

#include <stddef.h>
#include <stdint.h>

/* Where the header starts (sFlow header_protocol values). */
enum ng_pkt_start {
	NG_PKT_ETHERNET = 1, /* ETHERNET-ISO88023 */
	NG_PKT_IPV4 = 11,
	NG_PKT_IPV6 = 12,
};

/* How far the parse got. */
enum ng_pkt_status {
	NG_PKT_OK = 0, /* every header present was read (or not IP: nothing to read) */
	NG_PKT_CUT_L2, /* cut inside the Ethernet header, tags or MPLS stack */
	NG_PKT_CUT_IP, /* cut inside the IP header or its extension headers */
	NG_PKT_CUT_L4, /* cut before the transport ports / ICMP type, or (TCP) after the
	                  ports, before the flags: the ports are read */
	NG_PKT_BAD,    /* malformed: IPv4 IHL < 5, version mismatch */
};

/* One IP layer: addresses IPv4-mapped (RFC 4291 §2.5.5.2). */
typedef struct ng_pkt_ip {
	uint8_t src[16], dst[16];
	uint32_t ip_length; /* IPv4 total length; IPv6 payload length + 40; 0 unknown */
	uint16_t src_port, dst_port;
	uint8_t version;  /* 4 or 6; 0: no IP header found */
	uint8_t protocol; /* transport protocol after extension headers */
	uint8_t tos;      /* IPv4 ToS / IPv6 traffic class */
	uint8_t tcp_flags;
	uint8_t icmp_type, icmp_code;
	uint8_t has_l4;   /* ports/ICMP type were read (TCP flags too unless NG_PKT_CUT_L4) */
	uint8_t fragment; /* a non-first fragment: no transport header */
} ng_pkt_ip;

/* MPLS label stack entries kept, top first (as IPFIX IE 70-79 can carry). */
#define NG_PKT_MPLS_MAX 10

typedef struct ng_pkt_info {
	uint8_t src_mac[6], dst_mac[6];
	uint16_t vlan[2];    /* outer, inner (QinQ) VLAN IDs; 0 absent */
	uint32_t mpls_label; /* top label, 20 bits; 0 absent */
	/* the stack's labels, top first (mpls[0] == mpls_label), 20 bits
	 * each; mpls_depth of them read, at most NG_PKT_MPLS_MAX (the stack
	 * may go on below, or be cut: then the entries before the cut) */
	uint32_t mpls[NG_PKT_MPLS_MAX];
	uint8_t mpls_depth;
	uint16_t ethertype; /* after tags */
	uint8_t has_mac;
	uint8_t nvlan;   /* tags seen (may exceed 2) */
	uint8_t tunnel;  /* 0 none, 1 VXLAN, 2 GRE, 3 IP-in-IP */
	ng_pkt_ip ip;    /* outer IP */
	ng_pkt_ip inner; /* IP inside the tunnel (version 0: none) */
} ng_pkt_info;

/*
 * Parses `len` bytes of a sampled header starting at `start` into `*out`
 * (zeroed first).  Returns how far it got: a header cut short by the agent
 * still fills every field before the cut.  Never reads past `len`.
 */
enum ng_pkt_status ng_pkt_parse(const uint8_t *p, size_t len, enum ng_pkt_start start,
                                ng_pkt_info *out);

#endif
