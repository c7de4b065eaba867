/*
 * ie_registry.c — which Information Elements the decoder reads, and how.
 *
 * Numbers are the IANA "IPFIX Information Elements" registry (RFC 7012 §4,
 * https://www.iana.org/assignments/ipfix); NetFlow v9 field types 1..127
 * share the same numbers (RFC 3954 §8 was the registry's seed).  A field
 * not listed here is skipped by its declared length.
 *
 * Length rules: integers are read at any width 1..8 (RFC 7011 §6.2
 * reduced-size encoding); addresses and MACs must have their exact size
 * (RFC 7011 §6.1.5–6.1.7).  A listed element with an impossible length is
 * reported through *bad_len and skipped, so the rest of the record is still
 * decoded.  Variable-length encodings (RFC 7011 §7) are skipped, but for
 * the structured data of RFC 6313 (IE 291-293, at any length): record.c
 * reads a basicList of MPLS label stack sections and counts the others.
 */
#include "decode/decode_int.h"

enum ng_len_rule { L_UINT, L_V4, L_V6, L_MAC, L_NTP, L_MPLS, L_LIST, L_OCTETS };

struct ie_entry {
	uint16_t ie;
	uint8_t act;
	uint8_t rule;
};

static const struct ie_entry table[] = {
    {1, NG_A_BYTES, L_UINT},              /* octetDeltaCount */
    {2, NG_A_PKTS, L_UINT},               /* packetDeltaCount */
    {4, NG_A_PROTO, L_UINT},              /* protocolIdentifier */
    {5, NG_A_TOS, L_UINT},                /* ipClassOfService */
    {6, NG_A_TCP_FLAGS, L_UINT},          /* tcpControlBits */
    {7, NG_A_SRC_PORT, L_UINT},           /* sourceTransportPort */
    {8, NG_A_SRC4, L_V4},                 /* sourceIPv4Address */
    {9, NG_A_SRC_MASK, L_UINT},           /* sourceIPv4PrefixLength */
    {10, NG_A_IN_IF, L_UINT},             /* ingressInterface */
    {11, NG_A_DST_PORT, L_UINT},          /* destinationTransportPort */
    {12, NG_A_DST4, L_V4},                /* destinationIPv4Address */
    {13, NG_A_DST_MASK, L_UINT},          /* destinationIPv4PrefixLength */
    {14, NG_A_OUT_IF, L_UINT},            /* egressInterface */
    {15, NG_A_NH4, L_V4},                 /* ipNextHopIPv4Address */
    {16, NG_A_SRC_AS, L_UINT},            /* bgpSourceAsNumber */
    {17, NG_A_DST_AS, L_UINT},            /* bgpDestinationAsNumber */
    {18, NG_A_BGPNH4, L_V4},              /* bgpNextHopIPv4Address */
    {21, NG_A_END_UPTIME, L_UINT},        /* flowEndSysUpTime (v9 LAST_SWITCHED) */
    {22, NG_A_START_UPTIME, L_UINT},      /* flowStartSysUpTime (v9 FIRST_SWITCHED) */
    {23, NG_A_OUT_BYTES, L_UINT},         /* postOctetDeltaCount (v9 OUT_BYTES) */
    {24, NG_A_OUT_PKTS, L_UINT},          /* postPacketDeltaCount (v9 OUT_PKTS) */
    {27, NG_A_SRC6, L_V6},                /* sourceIPv6Address */
    {28, NG_A_DST6, L_V6},                /* destinationIPv6Address */
    {29, NG_A_SRC_MASK, L_UINT},          /* sourceIPv6PrefixLength */
    {30, NG_A_DST_MASK, L_UINT},          /* destinationIPv6PrefixLength */
    {32, NG_A_ICMP_TC, L_UINT},           /* icmpTypeCodeIPv4 */
    {34, NG_A_SAMPLING_INTERVAL, L_UINT}, /* samplingInterval */
    {48, NG_A_SAMPLER_ID, L_UINT},        /* samplerId (v9 FLOW_SAMPLER_ID) */
    {50, NG_A_SAMPLING_INTERVAL, L_UINT}, /* samplerRandomInterval */
    {56, NG_A_SRC_MAC, L_MAC},            /* sourceMacAddress */
    {57, NG_A_POST_DST_MAC, L_MAC},       /* postDestinationMacAddress */
    {58, NG_A_SRC_VLAN, L_UINT},          /* vlanId */
    {59, NG_A_DST_VLAN, L_UINT},          /* postVlanId */
    {60, NG_A_IP_VERSION, L_UINT},        /* ipVersion */
    {61, NG_A_DIRECTION, L_UINT},         /* flowDirection */
    {62, NG_A_NH6, L_V6},                 /* ipNextHopIPv6Address */
    {63, NG_A_BGPNH6, L_V6},              /* bgpNextHopIPv6Address */
    {70, NG_A_MPLS_LABEL, L_MPLS},        /* mplsTopLabelStackSection */
    {71, NG_A_MPLS_LABEL2, L_MPLS},       /* mplsLabelStackSection2 */
    {72, NG_A_MPLS_LABEL3, L_MPLS},       /* mplsLabelStackSection3 */
    {73, NG_A_MPLS_LABEL4, L_MPLS},       /* mplsLabelStackSection4 */
    {74, NG_A_MPLS_LABEL5, L_MPLS},       /* mplsLabelStackSection5 */
    {75, NG_A_MPLS_LABEL6, L_MPLS},       /* mplsLabelStackSection6 */
    {76, NG_A_MPLS_LABEL7, L_MPLS},       /* mplsLabelStackSection7 */
    {77, NG_A_MPLS_LABEL8, L_MPLS},       /* mplsLabelStackSection8 */
    {78, NG_A_MPLS_LABEL9, L_MPLS},       /* mplsLabelStackSection9 */
    {79, NG_A_MPLS_LABEL10, L_MPLS},      /* mplsLabelStackSection10 */
    {80, NG_A_DST_MAC, L_MAC},            /* destinationMacAddress */
    {81, NG_A_POST_SRC_MAC, L_MAC},       /* postSourceMacAddress */
    {85, NG_A_BYTES_TOTAL, L_UINT},       /* octetTotalCount */
    {86, NG_A_PKTS_TOTAL, L_UINT},        /* packetTotalCount */
    {95, NG_A_APP_ID, L_OCTETS},          /* applicationId (RFC 6759) */
    {139, NG_A_ICMP_TC, L_UINT},          /* icmpTypeCodeIPv6 */
    {150, NG_A_START_SEC, L_UINT},        /* flowStartSeconds */
    {151, NG_A_END_SEC, L_UINT},          /* flowEndSeconds */
    {152, NG_A_START_MS, L_UINT},         /* flowStartMilliseconds */
    {153, NG_A_END_MS, L_UINT},           /* flowEndMilliseconds */
    {154, NG_A_START_NTP, L_NTP},         /* flowStartMicroseconds */
    {155, NG_A_END_NTP, L_NTP},           /* flowEndMicroseconds */
    {156, NG_A_START_NTP, L_NTP},         /* flowStartNanoseconds */
    {157, NG_A_END_NTP, L_NTP},           /* flowEndNanoseconds */
    {158, NG_A_START_DELTA_US, L_UINT},   /* flowStartDeltaMicroseconds */
    {159, NG_A_END_DELTA_US, L_UINT},     /* flowEndDeltaMicroseconds */
    {160, NG_A_SYSINIT_MS, L_UINT},       /* systemInitTimeMilliseconds */
    {176, NG_A_ICMP_TYPE, L_UINT},        /* icmpTypeIPv4 */
    {177, NG_A_ICMP_CODE, L_UINT},        /* icmpCodeIPv4 */
    {178, NG_A_ICMP_TYPE, L_UINT},        /* icmpTypeIPv6 */
    {179, NG_A_ICMP_CODE, L_UINT},        /* icmpCodeIPv6 */
    {231, NG_A_INIT_BYTES, L_UINT},       /* initiatorOctets (NSEL fwd bytes) */
    {243, NG_A_DOT1Q_VLAN, L_UINT},       /* dot1qVlanId */
    {252, NG_A_IN_PHYS, L_UINT},          /* ingressPhysicalInterface */
    {253, NG_A_OUT_PHYS, L_UINT},         /* egressPhysicalInterface */
    {254, NG_A_POST_DOT1Q_VLAN, L_UINT},  /* postDot1qVlanId */
    {291, NG_A_BASIC_LIST, L_LIST},       /* basicList (RFC 6313) */
    {292, NG_A_SUB_LIST, L_LIST},         /* subTemplateList */
    {293, NG_A_SUB_LIST, L_LIST},         /* subTemplateMultiList */
    {298, NG_A_INIT_PKTS, L_UINT},        /* initiatorPackets */
    {302, NG_A_SAMPLER_ID, L_UINT},       /* selectorId */
    {323, NG_A_OBS_MS, L_UINT},           /* observationTimeMilliseconds */
    {305, NG_A_PKT_INTERVAL, L_UINT},     /* samplingPacketInterval */
    {306, NG_A_PKT_SPACE, L_UINT},        /* samplingPacketSpace */
    {309, NG_A_SAMPLING_SIZE, L_UINT},    /* samplingSize */
    {310, NG_A_SAMPLING_POP, L_UINT},     /* samplingPopulation */
};

#define IE_MAX 324
static struct {
	uint8_t act, rule;
} by_ie[IE_MAX];
static bool by_ie_ready;

/* Builds the direct-indexed view of `table` once; idempotent, so a race
 * between two threads writes the same bytes. */
static void build_index(void)
{
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
		by_ie[table[i].ie].act = table[i].act;
		by_ie[table[i].ie].rule = table[i].rule;
	}
	by_ie_ready = true;
}

/* Action for IANA element `ie` sent in `len` bytes (NG_VARLEN: variable).
 * Sets *bad_len when the element is known but `len` impossible for it. */
enum ng_action ng_ie_action(uint16_t ie, uint16_t len, bool *bad_len)
{
	*bad_len = false;
	if (!by_ie_ready)
		build_index();
	if (ie >= IE_MAX || by_ie[ie].act == NG_A_SKIP)
		return NG_A_SKIP;
	if (len == 0)
		return NG_A_SKIP;
	/* RFC 6313 §4.5 lists are usually variable-length, applicationId may be */
	if (by_ie[ie].rule == L_LIST || by_ie[ie].rule == L_OCTETS)
		return (enum ng_action)by_ie[ie].act;
	if (len == NG_VARLEN)
		return NG_A_SKIP;
	bool ok;
	switch (by_ie[ie].rule) {
	case L_V4: ok = len == 4; break;
	case L_V6: ok = len == 16; break;
	case L_MAC: ok = len == 6; break;
	case L_NTP: ok = len == 8; break;
	case L_MPLS: ok = len == 3; break;
	case L_OCTETS: ok = true; break; /* any fixed length (apps.c) */
	default: ok = len <= 8; break;
	}
	if (!ok) {
		*bad_len = true;
		return NG_A_SKIP;
	}
	return (enum ng_action)by_ie[ie].act;
}
