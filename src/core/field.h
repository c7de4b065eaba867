/*
 * field.h — the table of flow record fields.
 *
 * One row per column of ng_flow: its NDJSON/store name, its nfdump-style
 * short name used by `-s`, `-A` and filters, its IPFIX Information Element
 * (IANA registry) and where it sits in the struct.  The store, the query
 * engine and every output format are driven by this table, so a field added
 * here is stored, printed and queryable everywhere.
 *
 * A set of fields (the columns a scan decodes, a filter reads, a rollup
 * groups on) is an ng_colset (core/colset.h), which holds ids below 256:
 * the table may grow to 256 fields, a limit colset.h asserts.
 */
#ifndef NG_FIELD_H
#define NG_FIELD_H

#include <stddef.h>
#include <stdint.h>

#include "core/flow.h"

enum ng_field_type {
	NG_FT_U8,
	NG_FT_U16,
	NG_FT_U32,
	NG_FT_U64,
	NG_FT_TIME, /* uint64 ms since epoch, printed RFC 3339 */
	NG_FT_ADDR, /* 16 bytes, IPv4-mapped */
	NG_FT_MAC,  /* 6 bytes */
	NG_FT_STR,  /* uint32 ID of an interned string (core/strtab.h); 0 = "" */
};

/* Field identifiers: the order of the table, stable within one build.
 * On disk, columns are named, not numbered, so the order may change. */
enum ng_field_id {
	NG_F_TIME_RECEIVED,
	NG_F_FLOW_START,
	NG_F_FLOW_END,
	NG_F_BYTES,
	NG_F_PACKETS,
	NG_F_BYTES_RAW,
	NG_F_PACKETS_RAW,
	NG_F_EXPORTER,
	NG_F_SRC_ADDR,
	NG_F_DST_ADDR,
	NG_F_NEXT_HOP,
	NG_F_OBSERVATION_DOMAIN,
	NG_F_SAMPLING_RATE,
	NG_F_IN_IF,
	NG_F_OUT_IF,
	NG_F_SRC_AS,
	NG_F_DST_AS,
	NG_F_MPLS_LABEL,
	NG_F_SAMPLER_ID,
	NG_F_SRC_PORT,
	NG_F_DST_PORT,
	NG_F_SRC_VLAN,
	NG_F_DST_VLAN,
	NG_F_SRC_MAC,
	NG_F_DST_MAC,
	NG_F_PROTOCOL,
	NG_F_TCP_FLAGS,
	NG_F_TOS,
	NG_F_ICMP_TYPE,
	NG_F_ICMP_CODE,
	NG_F_IP_VERSION,
	NG_F_DIRECTION,
	NG_F_SRC_MASK,
	NG_F_DST_MASK,
	NG_F_SAMPLING_SOURCE,
	NG_F_FLOW_VERSION,
	NG_F_L2_BYTES,
	NG_F_AGENT_ADDR,
	NG_F_INNER_SRC_ADDR,
	NG_F_INNER_DST_ADDR,
	NG_F_INNER_PROTOCOL,
	NG_F_INNER_SRC_PORT,
	NG_F_INNER_DST_PORT,
	NG_F_DISCARD_REASON,
	NG_F_SAMPLE_KIND,
	NG_F_EXPORTER_NAME,
	NG_F_IN_IF_NAME,
	NG_F_OUT_IF_NAME,
	NG_F_SRC_COUNTRY,
	NG_F_DST_COUNTRY,
	NG_F_SRC_CONTINENT,
	NG_F_DST_CONTINENT,
	NG_F_SRC_CITY,
	NG_F_DST_CITY,
	NG_F_SRC_AS_NAME,
	NG_F_DST_AS_NAME,
	NG_F_AS_SOURCE,
	NG_F_SERVICE,
	NG_F_SRC_NET,
	NG_F_DST_NET,
	NG_F_SRC_NET_ROLE,
	NG_F_DST_NET_ROLE,
	NG_F_SRC_NET_SITE,
	NG_F_DST_NET_SITE,
	NG_F_ANOMALIES,
	NG_F_ORIG_START,
	NG_F_ORIG_END,
	NG_F_SAMPLING_RAW,
	NG_F_MPLS_LABEL2,
	NG_F_MPLS_LABEL3,
	NG_F_MPLS_LABEL4,
	NG_F_MPLS_LABEL5,
	NG_F_MPLS_LABEL6,
	NG_F_MPLS_LABEL7,
	NG_F_MPLS_LABEL8,
	NG_F_MPLS_LABEL9,
	NG_F_MPLS_LABEL10,
	NG_F_MPLS_DEPTH,
	NG_F_APPLICATION,
	/* interface descriptions and speeds (SNMP ifAlias, ifHighSpeed /
	 * ifSpeed; options data; enrich/snmp.c, enrich/interfaces.c) */
	NG_F_IN_IF_DESC,
	NG_F_OUT_IF_DESC,
	NG_F_IN_IF_SPEED,
	NG_F_OUT_IF_SPEED,
	NG_F_EXPORTER_GROUP,
	NG_F_EXPORTER_ROLE,
	NG_F_EXPORTER_SITE,
	NG_F_EXPORTER_REGION,
	NG_F_EXPORTER_TENANT,
	NG_F_IN_IF_BOUNDARY,
	NG_F_OUT_IF_BOUNDARY,
	NG_F_IN_IF_CONNECTIVITY,
	NG_F_OUT_IF_CONNECTIVITY,
	NG_F_IN_IF_PROVIDER,
	NG_F_OUT_IF_PROVIDER,
#ifdef NG_TEST_EXTRA_FIELDS
	/* A test-only build (tests/wide/) appends NG_TEST_EXTRA_FIELDS u32
	 * fields named test_extra_0 .., ng_flow.test_extra[], so that the
	 * table outgrows 64 fields and every set of fields must hold it. */
	NG_F_TEST_EXTRA,
	NG_F_TEST_EXTRA_LAST = NG_F_TEST_EXTRA + NG_TEST_EXTRA_FIELDS - 1,
#endif
	NG_FIELD_COUNT
};

typedef struct ng_field {
	enum ng_field_id id;
	const char *name;       /* NDJSON key and store column name, e.g. "src_addr" */
	const char *short_name; /* nfdump-style, e.g. "srcip"; NULL when none */
	uint16_t ie;            /* IPFIX Information Element ID (0: none) */
	enum ng_field_type type;
	uint16_t offset; /* offsetof(ng_flow, …) */
	uint8_t size;    /* bytes in ng_flow */
	const char *doc; /* one line for docs/fields.md and --help */
} ng_field;

extern const ng_field ng_fields[NG_FIELD_COUNT];

/* Looks a field up by its name or short name (case-insensitive).
 * Returns NULL when unknown. */
const ng_field *ng_field_by_name(const char *name);

/* Reads an integer field of a record (U8..U64, TIME) widened to 64 bits.
 * Must not be called for ADDR or MAC fields. */
uint64_t ng_field_get_uint(const ng_field *f, const ng_flow *r);

/*
 * The field of the other direction: src_X <-> dst_X (addresses, inner
 * addresses, ports, AS numbers and names, masks, VLANs, MACs, countries,
 * continents, cities, networks, their roles and sites) and in_if <->
 * out_if (numbers and names).  Returns -1 for a field without a side
 * (protocol, exporter, service...).  The pairs are those of the field
 * table (src/core/field.c) whose names differ only in src/dst or in/out.
 */
int ng_field_partner(enum ng_field_id f);

/* Pointer to the field's bytes inside a record. */
static inline const uint8_t *ng_field_ptr(const ng_field *f, const ng_flow *r)
{
	return (const uint8_t *)r + f->offset;
}

/* Name of a sampling source ("record", "options", "header", "sflow",
 * "config", "none"). */
const char *ng_sampling_source_name(unsigned src);

#endif
