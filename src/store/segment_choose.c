/*
 * segment_choose.c — which encoding each column of a segment gets.
 *
 * The encoder (segment_encode.c) asks once per column, with all the
 * segment's rows of it at hand, and writes the column as told; the
 * encodings' bytes are in segment.c.  The choice looks at the values, not
 * only at the field's type, because one field differs from one network
 * to the next (an AS column is one AS at an edge site, heavy-tailed at a
 * transit one; receive times follow flow ends for most exporters and not
 * for a replay).  In the order ng_seg_choose_encoding() tries them:
 *
 *   every row equal           CONST  integers: min = max; strings only
 *                                    when all "" (a string ID means
 *                                    nothing in another process)
 *   a string its key decides  MAP    AS names by AS number, interface
 *                                    names by index: try_map()
 *   any other string          DICT   (built by the encoder)
 *   a reference column        DIFF   times: when the differences from it
 *                                    are smaller than the deltas
 *                                    (diff_smaller); counters: only when
 *                                    equal to it (unsampled)
 *   a time                    DELTA  flow_start is sorted: small deltas
 *   an all-IPv4 address       RANK   when most rows repeat a value
 *                                    (try_rank), else V4
 *   a u32 integer             RANK   likewise, else PLAIN
 *   anything else             PLAIN
 *
 * RANK and MAP are judged by building them, so a trial that succeeds
 * leaves its numbering and dictionary in the encoder for the encoder to
 * write, and a RANK key column keeps its numbering for the MAP column it
 * decides (keep_rank), which then checks each row against a small table
 * instead of hashing.  A trial that fails, or runs out of memory, only
 * costs its time: the column keeps the plainer encoding, and the segment
 * is written all the same.
 *
 * The zone map (bytes 64..79 of the directory entry: an integer column's
 * min and max, an IPv4 column's range) is filled here too, since min =
 * max is the CONST test.  The thresholds were measured on bench/query's
 * and bench/ingest's flows; docs/store-format.md has what each encoding
 * saves and costs.  Everything here runs on every flush, over every row
 * of every column: the per-row helpers it shares with the encoder
 * (ng_seg_load_uint, ng_seg_zigzag) are static inline in segment_int.h.
 */
#include <string.h>

#include "core/bytes.h"
#include "core/strtab.h"
#include "store/keymap.h"
#include "store/radix.h"
#include "store/rank.h"
#include "store/segment_int.h"
#include "store/shuffle.h"

/* ---- which column refers to which ------------------------------------- */

/* The column a field is stored as a difference from (DIFF), or -1.  Flow
 * end and receive times sit close to the start: their differences are a
 * few bytes, where their own deltas, once rows are in flow_start order,
 * are not.  Raw counters equal the scaled ones when unsampled. */
static int diff_ref(enum ng_field_id f)
{
	switch (f) {
	case NG_F_FLOW_END: return NG_F_FLOW_START;
	case NG_F_TIME_RECEIVED: return NG_F_FLOW_END;
	case NG_F_BYTES_RAW: return NG_F_BYTES;
	case NG_F_PACKETS_RAW: return NG_F_PACKETS;
	default: return -1;
	}
}

/* MAP: the integer field whose value decides string field f's, when one
 * usually does (an AS number its AS name, an interface index its name);
 * whether it does in a segment is checked on every row (try_map). */
static const struct {
	enum ng_field_id key, name;
} map_cols[NKEYS] = {
    {NG_F_SRC_AS, NG_F_SRC_AS_NAME},
    {NG_F_DST_AS, NG_F_DST_AS_NAME},
    {NG_F_IN_IF, NG_F_IN_IF_NAME},
    {NG_F_OUT_IF, NG_F_OUT_IF_NAME},
    /* an interface's description (SNMP ifAlias, options data, the
     * configuration) and its classification (enrich/classify.c: decided
     * per exporter and interface) */
    {NG_F_IN_IF, NG_F_IN_IF_DESC},
    {NG_F_OUT_IF, NG_F_OUT_IF_DESC},
    {NG_F_IN_IF, NG_F_IN_IF_BOUNDARY},
    {NG_F_OUT_IF, NG_F_OUT_IF_BOUNDARY},
    {NG_F_IN_IF, NG_F_IN_IF_CONNECTIVITY},
    {NG_F_OUT_IF, NG_F_OUT_IF_CONNECTIVITY},
    {NG_F_IN_IF, NG_F_IN_IF_PROVIDER},
    {NG_F_OUT_IF, NG_F_OUT_IF_PROVIDER},
};

/* The key field of MAP candidate string field f (map_cols), or -1. */
static int map_key(enum ng_field_id f)
{
	for (int i = 0; i < NKEYS; i++)
		if (map_cols[i].name == f)
			return (int)map_cols[i].key;
	return -1;
}

/* The keyrank slot (map_cols entry) of a key column of map_key(), or -1. */
static int key_slot(enum ng_field_id f)
{
	for (int i = 0; i < NKEYS; i++)
		if (map_cols[i].key == f)
			return i;
	return -1;
}

/* ---- tests on a column's values ------------------------------------- */

/* True when the n values of w bytes at col are all the same. */
static bool all_equal(const uint8_t *col, size_t n, unsigned w)
{
	if (w == 16) { /* addresses: two words a row, no call per row */
		uint64_t a = ng_get_le64(col), b = ng_get_le64(col + 8), d = 0;
		for (size_t i = 1; i < n && !d; i++)
			d = (ng_get_le64(col + i * 16) ^ a) | (ng_get_le64(col + i * 16 + 8) ^ b);
		return !d;
	}
	for (size_t i = 1; i < n; i++)
		if (memcmp(col, col + i * w, w))
			return false;
	return true;
}

/* True when every one of the n addresses at col is IPv4-mapped. */
static bool all_v4(const uint8_t *col, size_t n)
{
	const uint64_t a = ng_get_le64(ng_seg_v4_prefix);
	const uint32_t b = ng_get_le32(ng_seg_v4_prefix + 8);
	for (size_t i = 0; i < n; i++)
		if (ng_get_le64(col + i * 16) != a || ng_get_le32(col + i * 16 + 8) != b)
			return false;
	return true;
}

/* Min and max of an unsigned column of n values of w bytes: one loop per
 * width, so the compiler keeps it branch-free (and vectorizes it). */
static void min_max(const uint8_t *col, size_t n, unsigned w, uint64_t *mn, uint64_t *mx)
{
/* four independent minima and maxima: without SSE4's unsigned min/max the
 * loop is scalar, and one pair of accumulators chains every row's cmov */
#define MIN_MAX(T)                                                                                 \
	do {                                                                                       \
		T lo[4] = {(T) ~(T)0, (T) ~(T)0, (T) ~(T)0, (T) ~(T)0}, hi[4] = {0, 0, 0, 0};      \
		size_t i = 0;                                                                      \
		for (; i + 4 <= n; i += 4)                                                         \
			for (size_t j = 0; j < 4; j++) {                                           \
				T v;                                                               \
				memcpy(&v, col + (i + j) * sizeof(T), sizeof(T));                  \
				lo[j] = v < lo[j] ? v : lo[j];                                     \
				hi[j] = v > hi[j] ? v : hi[j];                                     \
			}                                                                          \
		for (; i < n; i++) {                                                               \
			T v;                                                                       \
			memcpy(&v, col + i * sizeof(T), sizeof(T));                                \
			lo[0] = v < lo[0] ? v : lo[0];                                             \
			hi[0] = v > hi[0] ? v : hi[0];                                             \
		}                                                                                  \
		for (size_t j = 1; j < 4; j++) {                                                   \
			lo[0] = lo[j] < lo[0] ? lo[j] : lo[0];                                     \
			hi[0] = hi[j] > hi[0] ? hi[j] : hi[0];                                     \
		}                                                                                  \
		*mn = lo[0];                                                                       \
		*mx = hi[0];                                                                       \
	} while (0)
	switch (w) {
	case 1: MIN_MAX(uint8_t); break;
	case 2: MIN_MAX(uint16_t); break;
	case 4: MIN_MAX(uint32_t); break;
	default: MIN_MAX(uint64_t); break;
	}
#undef MIN_MAX
}

/* True when two unsigned columns hold the same numbers row by row. */
static bool same_values(const uint8_t *a, unsigned wa, const uint8_t *b, unsigned wb, size_t n)
{
	if (wa == 8 && wb == 8) {
		uint64_t d = 0;
		for (size_t i = 0; i < n; i++)
			d |= ng_get_le64(a + i * 8) ^ ng_get_le64(b + i * 8);
		return !d;
	}
	for (size_t i = 0; i < n; i++)
		if (ng_seg_load_uint(a + i * wa, wa) != ng_seg_load_uint(b + i * wb, wb))
			return false;
	return true;
}

/* Significant bits of ng_seg_zigzag(d): about what zstd keeps of a difference. */
static unsigned zbits(uint64_t d)
{
	uint64_t z = ng_seg_zigzag(d);
	return z ? 64 - (unsigned)__builtin_clzll(z) : 0;
}

/* For a time column with a reference: true when its differences from the
 * reference (DIFF) are smaller than its deltas from the previous row
 * (DELTA), judged on every 16th row.  Flow end minus start is the flow's
 * duration: DIFF.  Receive time minus flow end is the export delay, small
 * for most exporters; but where flows are replayed or exported long after
 * they end, receive times in flow_start order are a smoother sequence. */
static bool diff_smaller(const uint8_t *col, const uint8_t *rc, unsigned rw, size_t n)
{
	uint64_t diff = 0, delta = 0;
	for (size_t i = 16; i < n; i += 16) {
		uint64_t v = ng_get_le64(col + i * 8);
		diff += zbits(v - ng_seg_load_uint(rc + i * rw, rw));
		delta += zbits(v - ng_get_le64(col + (i - 1) * 8));
	}
	return diff <= delta;
}

/* ---- RANK: values numbered by frequency -------------------------------- */

/* Columns of fewer rows keep their plain encoding: a dictionary frame of
 * its own costs more than it saves on a few hundred rows. */
#define RANK_MIN_ROWS 1024
/* ...nor do columns with at most this many distinct values among every
 * RANK_SAMPLE_STEP-th row (exporters, observation domains, interfaces:
 * on bench/query's flows RANK saved them 0.03 bytes a flow together, for
 * ~15 ns a row), nor those where most of the sample is distinct
 * (ng_rank_worth) */
#define RANK_SAMPLE_STEP 16
#define RANK_MIN_VARIED 256

/* When column ci keys a MAP column (map_cols) that holds some string,
 * keeps the numbering just built (e->didx, e->dnew) for it; a copy, as
 * the next column reuses them.  Out of memory keeps nothing: try_map then
 * hashes. */
static void keep_rank(ng_seg_encoder *e, size_t ci, size_t n)
{
	const int ks = key_slot(e->fields[ci].id);
	if (ks < 0)
		return;
	/* a string column it decides: all "" (no data) is CONST, no MAP */
	bool named = false;
	for (int m = 0; m < NKEYS && !named; m++) {
		if (map_cols[m].key != e->fields[ci].id)
			continue;
		for (size_t nc = 0; nc < e->nfields && !named; nc++)
			named = e->fields[nc].id == map_cols[m].name && e->colv[nc];
	}
	if (!named)
		return;
	struct keyrank *kr = &e->keyr[ks];
	if (ng_seg_reserve((uint8_t **)&kr->idx, &kr->icap, n * 4) ||
	    ng_seg_reserve((uint8_t **)&kr->val, &kr->vcap, e->rank_k * 4))
		return;
	memcpy(kr->idx, e->didx, n * 4);
	memcpy(kr->val, e->dnew, e->rank_k * 4);
	kr->k = e->rank_k;
	kr->ci = (int)ci;
}

/*
 * Tries the RANK encoding on column ci (u32 integers, or IPv4-mapped
 * addresses as IPv4 numbers): numbers its distinct values by frequency
 * (rank.h) into e->didx, and puts the dictionary's bytes in e->dict: the
 * K values, each as its difference from the one before (mod 2^32),
 * shuffled in 4 planes.  True when at most n/2 of the n values are
 * distinct, so that most rows repeat a value; flow data's addresses and
 * AS numbers are heavy-tailed, and their indexes plus the dictionary come
 * out smaller than the values (bench/query's flows: addresses 3.5 → 2.4
 * bytes a row, AS numbers 1.3 → 0.8).  False otherwise, or when out of
 * memory: the column keeps its plain encoding.
 */
static bool try_rank(ng_seg_encoder *e, size_t ci, size_t n)
{
	const uint8_t *col = e->colv[ci];
	if (n < RANK_MIN_ROWS || ng_seg_reserve((uint8_t **)&e->rv, &e->rvcap, n * 4) ||
	    ng_seg_reserve((uint8_t **)&e->didx, &e->didxcap, n * 4) ||
	    ng_seg_reserve((uint8_t **)&e->dnew, &e->dnewcap, n / 2 * 4))
		return false;
	if (e->fields[ci].type == NG_FT_ADDR)
		for (size_t i = 0; i < n; i++)
			e->rv[i] = __builtin_bswap32(ng_get_le32(col + i * 16 + 12));
	else
		memcpy(e->rv, col, n * 4);
	size_t sample_k;
	if (!ng_rank_worth(&e->rank, e->rv, n, RANK_SAMPLE_STEP, RANK_MIN_VARIED, &sample_k))
		return false;
	/* a heavy-tailed column's distinct values: about 10× its 1/16
	 * sample's (an address column of bench/ingest: 5 800 → 62 000); the
	 * table sized for 12× is a quarter full, with few collisions */
	long k = ng_rank_build(&e->rank, e->rv, n, n / 2, 12 * sample_k, e->didx, e->dnew);
	if (k < 2 || ng_seg_reserve(&e->dict, &e->dictcap, (size_t)k * 4))
		return false;
	uint32_t prev = 0;
	for (size_t j = 0; j < (size_t)k; j++) {
		e->rv[j] = e->dnew[j] - prev;
		prev = e->dnew[j];
	}
	ng_shuffle(e->dict, (const uint8_t *)e->rv, (size_t)k, 4);
	e->rank_k = (size_t)k;
	keep_rank(e, ci, n);
	return true;
}

/* ---- MAP: strings decided by a key column ---------------------------- */

/* Room for k entries in the four MAP arrays.  Returns 0 or -1. */
static int map_reserve(ng_seg_encoder *e, size_t k)
{
	if (ng_seg_reserve((uint8_t **)&e->mkey, &e->mcap[0], k * 8) ||
	    ng_seg_reserve((uint8_t **)&e->mkey2, &e->mcap[1], k * 8) ||
	    ng_seg_reserve((uint8_t **)&e->mid, &e->mcap[2], k * 4) ||
	    ng_seg_reserve((uint8_t **)&e->mid2, &e->mcap[3], k * 4))
		return -1;
	return 0;
}

/* MAP pairs from the key column's RANK numbering (kr, kept by try_rank):
 * each row checks its string against its key's entry of a table of K, in
 * the first-level cache, indexed by the number the row already has.
 * Returns the K pairs (e->mid2 keys, e->mid IDs), or 0 when a key has two
 * strings or out of memory. */
static size_t map_pairs_ranked(ng_seg_encoder *e, const uint8_t *col, size_t n,
                               const struct keyrank *kr, uint32_t limit)
{
	const uint32_t NONE = UINT32_MAX;
	if (map_reserve(e, kr->k))
		return 0;
	uint32_t *tab = e->mid;
	for (size_t j = 0; j < kr->k; j++)
		tab[j] = NONE;
	for (size_t i = 0; i < n; i++) {
		uint32_t id = ng_get_le32(col + i * 4), *t = &tab[kr->idx[i]];
		id = id < limit ? id : 0;
		if (*t != id) {
			if (*t != NONE)
				return 0;
			*t = id;
		}
	}
	memcpy(e->mid2, kr->val, kr->k * 4);
	return kr->k;
}

/* MAP pairs without a numbering of the keys (kv NULL: all zero): a hash
 * table of the keys.  Returns K as map_pairs_ranked. */
static size_t map_pairs_hashed(ng_seg_encoder *e, const uint8_t *col, const uint8_t *kv, size_t n,
                               uint32_t limit)
{
	if (ng_keymap_reset(&e->kmap, 1024))
		return 0;
	uint32_t last_key = 0, last_id = UINT32_MAX; /* runs of one key skip the table */
	for (size_t i = 0; i < n; i++) {
		uint32_t key = kv ? ng_get_le32(kv + i * 4) : 0, id = ng_get_le32(col + i * 4);
		id = id < limit ? id : 0;
		if (key == last_key && id == last_id)
			continue;
		if (ng_keymap_put(&e->kmap, key, id) < 0)
			return 0;
		last_key = key, last_id = id;
	}
	if (map_reserve(e, e->kmap.k))
		return 0;
	ng_keymap_entries(&e->kmap, e->mid2, e->mid);
	return e->kmap.k;
}

/*
 * MAP: when every row of string column ci whose key (u32 column kc) is the
 * same has the same string, builds the dictionary in e->dict: the K
 * distinct keys in ascending order as u32, then each key's string (u8
 * length, bytes) in the same order; e->map_k = K, e->map_len = its bytes.
 * A column of AS names is then one copy of each AS's name instead of an
 * index per row (bench/ingest-enrich: 1.45 → 0.21 bytes a row, and the
 * dearest string columns to encode).  False when some key has two strings
 * (a database reloaded within the segment, interface names from two
 * exporters), or when out of memory: the column stays DICT.  IDs not given
 * out yet are "" as in build_dict().
 */
static bool try_map(ng_seg_encoder *e, size_t ci, size_t n, size_t kc)
{
	const int ks = key_slot(e->fields[kc].id);
	const struct keyrank *kr = ks >= 0 && e->keyr[ks].ci == (int)kc ? &e->keyr[ks] : NULL;
	const uint32_t limit = ng_strtab_count(); /* IDs given out: as build_dict() */
	const size_t k = kr ? map_pairs_ranked(e, e->colv[ci], n, kr, limit)
	                    : map_pairs_hashed(e, e->colv[ci], e->colv[kc], n, limit);
	if (!k)
		return false;
	uint64_t top = 0;
	for (size_t j = 0; j < k; j++) {
		e->mkey[j] = e->mid2[j];
		top = e->mkey[j] > top ? e->mkey[j] : top;
	}
	uint64_t *key = e->mkey, *key2 = e->mkey2;
	uint32_t *id = e->mid, *id2 = e->mid2;
	ng_radix_sort_pairs(&key, &id, &key2, &id2, k, top);
	size_t bytes = 4 * k;
	for (size_t j = 0; j < k; j++)
		bytes += 1 + ng_str_len(id[j]);
	if (ng_seg_reserve(&e->dict, &e->dictcap, bytes))
		return false;
	size_t pos = 4 * k;
	for (size_t j = 0; j < k; j++) {
		if (j + 8 < k) /* the entries are scattered: fetch ahead */
			ng_str_prefetch(id[j + 8]);
		size_t len = ng_str_len(id[j]);
		ng_put_le32(e->dict + 4 * j, (uint32_t)key[j]);
		e->dict[pos] = (uint8_t)len;
		memcpy(e->dict + pos + 1, ng_str(id[j]), len);
		pos += 1 + len;
	}
	e->map_k = k;
	e->map_len = pos;
	return true;
}

/* ---- the choice -------------------------------------------------------- */

/* segment_int.h.  Column ci's encoding from all its n rows, the zone map
 * or constant in `ent`; *ref: DIFF's reference, MAP's key column. */
unsigned ng_seg_choose_encoding(ng_seg_encoder *e, size_t ci, size_t n, uint8_t *ent, int *ref)
{
	const ng_field *f = &e->fields[ci];
	const uint8_t *col = e->colv[ci];
	const unsigned w = f->size;
	*ref = ng_seg_is_int(f->type) ? ng_seg_int_column(e, diff_ref(f->id)) : -1;
	if (*ref >= 0 && !e->colv[*ref])
		*ref = -1; /* an all-zero reference: the column is its own best form */
	if (!col)          /* all zero: the zone map and constant stay zero */
		return NG_ENC_CONST;
	if (ng_seg_is_int(f->type)) {
		uint64_t mn, mx;
		min_max(col, n, w, &mn, &mx);
		ng_put_le64(ent + 64, mn);
		ng_put_le64(ent + 72, mx);
		if (mn == mx)
			return NG_ENC_CONST;
	} else if (f->type == NG_FT_STR) {
		/* CONST only for "" (ID 0): an ID means nothing in another
		 * process, so any other string goes to the dictionary */
		static const uint8_t zero4[4];
		if (all_equal(col, n, w) && !memcmp(col, zero4, 4))
			return NG_ENC_CONST;
		*ref = ng_seg_int_column(e, map_key(f->id));
		if (*ref >= 0 && e->fields[*ref].size == 4 && try_map(e, ci, n, (size_t)*ref))
			return NG_ENC_MAP;
		return NG_ENC_DICT;
	} else if (all_equal(col, n, w)) {
		memcpy(ent + 64, col, w);
		return NG_ENC_CONST;
	}
	if (*ref >= 0) {
		/* times: when the differences are the smaller; counters: only
		 * when equal to the reference (unsampled): differences all zero */
		const ng_field *rf = &e->fields[*ref];
		const uint8_t *rc = e->colv[*ref];
		if (f->type == NG_FT_TIME)
			return diff_smaller(col, rc, rf->size, n) ? NG_ENC_DIFF : NG_ENC_DELTA;
		if (same_values(col, w, rc, rf->size, n))
			return NG_ENC_DIFF;
	}
	if (f->type == NG_FT_TIME)
		return NG_ENC_DELTA;
	if (f->type == NG_FT_ADDR && all_v4(col, n)) {
		/* zone map: the IPv4 range, as numbers (a.b.c.d = a << 24 | …) */
		uint32_t mn = UINT32_MAX, mx = 0;
		for (size_t i = 0; i < n; i++) {
			uint32_t v = __builtin_bswap32(ng_get_le32(col + i * 16 + 12));
			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
		}
		ng_put_le32(ent + 64, mn);
		ng_put_le32(ent + 68, mx);
		return try_rank(e, ci, n) ? NG_ENC_RANK : NG_ENC_V4;
	}
	if (ng_seg_is_int(f->type) && w == 4 && try_rank(e, ci, n))
		return NG_ENC_RANK;
	return NG_ENC_PLAIN;
}
