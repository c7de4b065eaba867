/*
 * flow.h — the nagare flow record.
 *
 * One fixed-width struct is the unit of every stage of the data path
 * (decode → enrich → store → query).  Every field maps to an IPFIX
 * Information Element (IANA "IPFIX Information Elements" registry); the
 * mapping, names and types live in one table, src/core/field.c, and are
 * documented in docs/fields.md.
 *
 * Conventions:
 *   - addresses are 16 bytes; IPv4 is stored IPv4-mapped (::ffff:a.b.c.d,
 *     RFC 4291 §2.5.5.2) so one column holds both families;
 *   - times are absolute milliseconds since the Unix epoch (UTC);
 *   - `bytes`/`packets` are scaled by the sampling rate, `bytes_raw` /
 *     `packets_raw` are as the exporter sent them;
 *   - a field the exporter did not send is zero.
 */
#ifndef NG_FLOW_H
#define NG_FLOW_H

#include <stddef.h>
#include <stdint.h>

/* Where a record's sampling rate came from. */
enum ng_sampling_source {
	NG_SAMPLING_NONE = 0, /* no rate known: counters taken as unsampled */
	NG_SAMPLING_RECORD,   /* a field of the record itself (IE 34/50/305+306/309+310) */
	NG_SAMPLING_OPTIONS,  /* options data matched by sampler ID (IE 48/49/302) */
	NG_SAMPLING_HEADER,   /* NetFlow v5 header sampling_interval */
	NG_SAMPLING_SFLOW,    /* sFlow sample's sampling_rate */
	NG_SAMPLING_CONFIG,   /* configured per exporter */
	NG_SAMPLING_SOURCE_COUNT
};

/* What a record stands for (sFlow distinguishes sampled packets that were
 * forwarded from packets the device dropped). */
enum ng_sample_kind {
	NG_SAMPLE_FLOW = 0,    /* a flow record, or an sFlow sample of a forwarded packet */
	NG_SAMPLE_DISCARD = 1, /* sFlow: a discarded packet (event, or output format 1) */
};

/* Flow direction (IE 61 flowDirection). */
enum ng_direction {
	NG_DIR_UNKNOWN = 0xff,
	NG_DIR_INGRESS = 0,
	NG_DIR_EGRESS = 1,
};

typedef struct ng_flow {
	/* times, ms since the epoch */
	uint64_t time_received; /* collector clock when the datagram arrived */
	uint64_t flow_start;    /* IE 152 flowStartMilliseconds */
	uint64_t flow_end;      /* IE 153 flowEndMilliseconds */

	/* counters */
	uint64_t bytes;       /* IE 1 octetDeltaCount × sampling rate */
	uint64_t packets;     /* IE 2 packetDeltaCount × sampling rate */
	uint64_t bytes_raw;   /* IE 1 as sent */
	uint64_t packets_raw; /* IE 2 as sent */

	/* addresses (16 bytes, IPv4-mapped) */
	uint8_t exporter[16]; /* IE 130/131 exporterIPv4/IPv6Address (datagram source) */
	uint8_t src_addr[16]; /* IE 8 / 27 */
	uint8_t dst_addr[16]; /* IE 12 / 28 */
	uint8_t next_hop[16]; /* IE 15 / 62 (or BGP next hop 18/63 when absent) */

	uint32_t observation_domain; /* IE 149 (v9: source ID) */
	uint32_t sampling_rate;      /* packets per sample; 1 when unsampled */
	uint32_t in_if;              /* IE 10 ingressInterface */
	uint32_t out_if;             /* IE 14 egressInterface */
	uint32_t src_as;             /* IE 16 bgpSourceAsNumber */
	uint32_t dst_as;             /* IE 17 bgpDestinationAsNumber */
	uint32_t mpls_label;         /* IE 70 mplsTopLabelStackSection: 20-bit label */
	uint16_t sampler_id;         /* IE 48/302 */
	uint16_t src_port;           /* IE 7 */
	uint16_t dst_port;           /* IE 11 */
	uint16_t src_vlan;           /* IE 58 vlanId */
	uint16_t dst_vlan;           /* IE 59 postVlanId */
	uint8_t src_mac[6];          /* IE 56 sourceMacAddress */
	uint8_t dst_mac[6];          /* IE 80 destinationMacAddress (or 57 postDestination…) */
	uint8_t protocol;            /* IE 4 protocolIdentifier */
	uint8_t tcp_flags;           /* IE 6 tcpControlBits (low 8 bits) */
	uint8_t tos;                 /* IE 5 ipClassOfService */
	uint8_t icmp_type;           /* IE 176/178 */
	uint8_t icmp_code;           /* IE 177/179 */
	uint8_t ip_version;          /* IE 60: 4 or 6, 0 unknown */
	uint8_t direction;           /* IE 61 flowDirection, enum ng_direction */
	uint8_t src_mask;            /* IE 9 / 29 */
	uint8_t dst_mask;            /* IE 13 / 30 */
	uint8_t sampling_source;     /* enum ng_sampling_source */
	uint8_t flow_version;        /* export protocol: 1, 5, 7, 9, 10 (IPFIX), 0x50 sFlow */
	uint8_t inner_protocol;      /* sFlow header: protocol inside VXLAN/GRE/IP-in-IP, 0 none */
	uint8_t sample_kind;         /* enum ng_sample_kind */
	uint8_t mpls_depth;          /* MPLS label stack entries sent (1..10; IE 70-79), 0 none */

	/* sFlow (docs/sflow.md); zero for NetFlow/IPFIX */
	uint64_t l2_bytes;          /* IE 352 layer2OctetDeltaCount: frame length × rate */
	uint8_t agent_addr[16];     /* sFlow agent address from the datagram header */
	uint8_t inner_src_addr[16]; /* inner (tunnelled) source address, IPv4-mapped */
	uint8_t inner_dst_addr[16]; /* inner (tunnelled) destination address */
	uint32_t
	    discard_reason; /* sFlow drop reason (ICMP unreachable code, 256+) when discarded */
	uint16_t inner_src_port; /* inner transport source port */
	uint16_t inner_dst_port; /* inner transport destination port */

	/* enrichment (src/enrich, docs/enrichment.md): IDs of interned strings
	 * (core/strtab.h), 0 = not known */
	uint32_t exporter_name; /* configured name of the exporter */
	uint32_t in_if_name;    /* IE 82 interfaceName of in_if (options data or config) */
	uint32_t out_if_name;   /* IE 82 interfaceName of out_if */
	uint32_t src_country;   /* ISO 3166-1 alpha-2, from the GeoIP database */
	uint32_t dst_country;
	uint32_t src_continent; /* two-letter continent code (AF AN AS EU NA OC SA) */
	uint32_t dst_continent;
	uint32_t src_city; /* city name in the configured language */
	uint32_t dst_city;
	uint32_t src_as_name; /* AS organisation name */
	uint32_t dst_as_name;
	uint32_t service; /* service name of the server port (/etc/services) */
	uint32_t src_net; /* configured network name, else built-in class */
	uint32_t dst_net;
	uint32_t src_net_role; /* configured role of the network */
	uint32_t dst_net_role;
	uint32_t src_net_site; /* configured site of the network */
	uint32_t dst_net_site;
	uint8_t as_source; /* NG_AS_SRC_DB / NG_AS_DST_DB bits: AS from the database */
	uint8_t pad2_[1];

	/* what the collector found wrong with the record (NG_ANOMALY_* bits,
	 * docs/fields.md "anomalies"); 0 for a record found sound */
	uint16_t anomalies;
	/* NG_ANOMALY_SAMPLING: the sampling rate the record (IE 34/50 or
	 * 305+306, 309+310) carried, as sent (cut to 2^32 - 1), which was
	 * corrected or refused (decode/plausible.h); else 0 */
	uint32_t sampling_raw;
	/* NG_ANOMALY_TIME: flow_start and flow_end as decoded, which were
	 * implausible (flow_start/flow_end then hold time_received); else 0 */
	uint64_t orig_start;
	uint64_t orig_end;
	/* IE 71-79 mplsLabelStackSection2..10: the labels under the top one
	 * (mpls_label), top to bottom, 20 bits each (RFC 3032 §2.1 without
	 * TC and S); 0 past the stack (mpls_depth says where it ends, so an
	 * explicit null label 0 inside it is told from no label) */
	uint32_t mpls_label2, mpls_label3, mpls_label4, mpls_label5, mpls_label6;
	uint32_t mpls_label7, mpls_label8, mpls_label9, mpls_label10;
	/* IE 96 applicationName that options data gave the record's IE 95
	 * applicationId (Cisco NBAR / AVC; decode/apps.c): interned string, 0
	 * none */
	uint32_t application;
	/* the interfaces' descriptions (IE 83 interfaceDescription: SNMP
	 * ifAlias, RFC 2863, else options data) as interned strings, 0 none,
	 * and their speeds in bits/s (ifHighSpeed x 10^6 when ifSpeed is
	 * saturated at 2^32 - 1, else ifSpeed; 0 unknown): enrich/snmp.c */
	uint32_t in_if_desc, out_if_desc;
	uint64_t in_if_speed, out_if_speed;
	/* classification rules (enrich/classify.c, docs/configuration.md
	 * "Classification"), evaluated once per exporter and per interface
	 * when its names change: interned strings, 0 = not classified */
	uint32_t exporter_group, exporter_role, exporter_site, exporter_region, exporter_tenant;
	uint32_t in_if_boundary, out_if_boundary;         /* external, internal */
	uint32_t in_if_connectivity, out_if_connectivity; /* transit, peering, ix, pni, ... */
	uint32_t in_if_provider, out_if_provider;         /* who is on the other side */
#ifdef NG_TEST_EXTRA_FIELDS
	/* a test-only build's fields past the table's own (core/field.h) */
	uint32_t test_extra[NG_TEST_EXTRA_FIELDS];
#endif
} ng_flow;

/* ng_flow.as_source bits: set when src_as / dst_as came from the ASN
 * database; clear when the exporter's record carried it (or none known). */
#define NG_AS_SRC_DB 0x01
#define NG_AS_DST_DB 0x02

/* ng_flow.anomalies bits.  Bit 0 is the collector's time plausibility
 * window (collector/timecheck.c, docs/security.md "Time-hostile input");
 * bits 1-3 are the decoders' checks of values that cannot be right
 * (decode/plausible.h, docs/fields.md "anomalies"); the rest are free. */
#define NG_ANOMALY_TIME 0x0001        /* flow times implausible: moved to time_received */
#define NG_ANOMALY_SAMPLING 0x0002    /* sampling rate byte-swapped (corrected) or refused */
#define NG_ANOMALY_COUNTERS 0x0004    /* bytes < packets x smallest IP header, or 0 packets */
#define NG_ANOMALY_EXPORT_TIME 0x0008 /* a time > 1 day after export, or before boot */

/*
 * A growable array of flow records, the unit handed from one stage to the
 * next.  The batch owns `flows`; ng_flow_batch_free releases it.
 */
typedef struct ng_flow_batch {
	ng_flow *flows;
	size_t n;
	size_t cap;
} ng_flow_batch;

/* Returns a zeroed record slot appended to `b`, or NULL when out of memory.
 * The pointer is valid until the next append. */
ng_flow *ng_flow_batch_push(ng_flow_batch *b);
void ng_flow_batch_clear(ng_flow_batch *b);
void ng_flow_batch_free(ng_flow_batch *b);

#endif
