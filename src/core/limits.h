/*
 * limits.h — the caps on everything a sender controls, listed once.
 *
 * A flow collector listens on UDP ports anyone who reaches it can write
 * to, with any source address.  Each kind of state a datagram can create
 * — an exporter, an observation domain or sFlow sub-agent, a template,
 * a data set held for its template — is therefore capped, and the cap
 * evicts the least recently seen entry (decode/lru.h) and counts it
 * (decode/decoder.h, NG_LIMIT_COUNTERS).  The report side is capped too:
 * the exporters.json rows, the API's rows, the /metrics series and the
 * log lines list the exporters with the most records and sum the rest in
 * one "others" row.
 *
 * NG_LIMITS(X) gives, for each cap, X(field, "key", default, "doc"): the
 * field of ng_limits, its key under `limits:` in the configuration file
 * (core/config.c), its default and its description (docs/security.md
 * "Bounded state" gives what each default costs, measured).  A value of
 * 0 in the file is refused: every limit is a positive number.  Keys
 * with _bytes in their name take a K, M or G suffix (powers of 1024).
 */
#ifndef NG_CORE_LIMITS_H
#define NG_CORE_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#define NG_LIMITS(X)                                                                               \
	X(exporters, "exporters", 10000, "exporter addresses the decoder keeps state for")         \
	X(domains, "domains", 20000,                                                               \
	  "observation domains / NetFlow v9 source IDs / sFlow sub-agents, all exporters")         \
	X(domains_per_exporter, "domains_per_exporter", 256,                                       \
	  "observation domains (sub-agents) of one exporter address")                              \
	X(templates, "templates", 65536, "templates and options templates, all domains")           \
	X(templates_per_domain, "templates_per_domain", 1024,                                      \
	  "templates and options templates of one observation domain")                             \
	X(template_bytes, "template_bytes", 64ull << 20,                                           \
	  "memory of all templates (their fields and compiled form)")                              \
	X(template_bytes_per_domain, "template_bytes_per_domain", 4ull << 20,                      \
	  "memory of the templates of one observation domain")                                     \
	X(held_bytes, "held_bytes", 64ull << 20,                                                   \
	  "data sets held for a template that has not come yet, all exporters")                    \
	X(held_bytes_per_exporter, "held_bytes_per_exporter", 1ull << 20,                          \
	  "data sets held for a missing template, one exporter address")                           \
	X(sflow_sources, "sflow_sources", 65536,                                                   \
	  "sFlow data sources whose sample sequence numbers are tracked")                          \
	X(interfaces, "interfaces", 65536,                                                         \
	  "interface names learnt from options data (exporter, ifIndex)")                          \
	X(interface_names, "interface_names", 262144,                                              \
	  "distinct interface names and descriptions options data may add to the string table")    \
	X(application_names, "application_names", 65536,                                           \
	  "application IDs named by options data (Cisco NBAR, IE 95 -> 96), all domains, and "     \
	  "distinct names they may add to the string table")                                       \
	X(listed_exporters, "listed_exporters", 1000,                                              \
	  "exporter rows in exporters.json and /api/v1/exporters (the rest: one others row)")      \
	X(metrics_exporters, "metrics_exporters", 100,                                             \
	  "exporters with their own /metrics series (the rest: one others series)")                \
	X(logged_exporters, "logged_exporters", 20,                                                \
	  "exporters with their own line in each counter report of the log")

typedef struct ng_limits {
#define X(field, key, def, doc) uint64_t field;
	NG_LIMITS(X)
#undef X
} ng_limits;

/* One entry of NG_LIMITS, for code that walks the list. */
typedef struct ng_limit_info {
	const char *key;
	uint64_t def;
	size_t offset; /* of the field in ng_limits */
	const char *doc;
} ng_limit_info;

enum {
#define X(field, key, def, doc) NG_LIMIT_##field,
	NG_LIMITS(X)
#undef X
	    NG_LIMIT_COUNT
};

extern const ng_limit_info ng_limit_infos[NG_LIMIT_COUNT];

/* Sets every limit of `l` to its default. */
void ng_limits_defaults(ng_limits *l);

/* Sets every limit of `l` that is 0 (not given) to its default. */
void ng_limits_fill(ng_limits *l);

#endif
