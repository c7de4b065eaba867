/*
 * keys.c — the words of a query: its group-by keys and its orders.
 *
 * A group-by key (query.h ng_group_key) is a list of fields whose values
 * are concatenated into one composite key of at most NG_QUERY_KEY_MAX
 * bytes, in the order given: "srcip,dstport" groups by (source address,
 * destination port), 18 bytes.  The names are the field table's
 * (core/field.h: "srcip", "dst_port", "proto", ...) and nfdump's words
 * for the usual combinations:
 *
 *   - an either key ("ip", "port", "as", "if", "mask", "vlan", "mac", and
 *     the classification's "provider", "boundary", "connectivity": in_if_X
 *     and out_if_X):
 *     one field that stands for both sides; each flow is counted once
 *     under its source's value and once under its destination's, like
 *     nfdump's -s ip (at most one per group-by: the executor counts a
 *     flow under two keys, not four);
 *   - "conv" (or "record"): src_addr,dst_addr;
 *   - an address prefix in nfdump's -A form, "srcip4/24" or "dstip6/64":
 *     the address key cut to that many bits for IPv4 resp. IPv6 rows;
 *     both lengths may be given for one field, and they attach to the
 *     field's key rather than adding another.
 *
 * Time buckets (bucket_ms) are not parsed here: a time series
 * (series.c) adds the flow_start key itself.  Prefixes and buckets are
 * applied to each row's built key (groupby.c key_xform).
 *
 * An order is one metric of a group, descending: flows, packets, bytes,
 * or the rates over the group's span, last - first (pps, bps), and bytes
 * per packet (bpp).  The rates are 0 for a group that spans no time
 * (last = first), bpp 0 for one without packets.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "query/query_int.h"

/* The either keys: a flow counts once under its `a` field's value and
 * once under its `b` field's (nfdump's -s ip). */
static const struct {
	const char *name;
	enum ng_field_id a, b;
} either_keys[] = {
    {"ip", NG_F_SRC_ADDR, NG_F_DST_ADDR},
    {"port", NG_F_SRC_PORT, NG_F_DST_PORT},
    {"as", NG_F_SRC_AS, NG_F_DST_AS},
    {"if", NG_F_IN_IF, NG_F_OUT_IF},
    {"mask", NG_F_SRC_MASK, NG_F_DST_MASK},
    {"vlan", NG_F_SRC_VLAN, NG_F_DST_VLAN},
    {"mac", NG_F_SRC_MAC, NG_F_DST_MAC},
    /* classification (docs/configuration.md): a flow under its input and
     * its output interface's value */
    {"provider", NG_F_IN_IF_PROVIDER, NG_F_OUT_IF_PROVIDER},
    {"boundary", NG_F_IN_IF_BOUNDARY, NG_F_OUT_IF_BOUNDARY},
    {"connectivity", NG_F_IN_IF_CONNECTIVITY, NG_F_OUT_IF_CONNECTIVITY},
};

/* Appends key f (alt: the other side of an either key, or -1) titled
 * `label` (static) to q.  Returns 0, or -1 with a message when q has
 * NG_QUERY_MAX_KEYS keys already or the composite key would pass
 * NG_QUERY_KEY_MAX bytes. */
static int add_key(ng_query *q, enum ng_field_id f, int alt, const char *label, char *err,
                   size_t errlen)
{
	if (q->nkeys >= NG_QUERY_MAX_KEYS) {
		snprintf(err, errlen, "at most %d group-by fields", NG_QUERY_MAX_KEYS);
		return -1;
	}
	q->keys[q->nkeys++] = (ng_group_key){.field = f, .alt = alt, .label = label};
	if (ng_query_key_len(q) > NG_QUERY_KEY_MAX) {
		snprintf(err, errlen, "group-by key longer than %d bytes", NG_QUERY_KEY_MAX);
		return -1;
	}
	return 0;
}

/* nfdump's "srcip4/24" / "dstip6/64": an address key cut to a prefix.
 * Returns 1 when `t` is one (added, or merged into the same field's key),
 * 0 when it is not, -1 on a bad length. */
static int parse_prefix_key(ng_query *q, const char *t, char *err, size_t errlen)
{
	unsigned fam, len;
	char side[4], rest;
	if (sscanf(t, "%3[srcdstSRCDST]ip%u/%u%c", side, &fam, &len, &rest) != 3 ||
	    (fam != 4 && fam != 6))
		return 0;
	bool src = !strcasecmp(side, "src");
	if (!src && strcasecmp(side, "dst"))
		return 0;
	if (len == 0 || len > (fam == 4 ? 32u : 128u)) {
		snprintf(err, errlen, "bad prefix length in '%s' (1..%u)", t, fam == 4 ? 32 : 128);
		return -1;
	}
	enum ng_field_id f = src ? NG_F_SRC_ADDR : NG_F_DST_ADDR;
	ng_group_key *k = NULL;
	for (size_t i = 0; i < q->nkeys; i++)
		if (q->keys[i].field == f && q->keys[i].alt < 0)
			k = &q->keys[i];
	if (!k) {
		if (add_key(q, f, -1, src ? "srcip" : "dstip", err, errlen))
			return -1;
		k = &q->keys[q->nkeys - 1];
	}
	if (fam == 4)
		k->plen4 = (uint8_t)len;
	else
		k->plen6 = (uint8_t)len;
	return 1;
}

int ng_query_parse_keys(ng_query *q, const char *spec, char *err, size_t errlen)
{
	char buf[256];
	if (strlen(spec) >= sizeof buf || !*spec) {
		snprintf(err, errlen, "bad group-by list '%s'", spec);
		return -1;
	}
	strcpy(buf, spec);
	bool have_either = false;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int pr = parse_prefix_key(q, t, err, errlen);
		if (pr < 0)
			return -1;
		if (pr > 0)
			continue;
		if (!strcasecmp(t, "conv") || !strcasecmp(t, "record")) {
			if (add_key(q, NG_F_SRC_ADDR, -1, "srcip", err, errlen) ||
			    add_key(q, NG_F_DST_ADDR, -1, "dstip", err, errlen))
				return -1;
			continue;
		}
		bool found = false;
		for (size_t i = 0; i < sizeof either_keys / sizeof either_keys[0]; i++) {
			if (strcasecmp(t, either_keys[i].name))
				continue;
			if (have_either) {
				snprintf(err, errlen,
				         "only one either-side key (ip, port, as, if, ...) per "
				         "group-by");
				return -1;
			}
			have_either = found = true;
			if (add_key(q, either_keys[i].a, (int)either_keys[i].b, either_keys[i].name,
			            err, errlen))
				return -1;
		}
		if (found)
			continue;
		const ng_field *f = ng_field_by_name(t);
		if (!f) {
			snprintf(
			    err, errlen,
			    "unknown group-by field '%s' (try srcip, dstip, ip, srcport, dstport, "
			    "port, proto, exporter, srcas, dstas, inif, outif, conv or a field "
			    "name from docs/fields.md)",
			    t);
			return -1;
		}
		if (add_key(q, f->id, -1, f->short_name ? f->short_name : f->name, err, errlen))
			return -1;
	}
	return 0;
}

/* Indexed by enum ng_order. */
static const char *order_names[] = {"flows", "packets", "bytes", "pps", "bps", "bpp"};

bool ng_query_parse_order(const char *s, enum ng_order *out)
{
	for (size_t i = 0; i < sizeof order_names / sizeof order_names[0]; i++)
		if (!strcasecmp(s, order_names[i])) {
			*out = (enum ng_order)i;
			return true;
		}
	return false;
}

const char *ng_order_name(enum ng_order o)
{
	return (unsigned)o < sizeof order_names / sizeof order_names[0] ? order_names[o] : "?";
}

double ng_agg_metric(const ng_agg_row *r, enum ng_order o)
{
	return ng_row_metric(r, o);
}

size_t ng_query_key_len(const ng_query *q)
{
	size_t n = 0;
	for (size_t i = 0; i < q->nkeys; i++)
		n += ng_fields[q->keys[i].field].size;
	return n;
}

void ng_query_reverse_keys(ng_query *q)
{
	for (size_t j = 0; j < q->nkeys; j++) {
		ng_group_key *k = &q->keys[j];
		int p = ng_field_partner(k->field);
		if (k->alt >= 0 || p < 0)
			continue;
		const ng_field *f = &ng_fields[p];
		k->field = (enum ng_field_id)p;
		k->label = f->short_name ? f->short_name : f->name;
	}
}
