/*
 * filter_prune.c — zone-map pruning: may any row of a segment pass the
 * filter, given only the segment's zone map (store.h ng_zone_map: per
 * column, the minimum and maximum of its rows where known, and for an
 * address column whether all its rows are IPv4, with the range of their
 * IPv4 addresses as numbers)?  When the answer is no, the scan skips the
 * segment unread.
 *
 * The tree is evaluated once over the zone map instead of a row, in three
 * values: each node says whether some row may make it true (t) and
 * whether some row may make it false (f).  A leaf on one column compares
 * its value with the column's range (cmp_range: "port 80" over ports
 * 1000..2000 is never true; over 80..80 never false), and and/or/not
 * combine the pairs: not swaps them (so "not dst port 80" prunes a
 * segment whose destination ports are all 80), "a and b" may be true only
 * where both may be and false where either may be, "a or b" the reverse.  What a zone map says
 * nothing about — a column without min/max, MAC and string terms, computed values (duration, pps,
 * bps, bpp), bit tests (flags) — may be anything.
 *
 * The answer must never be "no" when a row passes (the scan would drop
 * it): every rule here errs towards "may".  tests/unit/test_query_prune.c
 * and fuzz_filter check that against evaluated rows.
 */
#include "query/filter_int.h"

/* What a leaf or subtree can evaluate to over a segment's rows. */
typedef struct maybe {
	bool t, f;
} maybe;

static const maybe ANY = {true, true};

/* a or b. */
static maybe either(maybe a, maybe b)
{
	return (maybe){a.t || b.t, a.f && b.f};
}

/* field >> shift op x over values in [lo, hi]. */
static maybe cmp_range(enum op op, uint64_t lo, uint64_t hi, uint64_t x)
{
	if (lo == hi) {
		bool v = cmp(op, lo, x);
		return (maybe){v, !v};
	}
	switch (op) {
	case OP_EQ: return (maybe){lo <= x && x <= hi, true};
	case OP_NE: return (maybe){true, lo <= x && x <= hi};
	case OP_LT: return (maybe){lo < x, hi >= x};
	case OP_GT: return (maybe){hi > x, lo <= x};
	case OP_LE: return (maybe){lo <= x, hi > x};
	case OP_GE: return (maybe){hi >= x, lo < x};
	case OP_ALL: return (maybe){hi >= x, true}; /* v & x == x needs v >= x */
	default: return ANY;                        /* other bit tests say little about a range */
	}
}

/* An N_CMP leaf on field fi: its range, shifted as the leaf shifts. */
static maybe zone_cmp(const node *n, int fi, const ng_zone_map *z)
{
	if (!z->known[fi])
		return ANY;
	return cmp_range(n->op, z->min[fi] >> n->shift, z->max[fi] >> n->shift, n->val);
}

/* An N_SET leaf on field fi: true when a value of the set lies in the
 * range, false unless the range is that one value. */
static maybe zone_set(const node *n, int fi, const ng_zone_map *z)
{
	if (!z->known[fi])
		return ANY;
	uint64_t lo = z->min[fi], hi = z->max[fi];
	/* first value ≥ lo (vals sorted ascending) */
	size_t a = 0, b = n->nvals;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (n->vals[m] < lo)
			a = m + 1;
		else
			b = m;
	}
	bool hit = a < n->nvals && n->vals[a] <= hi;
	return (maybe){hit, !(hit && lo == hi)};
}

/* A net (prefix) against a column whose rows are all IPv4-mapped, in
 * [lo, hi] as numbers. */
static maybe v4_net(const uint8_t net[16], const uint8_t mask[16], uint64_t lo, uint64_t hi)
{
	static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	for (unsigned j = 0; j < 12; j++)
		if ((pre[j] & mask[j]) != net[j])
			return (maybe){false, true};
	uint32_t n4 =
	    (uint32_t)net[12] << 24 | (uint32_t)net[13] << 16 | (uint32_t)net[14] << 8 | net[15];
	uint32_t m4 = (uint32_t)mask[12] << 24 | (uint32_t)mask[13] << 16 |
	              (uint32_t)mask[14] << 8 | mask[15];
	uint64_t nlo = n4 & m4, nhi = nlo | (~m4 & 0xffffffffu);
	bool overlap = nlo <= hi && lo <= nhi;
	bool inside = nlo <= lo && hi <= nhi;
	return (maybe){overlap, !inside};
}

/* An N_NET leaf on address field fi, when its rows are all IPv4. */
static maybe zone_net(const node *n, int fi, const ng_zone_map *z)
{
	if (!z->v4[fi])
		return ANY;
	return v4_net(n->net, n->mask, z->min[fi], z->max[fi]);
}

/* An N_ADDRSET leaf on address field fi, when its rows are all IPv4:
 * true when a host or a net of the list meets the range; never "always
 * true" (false stays possible). */
static maybe zone_addrset(const node *n, int fi, const ng_zone_map *z)
{
	if (!z->v4[fi])
		return ANY;
	static const uint8_t full[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	                                 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	maybe r = {false, true};
	for (size_t k = 0; k < n->naddrs && !r.t; k++)
		r.t = v4_net(n->addrs[k], full, z->min[fi], z->max[fi]).t;
	for (size_t k = 0; k < n->nnets && !r.t; k++)
		r.t = v4_net(n->nets[k], n->nets[k] + 16, z->min[fi], z->max[fi]).t;
	return r;
}

/* A leaf of a kind the zone map can judge, on field fi. */
static maybe zone_leaf(const node *n, int fi, const ng_zone_map *z)
{
	switch (n->kind) {
	case N_CMP: return zone_cmp(n, fi, z);
	case N_SET: return zone_set(n, fi, z);
	case N_NET: return zone_net(n, fi, z);
	case N_ADDRSET: return zone_addrset(n, fi, z);
	default: return ANY;
	}
}

/* n's subtree over the zone map z. */
static maybe zone_node(const node *n, const ng_zone_map *z)
{
	switch (n->kind) {
	case N_TRUE: return (maybe){true, false};
	case N_FALSE: return (maybe){false, true};
	case N_NOT: {
		maybe c = zone_node(n->l, z);
		return (maybe){c.f, c.t};
	}
	case N_AND: {
		maybe a = zone_node(n->l, z), b = zone_node(n->r, z);
		return (maybe){a.t && b.t, a.f || b.f};
	}
	case N_OR: return either(zone_node(n->l, z), zone_node(n->r, z));
	case N_CMP:
	case N_SET:
	case N_NET:
	case N_ADDRSET: {
		maybe r = zone_leaf(n, n->f1, z);
		return n->f2 >= 0 ? either(r, zone_leaf(n, n->f2, z)) : r;
	}
	default: return ANY; /* MAC, string, computed */
	}
}

/* False only when no row of a segment with zone map z can pass f
 * (filter.h). */
bool ng_filter_may_match(const ng_filter *f, const ng_zone_map *z)
{
	return zone_node(f->root, z).t;
}
