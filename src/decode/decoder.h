/*
 * decoder.h — from export datagrams to flow records.
 *
 * One ng_decoder holds all protocol state of a collector: templates keyed
 * by (exporter address, version, observation domain / source ID, template
 * ID, transport session: ng_datagram.session, 0 for UDP), options data (sampling rates by sampler
 * ID, system init time), data sets held while their template is missing, sequence-number tracking
 * and per exporter/domain counters.  It is not thread-safe: one decoder per receive thread.
 *
 * The first bytes of a datagram tell the protocol: a 16-bit version 1, 5,
 * 7, 9 or 10 is NetFlow/IPFIX; a 32-bit version 5 is sFlow.
 */
#ifndef NG_DECODER_H
#define NG_DECODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/datagram.h"
#include "core/flow.h"
#include "core/limits.h"

/*
 * Named decode errors, counted per exporter and observation domain.
 * Each is a malformed condition of a named rule; see the decoder that
 * raises it for the RFC section.
 */
#define NG_DECODE_ERRORS(X)                                                                        \
	X(UNKNOWN_VERSION, "unknown_version", "datagram version is not 1, 5, 7, 9, 10 or sFlow 5") \
	X(SHORT_HEADER, "short_header", "datagram shorter than its protocol header")               \
	X(BAD_LENGTH, "bad_length",                                                                \
	  "header length or record count disagrees with the datagram size")                        \
	X(SET_TOO_SHORT, "set_too_short", "set/flowset length below 4 bytes")                      \
	X(SET_OVERRUN, "set_overrun", "set/flowset longer than the rest of the message")           \
	X(BAD_SET_ID, "bad_set_id",                                                                \
	  "set ID below 256 that names no template set (IPFIX: 0, 1, 4..255; v9: 2..255); "        \
	  "skipped")                                                                               \
	X(TEMPLATE_BAD, "template_bad",                                                            \
	  "template record malformed (no fields, impossible lengths, truncated)")                  \
	X(TEMPLATE_ID_BAD, "template_id_bad", "template ID below 256")                             \
	X(RECORD_TRUNCATED, "record_truncated",                                                    \
	  "data record cut short, variable-length field past the set")                             \
	X(FIELD_LENGTH, "field_length", "field length impossible for its information element")     \
	X(HELD_DROPPED, "held_dropped",                                                            \
	  "data set held for a missing template dropped (overflow or age)")                        \
	X(SFLOW_BAD, "sflow_bad", "sFlow datagram or sample malformed")                            \
	X(SFLOW_HEADER_SHORT, "sflow_header_short",                                                \
	  "sFlow datagram shorter than its header, or bad agent address type")                     \
	X(SFLOW_SAMPLE_BAD, "sflow_sample_bad",                                                    \
	  "sFlow sample longer than the datagram or shorter than its fields")                      \
	X(SFLOW_RECORD_BAD, "sflow_record_bad",                                                    \
	  "sFlow flow/counter record longer than its sample or shorter than its fields")           \
	X(SFLOW_SAMPLES_LEFT, "sflow_samples_left",                                                \
	  "sFlow datagram ended before num_samples samples")                                       \
	X(PKT_HEADER_CUT_IP, "pkt_header_cut_ip",                                                  \
	  "sampled packet header cut before the end of the IP header")                             \
	X(PKT_HEADER_CUT_L4, "pkt_header_cut_l4",                                                  \
	  "sampled packet header cut before the transport ports/flags")                            \
	X(PKT_HEADER_BAD, "pkt_header_bad",                                                        \
	  "sampled packet header malformed (IHL < 5, bad extension header)")                       \
	X(TEMPLATE_LIMIT, "template_limit",                                                        \
	  "template refused: larger alone than limits.template_bytes_per_domain, or past a "       \
	  "limit while the state file loads")                                                      \
	X(PKT_HEADER_CUT_L2, "pkt_header_cut_l2",                                                  \
	  "sampled packet header cut inside the Ethernet header, its VLAN tags or MPLS stack")     \
	X(LIST_BAD, "list_bad",                                                                    \
	  "IPFIX structured data (RFC 6313 basicList, subTemplateList, subTemplateMultiList) "     \
	  "shorter than its header or not a whole number of elements: skipped, the record kept")

enum ng_decode_error {
#define X(id, name, doc) NG_DERR_##id,
	NG_DECODE_ERRORS(X)
#undef X
	    NG_DERR_COUNT
};

/* Name ("set_overrun", …) and one-line description of an error. */
const char *ng_decode_error_name(enum ng_decode_error e);
const char *ng_decode_error_doc(enum ng_decode_error e);

/*
 * The counters of one exporter and observation domain, listed once.  Each
 * X(field, "name", KIND, "doc") is a field of ng_exporter_stats, its key in
 * exporters.json and the API's /api/v1/exporters (store/exporters.h), its
 * /metrics name, how it adds up, and its one-line description (the /metrics
 * HELP text: no backslash, no newline).  The KIND says the field's type and
 * how the generic code (ng_exporter_counter_get/set, ng_exporter_stats_add,
 * ng_exporters_merge, the JSON reader and writer, /metrics) treats it:
 *
 *   COUNTER   uint64_t, a count of events.  Sums over the exporters
 *             (ng_decoder_totals) and over the runs of a store (merge).
 *             JSON "name":n; /metrics counter nagare_exporter_name_total.
 *   ERRORS    uint64_t[NG_DERR_COUNT], one count per NG_DECODE_ERRORS
 *             entry, each summed like a COUNTER.  JSON "name":{"<error>":n,
 *             …},"name_total":n; /metrics counter nagare_exporter_name_total
 *             with an error="<error>" label (errors not zero only).
 *   TIME_MIN  uint64_t ms since the epoch, 0 for never; adds up to the
 *             earliest non-zero time.  JSON "name":"RFC 3339","name_ms":ms;
 *             /metrics gauge nagare_exporter_name_timestamp_seconds.
 *   TIME_MAX  the same, adding up to the latest time.
 *   GAUGE     uint32_t, the last value seen: not summed.  JSON "name":n;
 *             /metrics gauge nagare_exporter_name.
 *   SOURCE    uint8_t enum ng_sampling_source, the last one seen, by name.
 *             JSON "name":"options"; /metrics gauge
 *             nagare_exporter_name{source="options"} 1.
 *
 * The GAUGE and SOURCE fields are one reading (a rate and where it came
 * from): a merge takes them all from the older row when every GAUGE of the
 * newer row is 0 (it has seen no rate).  Totals leave them 0.
 *
 * Adding a counter is one line here (in the place its key takes in the
 * JSON) and the code that counts it; every writer, reader, merge and test
 * walks the list.
 */
#define NG_EXPORTER_COUNTERS(X)                                                                    \
	X(packets, "packets", COUNTER,                                                             \
	  "export datagrams received (NetFlow v9: export packets, several in a datagram when "     \
	  "concatenated)")                                                                         \
	X(bytes, "bytes", COUNTER, "bytes of the export datagrams received")                       \
	X(records, "records", COUNTER, "flow records decoded")                                     \
	X(options_records, "options_records", COUNTER, "options data records decoded")             \
	X(templates, "templates", COUNTER, "template and options template records read")           \
	X(lost, "lost", COUNTER,                                                                   \
	  "sequence gaps: NetFlow v5/v7 flow records, v9 export packets, IPFIX data records, "     \
	  "sFlow datagrams")                                                                       \
	X(template_misses, "template_misses", COUNTER,                                             \
	  "data sets that arrived before their template")                                          \
	X(held, "held", COUNTER, "data sets decoded late, once their template came")               \
	X(templates_evicted, "templates_evicted", COUNTER,                                         \
	  "templates of this domain dropped, least recently used first, for limits.templates*, "   \
	  "limits.template_bytes*")                                                                \
	X(errors, "errors", ERRORS, "decode errors, by name")                                      \
	X(first_seen, "first_seen", TIME_MIN, "first datagram received")                           \
	X(last_seen, "last_seen", TIME_MAX, "last datagram received")                              \
	X(sampling_rate, "sampling_rate", GAUGE,                                                   \
	  "sampling rate last applied to flow records (1: unsampled, 0: none yet)")                \
	X(sampling_source, "sampling_source", SOURCE, "where the sampling rate came from")         \
	X(lost_samples, "lost_samples", COUNTER,                                                   \
	  "sFlow: sequence gaps of flow and counter samples, per data source")                     \
	X(counter_samples, "counter_samples", COUNTER, "sFlow: counter samples decoded")           \
	X(discards, "discards", COUNTER, "sFlow: discarded-packet samples decoded")                \
	X(time_implausible, "time_implausible", COUNTER,                                           \
	  "flow records whose start or end lay outside the collector's time window "               \
	  "(collect.max_past / max_future from the receive time): kept flagged or rejected")       \
	X(sampling_fixed, "sampling_fixed", COUNTER,                                               \
	  "sampling rates sent byte-swapped (IE 34 little-endian, MikroTik) and swapped back: "    \
	  "flow and options records")                                                              \
	X(sampling_rejected, "sampling_rejected", COUNTER,                                         \
	  "sampling rates above 2^24 - 1 that no byte swap explains, not applied: flow and "       \
	  "options records")                                                                       \
	X(time_after_export, "time_after_export", COUNTER,                                         \
	  "flow records whose start or end lay more than a day after the export time: flagged")    \
	X(time_before_boot, "time_before_boot", COUNTER,                                           \
	  "NetFlow v9 flow records whose start or end lay more than a day before the boot its "    \
	  "header implies (export time - sysUptime): flagged")                                     \
	X(bytes_below_headers, "bytes_below_headers", COUNTER,                                     \
	  "flow records with fewer bytes than packets x 20 (IPv4) or x 40 (IPv6): flagged")        \
	X(packets_zero, "packets_zero", COUNTER,                                                   \
	  "flow records with bytes and a packet counter of 0: flagged")                            \
	X(packets_concatenated, "packets_concatenated", COUNTER,                                   \
	  "NetFlow v9 export packets followed by another in the same datagram, each decoded")      \
	X(restarts, "restarts", COUNTER,                                                           \
	  "exporter restarts seen (v9/sFlow uptime or sequence went back, IPFIX sequence "         \
	  "restarted): data of the templates learnt before is held until they are announced "      \
	  "again")                                                                                 \
	X(sampler_other_domain, "sampler_other_domain", COUNTER,                                   \
	  "flow records scaled by the rate of their sampler ID announced under another "           \
	  "observation domain of the exporter (Cisco Catalyst 9300)")                              \
	X(sampler_unmatched, "sampler_unmatched", COUNTER,                                         \
	  "flow records whose sampler ID no options data gave a rate for: not scaled")             \
	X(lists_skipped, "lists_skipped", COUNTER,                                                 \
	  "IPFIX flow records holding structured data (RFC 6313 lists) skipped by its length, "    \
	  "the record kept: any list but a basicList of MPLS label stack sections (IE 70), "       \
	  "which is decoded")                                                                      \
	X(apps_unnamed, "apps_unnamed", COUNTER,                                                   \
	  "flow records with an applicationId (IE 95) no options data of their domain named: "     \
	  "stored without an application name")

/* The C type of a field of each kind (NG_EXPORTER_COUNTERS). */
#define NG_XK_FIELD_COUNTER(f) uint64_t f;
#define NG_XK_FIELD_ERRORS(f) uint64_t f[NG_DERR_COUNT];
#define NG_XK_FIELD_TIME_MIN(f) uint64_t f;
#define NG_XK_FIELD_TIME_MAX(f) uint64_t f;
#define NG_XK_FIELD_GAUGE(f) uint32_t f;
#define NG_XK_FIELD_SOURCE(f) uint8_t f;

/* Counters of one exporter and observation domain (v9 source ID, IPFIX
 * observation domain ID, sFlow sub-agent; 0 for v5): the key, the protocol
 * last seen, and the fields of NG_EXPORTER_COUNTERS in list order.  All are
 * totals since the decoder started (or since the state file they were
 * loaded from). */
typedef struct ng_exporter_stats {
	uint8_t exporter[16]; /* IPv4-mapped */
	uint32_t domain;
	uint8_t version; /* last seen: 1, 5, 7, 9, 10, 0x50 sFlow */
#define X(field, name, kind, doc) NG_XK_FIELD_##kind(field)
	NG_EXPORTER_COUNTERS(X)
#undef X
} ng_exporter_stats;

enum ng_exporter_kind {
	NG_XK_COUNTER,
	NG_XK_ERRORS,
	NG_XK_TIME_MIN,
	NG_XK_TIME_MAX,
	NG_XK_GAUGE,
	NG_XK_SOURCE,
};

/* Index of each counter in ng_exporter_counters[]: NG_XC_packets, … */
enum ng_exporter_counter_id {
#define X(field, name, kind, doc) NG_XC_##field,
	NG_EXPORTER_COUNTERS(X)
#undef X
	    NG_XC_COUNT
};

/* One entry of NG_EXPORTER_COUNTERS, for code that walks the list. */
typedef struct ng_exporter_counter {
	const char *name; /* JSON key, /metrics name part */
	enum ng_exporter_kind kind;
	size_t offset, size; /* of the field in ng_exporter_stats, bytes */
	const char *doc;
} ng_exporter_counter;

/* The list, in its order (decode/stats.c). */
extern const ng_exporter_counter ng_exporter_counters[NG_XC_COUNT];

/* The value of counter `id` of `s`; for ERRORS the sum of every error. */
uint64_t ng_exporter_counter_get(const ng_exporter_stats *s, enum ng_exporter_counter_id id);

/* Sets counter `id` of `s` to `v`, cut to the field's width (as a cast
 * would).  Not for ERRORS (set s->errors[e] itself). */
void ng_exporter_counter_set(ng_exporter_stats *s, enum ng_exporter_counter_id id, uint64_t v);

/* Adds the counters of `s` to `d`: COUNTER and ERRORS summed, TIME_MIN to
 * the earlier non-zero time, TIME_MAX to the later; the key, the version,
 * GAUGE and SOURCE fields of `d` are left as they are. */
void ng_exporter_stats_add(ng_exporter_stats *d, const ng_exporter_stats *s);

/*
 * The counters of the decoder's bounds (core/limits.h), listed once like
 * NG_EXPORTER_COUNTERS: X(field, "name", KIND, "doc"), KIND COUNTER (a
 * count of evictions since the state file began: summed over the runs of
 * a store) or GAUGE (what is held now).  They appear as "limits":{…} in
 * exporters.json and /api/v1/exporters, in `nagare status`, and in
 * /metrics as nagare_limit_<name>_total (COUNTER) or nagare_limit_<name>.
 * Every entry dropped for a limit is counted here; the domain's own
 * counters (held_dropped, templates_evicted) say whose it was.
 */
#define NG_LIMIT_COUNTERS(X)                                                                       \
	X(exporters_evicted, "exporters_evicted", COUNTER,                                         \
	  "exporters dropped (least recently seen, with their domains) for limits.exporters")      \
	X(domains_evicted, "domains_evicted", COUNTER,                                             \
	  "observation domains / sub-agents dropped (least recently seen, with their templates "   \
	  "and held data) for limits.domains, limits.domains_per_exporter or limits.exporters")    \
	X(templates_evicted, "templates_evicted", COUNTER,                                         \
	  "templates dropped (least recently used) for limits.templates*, "                        \
	  "limits.template_bytes*, with their domain, or not loaded from the state file")          \
	X(held_evicted, "held_evicted", COUNTER,                                                   \
	  "held data sets dropped (oldest first) for limits.held_bytes, all exporters")            \
	X(sflow_sources_evicted, "sflow_sources_evicted", COUNTER,                                 \
	  "sFlow data sources whose sequence tracking restarted for limits.sflow_sources")         \
	X(samplers_replaced, "samplers_replaced", COUNTER,                                         \
	  "options data: a sampler's rate that took the last of a domain's 64 sampler slots")      \
	X(enterprise_untracked, "enterprise_untracked", COUNTER,                                   \
	  "template fields of an enterprise element past the 4096 counted ones")                   \
	X(interfaces_dropped, "interfaces_dropped", COUNTER,                                       \
	  "interface names from options data not kept for limits.interfaces (the collector's)")    \
	X(interface_names_refused, "interface_names_refused", COUNTER,                             \
	  "interface renames from options data refused for limits.interface_names")                \
	X(applications_refused, "applications_refused", COUNTER,                                   \
	  "application names from options data not kept: a domain's 4096 application IDs "         \
	  "named, or limits.application_names reached (IDs or names)")                             \
	X(exporters, "exporters", GAUGE, "exporter addresses held now")                            \
	X(domains, "domains", GAUGE, "observation domains / sub-agents held now")                  \
	X(templates, "templates", GAUGE, "templates held now")                                     \
	X(template_bytes, "template_bytes", GAUGE, "memory of the templates held now, bytes")      \
	X(held_bytes, "held_bytes", GAUGE, "bytes of data sets held for their template now")

typedef struct ng_limit_stats {
#define X(field, name, kind, doc) uint64_t field;
	NG_LIMIT_COUNTERS(X)
#undef X
} ng_limit_stats;

/* One entry of NG_LIMIT_COUNTERS, for code that walks the list. */
typedef struct ng_limit_counter {
	const char *name;
	bool gauge;
	size_t offset; /* of the field in ng_limit_stats */
	const char *doc;
} ng_limit_counter;

enum {
#define X(field, name, kind, doc) NG_LC_##field,
	NG_LIMIT_COUNTERS(X)
#undef X
	    NG_LC_COUNT
};

extern const ng_limit_counter ng_limit_counters[NG_LC_COUNT];

/* Value of entry `i` of `s`. */
static inline uint64_t ng_limit_stat(const ng_limit_stats *s, int i)
{
	return *(const uint64_t *)(const void *)((const char *)s + ng_limit_counters[i].offset);
}

/* Adds the COUNTER entries of `s` to `d`; the GAUGE ones of `d` stay. */
void ng_limit_stats_add(ng_limit_stats *d, const ng_limit_stats *s);

/* The key of the row that sums the exporters not listed one by one: the
 * counters of domains the decoder evicted, and of rows past
 * limits.listed_exporters in a report.  Exporter "::", this domain and
 * this version ("others" in ng_protocol_name). */
#define NG_OTHERS_DOMAIN UINT32_MAX
#define NG_OTHERS_VERSION 0xfe

/* True when `s` is that row. */
bool ng_exporter_is_others(const ng_exporter_stats *s);

typedef struct ng_decoder ng_decoder;

typedef struct ng_decoder_config {
	size_t held_max_bytes; /* per exporter, bytes of held data sets (default 1 MiB);
	                        * 0: limits.held_bytes_per_exporter */
	uint64_t held_max_age; /* ms a held data set waits for its template (default 60 s) */
	ng_limits limits;      /* 0 entries: the default (core/limits.h) */
} ng_decoder_config;

/* Creates a decoder; `cfg` may be NULL for defaults.  NULL when out of memory. */
ng_decoder *ng_decoder_new(const ng_decoder_config *cfg);
void ng_decoder_free(ng_decoder *d);

/*
 * Decodes one datagram, appending its flow records to `out`.  Options data
 * updates decoder state instead of producing records.  Malformed input is
 * counted in the exporter's stats, never fatal: the good sets of the same
 * datagram are still decoded.  Data sets whose template arrives in a later
 * datagram are held and appended to `out` by the call that brings it.
 * Returns the number of records appended.
 */
size_t ng_decode(ng_decoder *d, const ng_datagram *dg, ng_flow_batch *out);

/* Drops held data sets older than held_max_age at `now_ms` (counted as
 * HELD_DROPPED).  Call about once a second. */
void ng_decoder_expire(ng_decoder *d, uint64_t now_ms);

/* Calls `fn` once per exporter/domain with its counters, most recently
 * seen first, then once with the others row (NG_OTHERS_DOMAIN: the sum
 * of the domains evicted) when any domain was. */
void ng_decoder_foreach_stats(const ng_decoder *d,
                              void (*fn)(const ng_exporter_stats *s, void *arg), void *arg);

/* The bound counters now (evictions since the decoder started, what it
 * holds). */
void ng_decoder_limit_stats(const ng_decoder *d, ng_limit_stats *out);

/* Adds n to the COUNTER `id` of exporter `addr` (IPv4-mapped) and
 * observation domain `domain` (created when new, as a datagram's would
 * be; nothing is counted when that runs out of memory).  For counts made
 * after decoding by the thread that owns d: collector/timecheck.c. */
void ng_decoder_count(ng_decoder *d, const uint8_t addr[16], uint32_t domain,
                      enum ng_exporter_counter_id id, uint64_t n);

/* The domain of an exporter restart (decode/restart.c). */
typedef struct ng_restart_info {
	uint8_t exporter[16]; /* IPv4-mapped */
	uint32_t domain;
	uint8_t version; /* 9, 10, 0x50 sFlow */
} ng_restart_info;

/* Exporter restarts seen by the decoder since it started, all domains
 * (each is also counted in its domain's `restarts`); `*last` (may be NULL)
 * gets the domain of the latest, zeroed when none.  For the collector's
 * rate-limited log line. */
uint64_t ng_decoder_restarts(const ng_decoder *d, ng_restart_info *last);

/* Decoder-wide totals into *sum: ng_exporter_stats_add over every
 * exporter and domain, from zero (key, version, GAUGE and SOURCE fields
 * stay 0). */
void ng_decoder_totals(const ng_decoder *d, ng_exporter_stats *sum);

/*
 * Template state file: every template and options template, and the
 * options state (sampling rates by sampler, system init times), so a
 * restarted collector decodes data sets at once.  Written to
 * `path`.tmp, fsynced and renamed.  Returns 0, or -1 with errno set.
 * Loading a missing file returns 0 and changes nothing; a corrupt file
 * returns -1 (errno EINVAL) and leaves the decoder unchanged.
 */
int ng_decoder_save(const ng_decoder *d, const char *path);
int ng_decoder_load(ng_decoder *d, const char *path);
/* ng_decoder_load of only the entries (templates, options state, restart
 * marks) of the exporters for which keep(addr, arg) is true (addr: 16
 * bytes, IPv4-mapped); the rest of the file is checked and skipped.  For
 * receive workers that each own some exporters (collector/workers.c).
 * keep NULL: every entry, as ng_decoder_load. */
int ng_decoder_load_some(ng_decoder *d, const char *path,
                         bool (*keep)(const uint8_t addr[16], void *arg), void *arg);

/* ng_decoder_save in two halves, so that the thread that owns the decoder
 * only copies its state and another writes the file (the collector's
 * flush thread, collector/flush.c):
 *   - ng_decoder_save_mem: the state file image into a malloc'ed buffer
 *     (*out, *len bytes; owned by the caller).  Its size is bounded by the
 *     template limits (core/limits.h: template_bytes and the rest).
 *     Returns 0, or -1 with errno ENOMEM.
 *   - ng_decoder_write_state: `len` bytes of such an image to `path`.tmp,
 *     fsynced, renamed to `path`.  Returns 0, or -1 with errno set (the
 *     temporary removed, `path` as it was). */
int ng_decoder_save_mem(const ng_decoder *d, uint8_t **out, size_t *len);
int ng_decoder_write_state(const char *path, const uint8_t *img, size_t len);

/* The first bytes of a state image (`len` bytes, from ng_decoder_save_mem)
 * that change only with templates and options data: all but the restart
 * marks (decode/restart.c), which change with every datagram and come
 * last.  For telling whether the state is worth writing again; `len` for
 * an image without marks. */
size_t ng_decoder_state_stable_len(const uint8_t *img, size_t len);

/*
 * sFlow counter samples (sflow.org "sFlow Version 5" counters_sample and
 * expanded_counters_sample; records: generic interface 0:1, Ethernet 0:2,
 * host 0:2003/2004/2005/2006).  ng_decode keeps the counter samples of the
 * datagrams it decodes in the decoder (up to NG_COUNTER_PENDING_MAX; more
 * are dropped and counted) until ng_decoder_take_counters hands them out.
 * `parts` says which record groups were present; absent ones are zero.
 */
enum ng_counter_part {
	NG_CTR_IF = 1,         /* generic interface counters (record 1) */
	NG_CTR_ETH = 2,        /* Ethernet interface counters (record 2) */
	NG_CTR_HOST_CPU = 4,   /* host_cpu (2003) */
	NG_CTR_HOST_MEM = 8,   /* host_memory (2004) */
	NG_CTR_HOST_DISK = 16, /* host_disk_io (2005) */
	NG_CTR_HOST_NET = 32,  /* host_net_io (2006) */
};

typedef struct ng_counter_sample {
	uint64_t time_received; /* ms since the epoch, collector clock */
	uint8_t exporter[16];   /* datagram source, IPv4-mapped */
	uint8_t agent[16];      /* agent address of the datagram header */
	uint32_t sub_agent;
	uint32_t source_type;  /* sFlowDataSource type: 0 ifIndex, 1 VLAN, 2 entity */
	uint32_t source_index; /* ifIndex (type 0) */
	uint32_t seq;          /* sample sequence number */
	uint32_t uptime_ms;    /* agent's sysUptime of the datagram */
	uint32_t parts;        /* enum ng_counter_part bits */
	/* generic interface counters (RFC 2863 ifTable/ifXTable) */
	uint32_t if_index, if_type;
	uint64_t if_speed;     /* bits per second */
	uint32_t if_direction; /* 0 unknown, 1 full, 2 half, 3 in, 4 out */
	uint32_t if_status;    /* bit 0 admin up, bit 1 oper up */
	uint64_t in_octets, out_octets;
	uint32_t in_ucast, in_mcast, in_bcast, in_discards, in_errors, in_unknown;
	uint32_t out_ucast, out_mcast, out_bcast, out_discards, out_errors, promisc;
	/* Ethernet (RFC 2358 dot3StatsTable): alignment, FCS, single/multiple
	 * collision, SQE, deferred, late, excessive, internal MAC tx errors,
	 * carrier sense, frame too long, internal MAC rx errors, symbol errors */
	uint32_t eth[13];
	/* host counters (sflow.org "sFlow Host Structures") */
	float load_one, load_five, load_fifteen;
	uint32_t cpu_num, cpu_speed_mhz, host_uptime_s;
	uint32_t cpu_user_ms, cpu_system_ms, cpu_idle_ms;
	uint64_t mem_total, mem_free; /* bytes */
	uint64_t disk_total, disk_free, disk_bytes_read, disk_bytes_written;
	uint64_t net_bytes_in, net_bytes_out;
	uint32_t net_pkts_in, net_pkts_out;
} ng_counter_sample;

/* A growable array of counter samples; the batch owns `s`. */
typedef struct ng_counter_batch {
	ng_counter_sample *s;
	size_t n, cap;
} ng_counter_batch;

#define NG_COUNTER_PENDING_MAX 65536

/* Appends the counter samples decoded since the last call to `out` (which
 * grows as needed) and forgets them.  Returns the number appended (0 also
 * when out of memory: the samples stay pending). */
size_t ng_decoder_take_counters(ng_decoder *d, ng_counter_batch *out);

/*
 * Interface names learnt from options data: an options record carrying
 * IE 82 interfaceName and/or IE 83 interfaceDescription with the ifIndex
 * as IE 10 ingressInterface (a field or an IPFIX scope) or a NetFlow v9
 * Interface scope (RFC 3954 §6.1 scope type 2).  Cisco IOS XE exports its
 * interface table so (NetFlow v9 "interface-table" options).
 */
typedef struct ng_if_info {
	uint8_t exporter[16];  /* IPv4-mapped */
	uint32_t domain;       /* observation domain / source ID */
	uint32_t index;        /* ifIndex */
	char name[64];         /* IE 82, NUL padding removed; "" when absent */
	char description[128]; /* IE 83 */
} ng_if_info;

/* Moves up to `max` interface records learnt since the last call into
 * out[] (oldest first); returns how many.  The decoder keeps at most 4096
 * pending; more are dropped and counted (ng_decoder_interfaces_dropped). */
size_t ng_decoder_take_interfaces(ng_decoder *d, ng_if_info *out, size_t max);
uint64_t ng_decoder_interfaces_dropped(const ng_decoder *d);

/* Counter samples dropped because nobody took them in time. */
uint64_t ng_decoder_counters_dropped(const ng_decoder *d);

void ng_counter_batch_free(ng_counter_batch *b);

/*
 * Ends transport session `session` (ng_datagram.session, not 0) of
 * exporter `addr` (IPv4-mapped): a TCP connection or SCTP association
 * closed.  RFC 7011 §8: "Templates ... are only valid within the
 * Transport Session"; so its templates, options state (sampling rates,
 * system init time) and held data sets are dropped, and its counters are
 * added to the session-0 row of the same exporter and observation domain,
 * which keeps them (while a session is open, ng_decoder_foreach_stats
 * reports every session of an exporter and domain as one row already).
 * Neither the state file (ng_decoder_save) nor a restart keeps a
 * session's templates.  Unknown sessions are ignored.  The caller
 * (collector/receive.c) calls it after decoding the session's last
 * datagrams; the session id must not be reused before.
 */
void ng_decoder_session_end(ng_decoder *d, const uint8_t addr[16], uint32_t session);

/* Enterprise-specific elements seen, per (PEN, IE): calls `fn` for each. */
void ng_decoder_foreach_enterprise(const ng_decoder *d,
                                   void (*fn)(uint32_t pen, uint16_t ie, uint64_t count, void *arg),
                                   void *arg);

#endif
