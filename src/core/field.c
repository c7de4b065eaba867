/* field.c — the table of flow record fields (see field.h, docs/fields.md). */
#include "core/field.h"

#include <string.h>
#include <strings.h>

#include "core/bytes.h"

#define F(ID, NAME, SHORT, IE, TYPE, MEMBER, DOC)                                                  \
	[ID] = {                                                                                   \
	    ID, NAME, SHORT, IE, TYPE, offsetof(ng_flow, MEMBER), sizeof(((ng_flow *)0)->MEMBER),  \
	    DOC}

#ifdef NG_TEST_EXTRA_FIELDS
/* The test-only fields (field.h): test_extra_K is field NG_F_TEST_EXTRA +
 * K, a u32 in ng_flow.test_extra[K].  The rows come ten at a time (K =
 * tens digit T, units digit U; T empty below ten), so the count is a
 * multiple of ten, at most 190, and the table with them must fit the 256
 * fields a set holds (tests/wide/ uses 150, which leaves the real table
 * room to grow to 106 fields).  (Not F() rows: scripts/gen-fields-md
 * documents those.) */
_Static_assert(NG_TEST_EXTRA_FIELDS % 10 == 0 && NG_TEST_EXTRA_FIELDS <= 190 &&
                   NG_F_TEST_EXTRA + NG_TEST_EXTRA_FIELDS <= 256,
               "test fields come ten at a time, at most 190, and fit a set of 256");
#define TEST_ROW(T, U)                                                                             \
	[NG_F_TEST_EXTRA + T##U] = {NG_F_TEST_EXTRA + T##U,                                        \
	                            "test_extra_" #T #U,                                           \
	                            NULL,                                                          \
	                            0,                                                             \
	                            NG_FT_U32,                                                     \
	                            offsetof(ng_flow, test_extra[T##U]),                           \
	                            4,                                                             \
	                            "test-only field"}
#define TEST_TEN(T)                                                                                \
	TEST_ROW(T, 0), TEST_ROW(T, 1), TEST_ROW(T, 2), TEST_ROW(T, 3), TEST_ROW(T, 4),            \
	    TEST_ROW(T, 5), TEST_ROW(T, 6), TEST_ROW(T, 7), TEST_ROW(T, 8), TEST_ROW(T, 9)
#endif

const ng_field ng_fields[NG_FIELD_COUNT] = {
    F(NG_F_TIME_RECEIVED, "time_received", "received", 0, NG_FT_TIME, time_received,
      "collector time when the export datagram arrived"),
    F(NG_F_FLOW_START, "flow_start", "start", 152, NG_FT_TIME, flow_start,
      "first packet of the flow (flowStartMilliseconds)"),
    F(NG_F_FLOW_END, "flow_end", "end", 153, NG_FT_TIME, flow_end,
      "last packet of the flow (flowEndMilliseconds)"),
    F(NG_F_BYTES, "bytes", NULL, 1, NG_FT_U64, bytes,
      "IP bytes, scaled by the sampling rate (octetDeltaCount x rate)"),
    F(NG_F_PACKETS, "packets", NULL, 2, NG_FT_U64, packets,
      "packets, scaled by the sampling rate (packetDeltaCount x rate)"),
    F(NG_F_BYTES_RAW, "bytes_raw", NULL, 1, NG_FT_U64, bytes_raw,
      "IP bytes as the exporter sent them (octetDeltaCount)"),
    F(NG_F_PACKETS_RAW, "packets_raw", NULL, 2, NG_FT_U64, packets_raw,
      "packets as the exporter sent them (packetDeltaCount)"),
    F(NG_F_EXPORTER, "exporter", "exporter", 130, NG_FT_ADDR, exporter,
      "address the export datagram came from (exporterIPv4/IPv6Address)"),
    F(NG_F_SRC_ADDR, "src_addr", "srcip", 8, NG_FT_ADDR, src_addr,
      "source address (sourceIPv4Address 8 / sourceIPv6Address 27)"),
    F(NG_F_DST_ADDR, "dst_addr", "dstip", 12, NG_FT_ADDR, dst_addr,
      "destination address (destinationIPv4Address 12 / destinationIPv6Address 28)"),
    F(NG_F_NEXT_HOP, "next_hop", "nexthop", 15, NG_FT_ADDR, next_hop,
      "next hop (ipNextHopIPv4Address 15 / ipNextHopIPv6Address 62)"),
    F(NG_F_OBSERVATION_DOMAIN, "observation_domain", "domain", 149, NG_FT_U32, observation_domain,
      "observation domain ID (NetFlow v9 source ID)"),
    F(NG_F_SAMPLING_RATE, "sampling_rate", "sampling", 34, NG_FT_U32, sampling_rate,
      "packets per sample (1: unsampled)"),
    F(NG_F_IN_IF, "in_if", "inif", 10, NG_FT_U32, in_if,
      "input interface index (ingressInterface)"),
    F(NG_F_OUT_IF, "out_if", "outif", 14, NG_FT_U32, out_if,
      "output interface index (egressInterface)"),
    F(NG_F_SRC_AS, "src_as", "srcas", 16, NG_FT_U32, src_as, "source AS (bgpSourceAsNumber)"),
    F(NG_F_DST_AS, "dst_as", "dstas", 17, NG_FT_U32, dst_as,
      "destination AS (bgpDestinationAsNumber)"),
    F(NG_F_MPLS_LABEL, "mpls_label", "mpls", 70, NG_FT_U32, mpls_label,
      "top MPLS label, 20 bits (mplsTopLabelStackSection)"),
    F(NG_F_SAMPLER_ID, "sampler_id", "sampler", 302, NG_FT_U16, sampler_id,
      "sampler ID (samplerId 48 / selectorId 302)"),
    F(NG_F_SRC_PORT, "src_port", "srcport", 7, NG_FT_U16, src_port,
      "source transport port (sourceTransportPort)"),
    F(NG_F_DST_PORT, "dst_port", "dstport", 11, NG_FT_U16, dst_port,
      "destination transport port (destinationTransportPort)"),
    F(NG_F_SRC_VLAN, "src_vlan", "srcvlan", 58, NG_FT_U16, src_vlan, "VLAN on entry (vlanId)"),
    F(NG_F_DST_VLAN, "dst_vlan", "dstvlan", 59, NG_FT_U16, dst_vlan, "VLAN on exit (postVlanId)"),
    F(NG_F_SRC_MAC, "src_mac", "srcmac", 56, NG_FT_MAC, src_mac,
      "source MAC address (sourceMacAddress)"),
    F(NG_F_DST_MAC, "dst_mac", "dstmac", 80, NG_FT_MAC, dst_mac,
      "destination MAC address (destinationMacAddress)"),
    F(NG_F_PROTOCOL, "protocol", "proto", 4, NG_FT_U8, protocol,
      "IP protocol number (protocolIdentifier)"),
    F(NG_F_TCP_FLAGS, "tcp_flags", "flags", 6, NG_FT_U8, tcp_flags,
      "OR of TCP flags (tcpControlBits)"),
    F(NG_F_TOS, "tos", "tos", 5, NG_FT_U8, tos, "IP type of service (ipClassOfService)"),
    F(NG_F_ICMP_TYPE, "icmp_type", "icmptype", 176, NG_FT_U8, icmp_type,
      "ICMP type (icmpTypeIPv4 176 / icmpTypeIPv6 178)"),
    F(NG_F_ICMP_CODE, "icmp_code", "icmpcode", 177, NG_FT_U8, icmp_code,
      "ICMP code (icmpCodeIPv4 177 / icmpCodeIPv6 179)"),
    F(NG_F_IP_VERSION, "ip_version", "ipversion", 60, NG_FT_U8, ip_version,
      "IP version, 4 or 6 (ipVersion)"),
    F(NG_F_DIRECTION, "direction", "dir", 61, NG_FT_U8, direction,
      "0 ingress, 1 egress, 255 unknown (flowDirection)"),
    F(NG_F_SRC_MASK, "src_mask", "srcmask", 9, NG_FT_U8, src_mask,
      "source prefix length (sourceIPv4PrefixLength 9 / sourceIPv6PrefixLength 29)"),
    F(NG_F_DST_MASK, "dst_mask", "dstmask", 13, NG_FT_U8, dst_mask,
      "destination prefix length (13 / 30)"),
    F(NG_F_SAMPLING_SOURCE, "sampling_source", NULL, 0, NG_FT_U8, sampling_source,
      "where the sampling rate came from: none, record, options, header, sflow, config"),
    F(NG_F_FLOW_VERSION, "flow_version", "version", 0, NG_FT_U8, flow_version,
      "export protocol: 1, 5, 7, 9, 10 (IPFIX), 80 (sFlow)"),
    F(NG_F_L2_BYTES, "l2_bytes", "l2bytes", 352, NG_FT_U64, l2_bytes,
      "sFlow: frame length x sampling rate (layer2OctetDeltaCount)"),
    F(NG_F_AGENT_ADDR, "agent_addr", "agent", 0, NG_FT_ADDR, agent_addr,
      "sFlow: agent address of the datagram header (may differ from exporter)"),
    F(NG_F_INNER_SRC_ADDR, "inner_src_addr", "innersrcip", 0, NG_FT_ADDR, inner_src_addr,
      "sFlow: source address inside a VXLAN, GRE or IP-in-IP tunnel"),
    F(NG_F_INNER_DST_ADDR, "inner_dst_addr", "innerdstip", 0, NG_FT_ADDR, inner_dst_addr,
      "sFlow: destination address inside a VXLAN, GRE or IP-in-IP tunnel"),
    F(NG_F_INNER_PROTOCOL, "inner_protocol", "innerproto", 0, NG_FT_U8, inner_protocol,
      "sFlow: IP protocol inside the tunnel"),
    F(NG_F_INNER_SRC_PORT, "inner_src_port", "innersrcport", 0, NG_FT_U16, inner_src_port,
      "sFlow: transport source port inside the tunnel"),
    F(NG_F_INNER_DST_PORT, "inner_dst_port", "innerdstport", 0, NG_FT_U16, inner_dst_port,
      "sFlow: transport destination port inside the tunnel"),
    F(NG_F_DISCARD_REASON, "discard_reason", "discard", 0, NG_FT_U32, discard_reason,
      "sFlow: drop reason of a discarded packet (0-255 ICMP unreachable code, 256+ sFlow)"),
    F(NG_F_SAMPLE_KIND, "sample_kind", "kind", 0, NG_FT_U8, sample_kind,
      "0 flow or forwarded sample, 1 sFlow discarded packet"),
    F(NG_F_EXPORTER_NAME, "exporter_name", "exportername", 0, NG_FT_STR, exporter_name,
      "enrichment: exporter name from the configuration"),
    F(NG_F_IN_IF_NAME, "in_if_name", "inifname", 82, NG_FT_STR, in_if_name,
      "enrichment: name of the input interface (interfaceName, options data or config)"),
    F(NG_F_OUT_IF_NAME, "out_if_name", "outifname", 82, NG_FT_STR, out_if_name,
      "enrichment: name of the output interface"),
    F(NG_F_SRC_COUNTRY, "src_country", "srccountry", 0, NG_FT_STR, src_country,
      "enrichment: source country, ISO 3166-1 alpha-2 (GeoIP database)"),
    F(NG_F_DST_COUNTRY, "dst_country", "dstcountry", 0, NG_FT_STR, dst_country,
      "enrichment: destination country, ISO 3166-1 alpha-2"),
    F(NG_F_SRC_CONTINENT, "src_continent", "srccontinent", 0, NG_FT_STR, src_continent,
      "enrichment: source continent code (AF AN AS EU NA OC SA)"),
    F(NG_F_DST_CONTINENT, "dst_continent", "dstcontinent", 0, NG_FT_STR, dst_continent,
      "enrichment: destination continent code"),
    F(NG_F_SRC_CITY, "src_city", "srccity", 0, NG_FT_STR, src_city,
      "enrichment: source city (City database), configured language"),
    F(NG_F_DST_CITY, "dst_city", "dstcity", 0, NG_FT_STR, dst_city, "enrichment: destination city"),
    F(NG_F_SRC_AS_NAME, "src_as_name", "srcasname", 0, NG_FT_STR, src_as_name,
      "enrichment: source AS organisation (ASN database)"),
    F(NG_F_DST_AS_NAME, "dst_as_name", "dstasname", 0, NG_FT_STR, dst_as_name,
      "enrichment: destination AS organisation"),
    F(NG_F_AS_SOURCE, "as_source", "assource", 0, NG_FT_U8, as_source,
      "enrichment: 1 src_as from the ASN database, 2 dst_as, 3 both; else from the record"),
    F(NG_F_SERVICE, "service", "service", 0, NG_FT_STR, service,
      "enrichment: service name of the server port (services database)"),
    F(NG_F_SRC_NET, "src_net", "srcnetname", 0, NG_FT_STR, src_net,
      "enrichment: configured source network name, else built-in class (private, ...)"),
    F(NG_F_DST_NET, "dst_net", "dstnetname", 0, NG_FT_STR, dst_net,
      "enrichment: configured destination network name, else built-in class"),
    F(NG_F_SRC_NET_ROLE, "src_net_role", "srcnetrole", 0, NG_FT_STR, src_net_role,
      "enrichment: role of the source network (configuration)"),
    F(NG_F_DST_NET_ROLE, "dst_net_role", "dstnetrole", 0, NG_FT_STR, dst_net_role,
      "enrichment: role of the destination network"),
    F(NG_F_SRC_NET_SITE, "src_net_site", "srcnetsite", 0, NG_FT_STR, src_net_site,
      "enrichment: site of the source network (configuration)"),
    F(NG_F_DST_NET_SITE, "dst_net_site", "dstnetsite", 0, NG_FT_STR, dst_net_site,
      "enrichment: site of the destination network"),
    F(NG_F_ANOMALIES, "anomalies", "anomalies", 0, NG_FT_U16, anomalies,
      "what the collector found wrong: bit 0 (1) time_implausible, 1 (2) sampling, 2 (4) "
      "counters, 3 (8) export_time; 0 sound"),
    F(NG_F_ORIG_START, "orig_start", "origstart", 0, NG_FT_TIME, orig_start,
      "time_implausible flows only: flow_start as decoded (flow_start is then time_received)"),
    F(NG_F_ORIG_END, "orig_end", "origend", 0, NG_FT_TIME, orig_end,
      "time_implausible flows only: flow_end as decoded (flow_end is then time_received)"),
    F(NG_F_SAMPLING_RAW, "sampling_raw", "samplingraw", 34, NG_FT_U32, sampling_raw,
      "sampling-anomaly flows only: the rate as sent (samplingInterval), corrected or refused"),
    F(NG_F_MPLS_LABEL2, "mpls_label2", "mpls2", 71, NG_FT_U32, mpls_label2,
      "MPLS label 2 of the stack from the top, 20 bits (mplsLabelStackSection2)"),
    F(NG_F_MPLS_LABEL3, "mpls_label3", "mpls3", 72, NG_FT_U32, mpls_label3,
      "MPLS label 3 of the stack from the top, 20 bits (mplsLabelStackSection3)"),
    F(NG_F_MPLS_LABEL4, "mpls_label4", "mpls4", 73, NG_FT_U32, mpls_label4,
      "MPLS label 4 of the stack from the top, 20 bits (mplsLabelStackSection4)"),
    F(NG_F_MPLS_LABEL5, "mpls_label5", "mpls5", 74, NG_FT_U32, mpls_label5,
      "MPLS label 5 of the stack from the top, 20 bits (mplsLabelStackSection5)"),
    F(NG_F_MPLS_LABEL6, "mpls_label6", "mpls6", 75, NG_FT_U32, mpls_label6,
      "MPLS label 6 of the stack from the top, 20 bits (mplsLabelStackSection6)"),
    F(NG_F_MPLS_LABEL7, "mpls_label7", "mpls7", 76, NG_FT_U32, mpls_label7,
      "MPLS label 7 of the stack from the top, 20 bits (mplsLabelStackSection7)"),
    F(NG_F_MPLS_LABEL8, "mpls_label8", "mpls8", 77, NG_FT_U32, mpls_label8,
      "MPLS label 8 of the stack from the top, 20 bits (mplsLabelStackSection8)"),
    F(NG_F_MPLS_LABEL9, "mpls_label9", "mpls9", 78, NG_FT_U32, mpls_label9,
      "MPLS label 9 of the stack from the top, 20 bits (mplsLabelStackSection9)"),
    F(NG_F_MPLS_LABEL10, "mpls_label10", "mpls10", 79, NG_FT_U32, mpls_label10,
      "MPLS label 10 of the stack from the top, 20 bits (mplsLabelStackSection10)"),
    F(NG_F_MPLS_DEPTH, "mpls_depth", "mplsdepth", 0, NG_FT_U8, mpls_depth,
      "MPLS label stack entries sent, 1-10 (mpls_label, mpls_label2 ..); 0 no stack"),
    F(NG_F_APPLICATION, "application", "app", 96, NG_FT_STR, application,
      "application name (applicationName 96) that options data gave the record's "
      "applicationId (95): Cisco NBAR / AVC, FortiGate"),
    F(NG_F_IN_IF_DESC, "in_if_desc", "inifdesc", 83, NG_FT_STR, in_if_desc,
      "description of in_if (SNMP ifAlias, else interfaceDescription of options data)"),
    F(NG_F_OUT_IF_DESC, "out_if_desc", "outifdesc", 83, NG_FT_STR, out_if_desc,
      "description of out_if (SNMP ifAlias, else interfaceDescription of options data)"),
    F(NG_F_IN_IF_SPEED, "in_if_speed", "inifspeed", 0, NG_FT_U64, in_if_speed,
      "speed of in_if in bits/s (SNMP ifHighSpeed x 10^6, else ifSpeed; 0 unknown)"),
    F(NG_F_OUT_IF_SPEED, "out_if_speed", "outifspeed", 0, NG_FT_U64, out_if_speed,
      "speed of out_if in bits/s (SNMP ifHighSpeed x 10^6, else ifSpeed; 0 unknown)"),
    F(NG_F_EXPORTER_GROUP, "exporter_group", "exportergroup", 0, NG_FT_STR, exporter_group,
      "classification: exporter group (configuration rules)"),
    F(NG_F_EXPORTER_ROLE, "exporter_role", "exporterrole", 0, NG_FT_STR, exporter_role,
      "classification: exporter role (edge, core, ...)"),
    F(NG_F_EXPORTER_SITE, "exporter_site", "exportersite", 0, NG_FT_STR, exporter_site,
      "classification: exporter site"),
    F(NG_F_EXPORTER_REGION, "exporter_region", "exporterregion", 0, NG_FT_STR, exporter_region,
      "classification: exporter region"),
    F(NG_F_EXPORTER_TENANT, "exporter_tenant", "exportertenant", 0, NG_FT_STR, exporter_tenant,
      "classification: exporter tenant"),
    F(NG_F_IN_IF_BOUNDARY, "in_if_boundary", "inifboundary", 0, NG_FT_STR, in_if_boundary,
      "classification: input interface boundary, external or internal"),
    F(NG_F_OUT_IF_BOUNDARY, "out_if_boundary", "outifboundary", 0, NG_FT_STR, out_if_boundary,
      "classification: output interface boundary, external or internal"),
    F(NG_F_IN_IF_CONNECTIVITY, "in_if_connectivity", "inifconnectivity", 0, NG_FT_STR,
      in_if_connectivity,
      "classification: input interface connectivity (transit, peering, ix, pni, customer...)"),
    F(NG_F_OUT_IF_CONNECTIVITY, "out_if_connectivity", "outifconnectivity", 0, NG_FT_STR,
      out_if_connectivity, "classification: output interface connectivity"),
    F(NG_F_IN_IF_PROVIDER, "in_if_provider", "inifprovider", 0, NG_FT_STR, in_if_provider,
      "classification: provider behind the input interface"),
    F(NG_F_OUT_IF_PROVIDER, "out_if_provider", "outifprovider", 0, NG_FT_STR, out_if_provider,
      "classification: provider behind the output interface"),
#ifdef NG_TEST_EXTRA_FIELDS
    TEST_TEN(),
#if NG_TEST_EXTRA_FIELDS > 10
    TEST_TEN(1),
#endif
#if NG_TEST_EXTRA_FIELDS > 20
    TEST_TEN(2),
#endif
#if NG_TEST_EXTRA_FIELDS > 30
    TEST_TEN(3),
#endif
#if NG_TEST_EXTRA_FIELDS > 40
    TEST_TEN(4),
#endif
#if NG_TEST_EXTRA_FIELDS > 50
    TEST_TEN(5),
#endif
#if NG_TEST_EXTRA_FIELDS > 60
    TEST_TEN(6),
#endif
#if NG_TEST_EXTRA_FIELDS > 70
    TEST_TEN(7),
#endif
#if NG_TEST_EXTRA_FIELDS > 80
    TEST_TEN(8),
#endif
#if NG_TEST_EXTRA_FIELDS > 90
    TEST_TEN(9),
#endif
#if NG_TEST_EXTRA_FIELDS > 100
    TEST_TEN(10),
#endif
#if NG_TEST_EXTRA_FIELDS > 110
    TEST_TEN(11),
#endif
#if NG_TEST_EXTRA_FIELDS > 120
    TEST_TEN(12),
#endif
#if NG_TEST_EXTRA_FIELDS > 130
    TEST_TEN(13),
#endif
#if NG_TEST_EXTRA_FIELDS > 140
    TEST_TEN(14),
#endif
#if NG_TEST_EXTRA_FIELDS > 150
    TEST_TEN(15),
#endif
#if NG_TEST_EXTRA_FIELDS > 160
    TEST_TEN(16),
#endif
#if NG_TEST_EXTRA_FIELDS > 170
    TEST_TEN(17),
#endif
#if NG_TEST_EXTRA_FIELDS > 180
    TEST_TEN(18),
#endif
#endif
};

const ng_field *ng_field_by_name(const char *name)
{
	for (size_t i = 0; i < NG_FIELD_COUNT; i++) {
		const ng_field *f = &ng_fields[i];
		if (!strcasecmp(name, f->name) ||
		    (f->short_name && !strcasecmp(name, f->short_name)))
			return f;
	}
	return NULL;
}

static const enum ng_field_id partners[][2] = {
    {NG_F_SRC_ADDR, NG_F_DST_ADDR},
    {NG_F_SRC_PORT, NG_F_DST_PORT},
    {NG_F_SRC_AS, NG_F_DST_AS},
    {NG_F_IN_IF, NG_F_OUT_IF},
    {NG_F_SRC_MASK, NG_F_DST_MASK},
    {NG_F_SRC_VLAN, NG_F_DST_VLAN},
    {NG_F_SRC_MAC, NG_F_DST_MAC},
    {NG_F_INNER_SRC_ADDR, NG_F_INNER_DST_ADDR},
    {NG_F_INNER_SRC_PORT, NG_F_INNER_DST_PORT},
    {NG_F_IN_IF_NAME, NG_F_OUT_IF_NAME},
    {NG_F_SRC_COUNTRY, NG_F_DST_COUNTRY},
    {NG_F_SRC_CONTINENT, NG_F_DST_CONTINENT},
    {NG_F_SRC_CITY, NG_F_DST_CITY},
    {NG_F_SRC_AS_NAME, NG_F_DST_AS_NAME},
    {NG_F_SRC_NET, NG_F_DST_NET},
    {NG_F_SRC_NET_ROLE, NG_F_DST_NET_ROLE},
    {NG_F_SRC_NET_SITE, NG_F_DST_NET_SITE},
    {NG_F_IN_IF_DESC, NG_F_OUT_IF_DESC},
    {NG_F_IN_IF_SPEED, NG_F_OUT_IF_SPEED},
    {NG_F_IN_IF_BOUNDARY, NG_F_OUT_IF_BOUNDARY},
    {NG_F_IN_IF_CONNECTIVITY, NG_F_OUT_IF_CONNECTIVITY},
    {NG_F_IN_IF_PROVIDER, NG_F_OUT_IF_PROVIDER},
};

int ng_field_partner(enum ng_field_id f)
{
	for (size_t i = 0; i < sizeof partners / sizeof partners[0]; i++) {
		if (partners[i][0] == f)
			return (int)partners[i][1];
		if (partners[i][1] == f)
			return (int)partners[i][0];
	}
	return -1;
}

uint64_t ng_field_get_uint(const ng_field *f, const ng_flow *r)
{
	return ng_get_host_uint(ng_field_ptr(f, r), f->size);
}

const char *ng_sampling_source_name(unsigned src)
{
	static const char *names[NG_SAMPLING_SOURCE_COUNT] = {
	    "none", "record", "options", "header", "sflow", "config",
	};
	return src < NG_SAMPLING_SOURCE_COUNT ? names[src] : "unknown";
}
