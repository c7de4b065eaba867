/*
 * geoflat.c — a MaxMind-format search tree flattened into multibit tries,
 * so that looking an address up costs a bounded, small number of memory
 * accesses whatever the traffic's address mix.
 *
 * The mmdb search tree is binary: one node (6-8 bytes, MaxMind DB format
 * spec §"Search Tree Section") per bit of the address, so a lookup of an
 * address the caches have not seen walks up to 32 (IPv4) or 128 (IPv6)
 * nodes spread over tens of MB — a cold cache line each.  Under a flood of
 * random source addresses every lookup is such a walk.
 *
 * Here the tree is expanded at open (on the reloader thread) into a trie
 * whose nodes consume several address bits at once (a "stride"), the
 * DIR-24-8 scheme of Gupta, Lin and McKeown (INFOCOM 1998) generalised:
 * the root consumes the first stride (IPv4: 24 bits, a 2^24-entry table),
 * each further level the next.  Every entry of a node is one uint32_t:
 *
 *   bit 31 = 1          child: bits 0-30 = offset of the child node's first
 *                       entry in the same array
 *   bit 31 = 0, bit 30  alias (IPv6 only): the subtree here is the IPv4
 *                       subtree (an mmdb aliases ::/96, ::ffff:0:0/96,
 *                       2002::/16 and 2001::/32 to it); bits 0-7 = the
 *                       depth D: continue in the IPv4 trie with the 32
 *                       address bits from D on, the answer's prefix length
 *                       is D + the IPv4 answer's
 *   bit 31 = bit 30 = 0 leaf: bits 8-29 = record index (0 = no data), bits
 *                       0-7 = prefix length of the tree's leaf
 *
 * A leaf of the binary tree at depth d inside a node covering bits
 * [s, s + stride) fills the 2^(s + stride - d) entries it spans (controlled
 * prefix expansion, Srinivasan and Varghese 1999), so a lookup reads one
 * entry per level and stops at the first leaf.  The answers (record and
 * prefix length) are exactly the tree walk's: every entry holds what
 * MMDB_lookup_sockaddr returns for any address it covers
 * (tests/unit/test_enrich_geoflat.c compares them over every network of
 * MaxMind's test databases and of DB-IP Lite city).
 *
 * Strides (ng_geodb_open chooses, docs/enrichment.md has the figures):
 * IPv4 24-4-4 for a big database: a 2^24-entry root (64 MiB), then nodes
 * of 16 entries, 64 B, one cache line each: at most 3 reads, and 1 for an
 * address whose /24 the database does not split (97 % of the IPv4 space
 * in DB-IP Lite city, whose 6.3 M networks take 102 MiB this way; 8-bit
 * nodes below the root, DIR-24-8 proper, would take 442 MiB); a small
 * database gets 16-4-4-4-4 (a 256 KiB root).  IPv6 16-4-...: a /48 is 9
 * reads (the tree walk: 48), DB-IP's 8.4 M IPv6 networks 89 MiB (8-bit
 * strides: 672 MiB).  Arrays of 2 MiB or more are on huge pages: a random
 * read in 4 KiB pages also missed the TLB.
 */
#include <maxminddb.h>
#include <stdlib.h>
#include <string.h>

#include "core/bigmem.h"
#include "enrich/enrich_int.h"

#define CHILD 0x80000000u
#define ALIAS 0x40000000u
#define REC_MAX (1u << 22)
#define JCHILD (UINT64_C(1) << 63)

struct build {
	ng_flat *f;
	const MMDB_s *mmdb;
	uint32_t v4start; /* node number of the IPv4 subtree (UINT32_MAX: none) */
	ng_flat_rec_fn rec_of;
	void *ctx;
	const char *why; /* set on failure */
};

/* Appends a node of 2^stride entries; its offset, or -1 (out of memory, or
 * more than 2^31 entries). */
static int64_t new_node(ng_flat *f, unsigned stride)
{
	size_t need = f->n + ((size_t)1 << stride);
	if (need > CHILD)
		return -1;
	if (need > f->cap) {
		size_t nc = f->cap ? f->cap : 1024;
		while (nc < need)
			nc *= 2;
		uint32_t *ne = realloc(f->e, nc * sizeof *ne);
		if (!ne)
			return -1;
		f->e = ne;
		f->cap = nc;
	}
	size_t off = f->n;
	f->n = need;
	return (int64_t)off;
}

/* The entry that a binary-tree record at `depth` becomes when it is not a
 * search node (or is the IPv4 subtree's); 0 with b->why set when its
 * record index does not fit. */
static uint32_t leaf_of(struct build *b, uint8_t type, const MMDB_entry_s *ent, unsigned depth,
                        int *bad)
{
	if (type == MMDB_RECORD_TYPE_SEARCH_NODE) { /* the IPv4 subtree */
		if (depth > 96) {
			b->why = "IPv4 subtree aliased below /96";
			*bad = 1;
		}
		return ALIAS | depth;
	}
	if (type != MMDB_RECORD_TYPE_DATA)
		return depth; /* empty: no data over this prefix */
	uint32_t r = b->rec_of(b->ctx, ent->offset);
	if (r >= REC_MAX) {
		b->why = "more than 2^22 data records";
		*bad = 1;
		return 0;
	}
	return r << 8 | depth;
}

/* Fills the entries of the node at `base` (consuming address bits
 * [lo, lo + stride of level `lvl`)) that the binary-tree record (type,
 * val, ent) at `depth` covers; `slot` holds the address bits [lo, depth).
 * Recursion depth: at most the address width. */
static int fill(struct build *b, size_t base, unsigned lvl, unsigned lo, uint32_t slot,
                unsigned depth, uint8_t type, uint64_t val, const MMDB_entry_s *ent)
{
	ng_flat *f = b->f;
	unsigned hi = lo + f->stride[lvl];
	bool alias = type == MMDB_RECORD_TYPE_SEARCH_NODE && val == b->v4start;
	if (type != MMDB_RECORD_TYPE_SEARCH_NODE || alias) {
		int bad = 0;
		uint32_t v = leaf_of(b, type, ent, depth, &bad);
		if (bad)
			return -1;
		size_t span = (size_t)1 << (hi - depth),
		       first = base + ((size_t)slot << (hi - depth));
		for (size_t i = 0; i < span; i++)
			f->e[first + i] = v;
		return 0;
	}
	if (depth == hi) { /* a node of the next level */
		if (lvl + 1 >= f->nstride) {
			b->why = "search tree deeper than the address";
			return -1;
		}
		int64_t c = new_node(f, f->stride[lvl + 1]);
		if (c < 0) {
			b->why = "out of memory";
			return -1;
		}
		f->e[base + slot] = CHILD | (uint32_t)c;
		return fill(b, (size_t)c, lvl + 1, hi, 0, depth, type, val, ent);
	}
	MMDB_search_node_s sn;
	if (MMDB_read_node((MMDB_s *)b->mmdb, (uint32_t)val, &sn) != MMDB_SUCCESS) {
		b->why = "unreadable search tree node";
		return -1;
	}
	if (fill(b, base, lvl, lo, slot << 1, depth + 1, sn.left_record_type, sn.left_record,
	         &sn.left_record_entry) < 0)
		return -1;
	return fill(b, base, lvl, lo, slot << 1 | 1, depth + 1, sn.right_record_type,
	            sn.right_record, &sn.right_record_entry);
}

int ng_flat_build(ng_flat *f, const MMDB_s *mmdb, uint8_t type, uint64_t val,
                  const MMDB_entry_s *ent, uint32_t v4start, ng_flat_rec_fn rec_of, void *ctx,
                  const char **why)
{
	struct build b = {.f = f, .mmdb = mmdb, .v4start = v4start, .rec_of = rec_of, .ctx = ctx};
	f->n = 0;
	int64_t r = new_node(f, f->stride[0]);
	if (r < 0) {
		*why = "out of memory";
		return -1;
	}
	if (fill(&b, 0, 0, 0, 0, 0, type, val, ent) < 0) {
		*why = b.why;
		return -1;
	}
	ng_flat_finish(f);
	return 0;
}

void ng_flat_finish(ng_flat *f)
{
	/* Give back the doubling's slack, and align the array to a cache line
	 * (malloc's large blocks start 16 B into a page): a 4-bit stride's node
	 * (16 entries, 64 B) is then one line.  A big array goes on huge
	 * pages: a random lookup in 64 MiB of 4 KiB pages missed the TLB too,
	 * and the page walk cost as much as the line. */
	size_t bytes = (f->n * sizeof *f->e + 63) & ~(size_t)63;
	uint32_t *ne = bytes >= ((size_t)2 << 20) ? ng_alloc_big(bytes) : aligned_alloc(64, bytes);
	if (ne) {
		memcpy(ne, f->e, f->n * sizeof *f->e);
		free(f->e);
		f->e = ne;
		f->cap = f->n;
	}
}

/* ---- tries built from ranges (geocsv.c's rows) ------------------------- */

/* Address bits [pos, pos + n) of a (16 bytes, big-endian), n <= 32. */
static inline uint32_t bits_at(uint64_t hi, uint64_t lo, unsigned pos, unsigned n);

/* A node of level `lvl` (consuming address bits up to `end`) whose
 * entries all say "no data" over their own span: a lookup may reuse the
 * answer for any address with the same first `end` bits. */
static int64_t empty_node(ng_flat *f, unsigned lvl, unsigned end)
{
	int64_t c = new_node(f, f->stride[lvl]);
	if (c >= 0)
		for (size_t k = 0; k < ((size_t)1 << f->stride[lvl]); k++)
			f->e[(size_t)c + k] = end;
	return c;
}

int ng_flat_init(ng_flat *f)
{
	f->n = 0;
	return empty_node(f, 0, f->stride[0]) < 0 ? -1 : 0;
}

int ng_flat_insert(ng_flat *f, uint64_t hi, uint64_t lo, unsigned plen, uint32_t rec,
                   const char **why)
{
	if (rec >= REC_MAX) {
		*why = "more than 2^22 distinct answers";
		return -1;
	}
	if (plen > f->bits) {
		*why = "prefix longer than the address";
		return -1;
	}
	size_t base = 0;
	unsigned pos = 0;
	for (unsigned l = 0; l < f->nstride; l++) {
		const unsigned s = f->stride[l], end = pos + s;
		const uint32_t slot = bits_at(hi, lo, pos, s);
		if (plen <= end) { /* the entries of this node the network spans */
			const size_t span = (size_t)1 << (end - plen);
			const size_t first = base + (slot & ~(uint32_t)(span - 1));
			for (size_t i = 0; i < span; i++)
				if ((f->e[first + i] & CHILD) || (f->e[first + i] >> 8)) {
					*why = "overlapping networks";
					return -1;
				}
			for (size_t i = 0; i < span; i++)
				f->e[first + i] = rec << 8 | plen;
			return 0;
		}
		uint32_t v = f->e[base + slot];
		if (!(v & CHILD)) {
			if (v >> 8) {
				*why = "overlapping networks";
				return -1;
			}
			if (l + 1 >= f->nstride) {
				*why = "prefix longer than the trie";
				return -1;
			}
			int64_t c = empty_node(f, l + 1, end + f->stride[l + 1]);
			if (c < 0) {
				*why = "out of memory";
				return -1;
			}
			v = CHILD | (uint32_t)c;
			f->e[base + slot] = v;
		}
		base = v & ~CHILD;
		pos = end;
	}
	*why = "prefix longer than the trie";
	return -1;
}

int ng_flat_layout(ng_flat *f, const char *spec, unsigned bits)
{
	memset(f, 0, sizeof *f);
	f->bits = bits;
	unsigned sum = 0;
	const char *p = spec;
	while (*p && *p != '/') {
		char *end;
		unsigned long s = strtoul(p, &end, 10);
		if (end == p || s < 1 || s > 24 || f->nstride >= sizeof f->stride)
			return -1;
		f->stride[f->nstride++] = (uint8_t)s;
		sum += (unsigned)s;
		p = *end == '-' ? end + 1 : end;
		if (*end && *end != '-' && *end != '/')
			return -1;
	}
	if (!f->nstride || sum > bits)
		return -1;
	/* The last stride repeats to the address width ("24-4": 24-4-4). */
	while (sum < bits) {
		unsigned s = f->stride[f->nstride - 1];
		if (sum + s > bits)
			s = bits - sum;
		if (f->nstride >= sizeof f->stride)
			return -1;
		f->stride[f->nstride++] = (uint8_t)s;
		sum += s;
	}
	return 0;
}

void ng_flat_free(ng_flat *f)
{
	free(f->e);
	f->e = NULL;
	f->n = f->cap = 0;
}

uint32_t ng_flat_get4(const ng_flat *f, uint32_t x, unsigned *plen)
{
	unsigned shift = 32 - f->stride[0];
	uint32_t v = f->e[(uint64_t)x >> shift];
	for (unsigned l = 1; v & CHILD; l++) {
		unsigned s = f->stride[l];
		shift -= s;
		v = f->e[(v & ~CHILD) + ((x >> shift) & ((1u << s) - 1))];
	}
	*plen = v & 0xff;
	return v >> 8;
}

/* Address bits [pos, pos + n) of a (16 bytes, big-endian), n <= 32. */
static inline uint32_t bits_at(uint64_t hi, uint64_t lo, unsigned pos, unsigned n)
{
	unsigned __int128 a = (unsigned __int128)hi << 64 | lo;
	return (uint32_t)(a << pos >> (128 - n));
}

uint32_t ng_flat_get6(const ng_flat *f6, const ng_flat *f4, uint64_t hi, uint64_t lo,
                      unsigned *plen)
{
	unsigned pos = 0;
	uint32_t v = f6->e[bits_at(hi, lo, 0, f6->stride[0])];
	pos = f6->stride[0];
	for (unsigned l = 1; v & CHILD; l++) {
		unsigned s = f6->stride[l];
		v = f6->e[(v & ~CHILD) + bits_at(hi, lo, pos, s)];
		pos += s;
	}
	if (v & ALIAS) {
		if (!f4->e)
			return UINT32_MAX; /* the IPv4 trie was dropped */
		unsigned d = v & 0xff, p4;
		uint32_t r = ng_flat_get4(f4, bits_at(hi, lo, d, 32), &p4);
		*plen = d + p4;
		return r;
	}
	*plen = v & 0xff;
	return v >> 8;
}

/* ---- two IPv4 tries joined ------------------------------------------- */

/* Entry k of the node that entry x (of trie t) stands for: a leaf stands
 * for itself in every sub-slot (it covers them all). */
static inline uint32_t sub_entry(const ng_flat *t, uint32_t x, size_t k)
{
	return x & CHILD ? t->e[(x & ~CHILD) + k] : x;
}

/* Sets entry `pos` of j from the entries xa, xb of the two tries at the
 * same slot of level `lvl`: a leaf when both are, else a node of the next
 * level filled slot by slot. */
static int join_set(ng_flatj *j, const ng_flat *a, const ng_flat *b, size_t pos, uint32_t xa,
                    uint32_t xb, unsigned lvl)
{
	if (!(xa & CHILD) && !(xb & CHILD)) {
		uint64_t pa = xa & 0xff, pb = xb & 0xff;
		j->e[pos] =
		    (uint64_t)(xb >> 8) << 32 | (uint64_t)(xa >> 8) << 8 | (pa > pb ? pa : pb);
		return 0;
	}
	size_t n = (size_t)1 << a->stride[lvl + 1];
	if (j->n + n > j->cap) {
		size_t nc = j->cap * 2 > j->n + n ? j->cap * 2 : j->n + n;
		uint64_t *ne = realloc(j->e, nc * sizeof *ne);
		if (!ne)
			return -1;
		j->e = ne;
		j->cap = nc;
	}
	size_t c = j->n;
	j->n += n;
	j->e[pos] = JCHILD | c;
	for (size_t k = 0; k < n; k++)
		if (join_set(j, a, b, c + k, sub_entry(a, xa, k), sub_entry(b, xb, k), lvl + 1) < 0)
			return -1;
	return 0;
}

int ng_flat_join(ng_flatj *j, const ng_flat *a, const ng_flat *b)
{
	memset(j, 0, sizeof *j);
	if (a->bits != 32 || b->bits != 32 || a->nstride != b->nstride ||
	    memcmp(a->stride, b->stride, a->nstride))
		return -1;
	memcpy(j->stride, a->stride, sizeof j->stride);
	j->nstride = a->nstride;
	size_t root = (size_t)1 << a->stride[0];
	j->cap = root + root / 8;
	if (!(j->e = malloc(j->cap * sizeof *j->e)))
		return -1;
	j->n = root;
	for (size_t i = 0; i < root; i++)
		if (join_set(j, a, b, i, a->e[i], b->e[i], 0) < 0) {
			ng_flatj_free(j);
			return -1;
		}
	/* as ng_flat_build: no slack, huge pages, 64 B aligned */
	size_t bytes = (j->n * sizeof *j->e + 63) & ~(size_t)63;
	uint64_t *ne = bytes >= ((size_t)2 << 20) ? ng_alloc_big(bytes) : aligned_alloc(64, bytes);
	if (ne) {
		memcpy(ne, j->e, j->n * sizeof *j->e);
		free(j->e);
		j->e = ne;
		j->cap = j->n;
	}
	return 0;
}

void ng_flatj_free(ng_flatj *j)
{
	free(j->e);
	memset(j, 0, sizeof *j);
}
