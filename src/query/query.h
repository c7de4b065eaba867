/*
 * query.h — the query model and its executor over the flow store.
 *
 * One model for every front end (DESIGN.md "Query model"): a time range, a
 * filter, group-by keys (zero or more), an order and a limit.
 *
 *   - no group-by: list the matching flows in flow_start order, the first
 *     `limit` of them (0: all);
 *   - group-by: aggregate flows, packets, bytes, first and last seen per
 *     distinct key (hash table, open addressing on the key bytes), then keep
 *     the top `limit` by the order metric (a heap).
 *
 * A group-by key is a list of fields whose values are concatenated (e.g.
 * src_addr,dst_addr: a conversation).  One of them may be an "either"
 * key: "ip" (src_addr or dst_addr), "port", "as", "if": each flow is counted
 * once under each side's value, like nfdump's `-s ip`.
 */
#ifndef NG_QUERY_H
#define NG_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/field.h"
#include "core/flow.h"
#include "query/filter.h"
#include "store/store.h"

#define NG_QUERY_MAX_KEYS 6
#define NG_QUERY_KEY_MAX 64 /* bytes of one composite key */

enum ng_order {
	NG_ORDER_FLOWS,
	NG_ORDER_PACKETS,
	NG_ORDER_BYTES,
	NG_ORDER_PPS,
	NG_ORDER_BPS,
	NG_ORDER_BPP
};

/* One fold of a key part (ng_query.folds): bytes [off, off + len) of a
 * key that equal none of the n values at vals (len bytes each) get other. */
typedef struct ng_query_fold {
	const uint8_t *vals, *other;
	size_t n, off, len;
} ng_query_fold;

typedef struct ng_group_key {
	enum ng_field_id field;
	int alt;           /* -1, or the other side's field for an "either" key */
	const char *label; /* column title, e.g. "srcip", "ip" */
	/* ADDR keys: keep the first plen4 bits of IPv4 and plen6 bits of IPv6
	 * addresses (nfdump -A srcip4/24,srcip6/64); 0: the whole address */
	uint8_t plen4, plen6;
	/* TIME keys: round down to a multiple of bucket_ms (UTC-aligned time
	 * series buckets); 0: exact */
	uint64_t bucket_ms;
} ng_group_key;

typedef struct ng_query {
	uint64_t from_ms, to_ms; /* flow_start in [from, to) */
	ng_filter *filter;       /* borrowed; NULL: every flow */
	size_t nkeys;            /* 0: list flows */
	ng_group_key keys[NG_QUERY_MAX_KEYS];
	enum ng_order order; /* group-by only: descending by this metric */
	size_t limit;        /* 0: no limit */
	unsigned threads;    /* group-by scan workers; 0: every online CPU */
	/* CLOCK_MONOTONIC ms after which the scan stops and the run fails
	 * with errno ETIMEDOUT (the HTTP API's run-time limit); 0: none */
	uint64_t deadline_ms;
	/* skip no segment by its zone maps (tests compare both ways) */
	bool no_prune;
	/* read every segment's rows, never its rollups (tests compare both
	 * ways; the answer is the same) */
	bool no_rollup;
	/* group-by: the rows' first and last (and so their rates) are not
	 * wanted, only their sums (a series' buckets): the ClickHouse backend
	 * may then read its rollup tables, which keep no flow times
	 * (query_sql.h); the store's rollups keep them and need no such
	 * leave */
	bool sums_only;
	/* group-by: a key whose bytes [fold_off, fold_off + fold_len) equal
	 * none of the nfold values at fold (fold_len bytes each) gets
	 * fold_other there instead: its flows go to one group, the "other"
	 * of a top-N time series (series.c).  nfold 0: none.  Borrowed. */
	const uint8_t *fold, *fold_other;
	size_t nfold, fold_off, fold_len;
	/* more folds of the same kind, each on its own key part (the stages
	 * of a Sankey, sankey.c); applied after the one above.  nfolds 0:
	 * none.  Borrowed. */
	const struct ng_query_fold *folds;
	size_t nfolds;
	/* group-by: only the groups whose first key, as the machine formats
	 * write it (ng_format_key, names off: "DE", "15169", "10.1.2.3"),
	 * starts with this text, ASCII case-insensitive, are ranked and
	 * answered; res->groups counts those.  The completion of filter
	 * values (GET /api/v1/complete).  NULL or "": every group.  A query
	 * with one is never answered from top rollups (their proof is over
	 * every group).  Borrowed. */
	const char *key_prefix;
	/* the segments to read (store.h, ng_store_snapshot_take for a range
	 * covering [from_ms, to_ms)): every query of one command or API
	 * request is given the same one, so that all its tables and totals
	 * read the same set; NULL: ng_query_run takes one for the query.
	 * Borrowed. */
	ng_store_snapshot *snap;
} ng_query;

/* One aggregated group. */
typedef struct ng_agg_row {
	uint8_t key[NG_QUERY_KEY_MAX]; /* the key fields' values, concatenated */
	uint64_t flows, packets, bytes;
	uint64_t first, last; /* min flow_start, max flow_end (ms) */
} ng_agg_row;

typedef struct ng_query_result {
	/* listing (nkeys == 0): matching flows, in flow_start order */
	ng_flow *flows;
	size_t nflows;
	/* group-by: the top groups, best first */
	ng_agg_row *rows;
	size_t nrows;
	uint64_t groups;   /* distinct keys seen */
	bool groups_exact; /* false: groups counts those seen in top rollups
	                    * and rows, a lower bound (toprollup.c) */
	/* totals over every matching flow (each flow once, even for either keys) */
	uint64_t flows_total, packets_total, bytes_total;
	uint64_t first, last; /* min flow_start, max flow_end; 0 when none */
	ng_scan_stats scan;
	double elapsed_s; /* wall clock of the run */
} ng_query_result;

/*
 * Parses a group-by name: any field name or short name of the table
 * ("srcip", "dst_port", "proto", …), an either key ("ip", "port", "as",
 * "if", "mask", "vlan"), "conv" (src_addr,dst_addr), an address prefix
 * in nfdump's -A form ("srcip4/24", "dstip6/64": IPv4 resp. IPv6
 * addresses cut to that many bits; both may be given for one field), or
 * several of these joined by commas ("srcip,dstport").  Fills q->keys/q->nkeys.  Returns 0,
 * or -1 with a message naming the unknown part in err[errlen].
 */
int ng_query_parse_keys(ng_query *q, const char *spec, char *err, size_t errlen);

/*
 * Turns q's keys to the other direction: a src_X key becomes dst_X, in_if
 * out_if and so on (ng_field_partner, core/field.h), titled by the
 * partner's short name; either keys ("ip") and keys without a side stay.
 * Address prefix lengths are kept.  With ng_filter_reverse, the reverse
 * direction of a bidirectional view.
 */
void ng_query_reverse_keys(ng_query *q);

/* What a rollup must hold to answer q (src/query/plan.c, the embedded
 * engine's rule, which the ClickHouse backend follows too): false when no
 * rollup can (q->no_rollup, no keys, a filter on flow_start, an address
 * prefix or a bucket of a field other than flow_start), else true with
 * the columns its filter and keys read (a flow_start bucket aside) in
 * *need. */
bool ng_query_rollup_columns(const ng_query *q, ng_colset *need);

/* Parses "flows", "packets", "bytes", "pps", "bps", "bpp" (case-insensitive).
 * Returns false when unknown. */
bool ng_query_parse_order(const char *s, enum ng_order *out);
const char *ng_order_name(enum ng_order o);

/* The metric `o` of a group (rates per second over last - first; 0 when
 * the group spans no time; bpp 0 when it has no packets). */
double ng_agg_metric(const ng_agg_row *r, enum ng_order o);

/* Bytes of the composite key of q. */
size_t ng_query_key_len(const ng_query *q);

/*
 * Runs q over the store at `dir`.  Fills *res (free with
 * ng_query_result_free).  Returns 0; -1 when `dir` is not a store or out
 * of memory, with a message in err[errlen]; -1 with errno ETIMEDOUT when
 * q->deadline_ms passed during the scan.  Damaged segments are skipped
 * whole (none of their rows counted) and counted once each in
 * res->scan.segments_damaged (and errors), the same for every query of
 * one snapshot over the same range.
 */
int ng_query_run(const char *dir, const ng_query *q, ng_query_result *res, char *err,
                 size_t errlen);

void ng_query_result_free(ng_query_result *res);

#endif
