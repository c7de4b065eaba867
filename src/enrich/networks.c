/*
 * networks.c — longest-prefix match of addresses to named networks.
 *
 * Two binary tries, one for IPv4 (32 bits) and one for IPv6 (128 bits), so
 * an IPv4 address does not descend the 96 bits of its ::ffff:0:0/96
 * mapping.  Nodes live in one array (indices, not pointers: the trie is
 * built once and then only read).  A lookup also reports the depth where
 * the descent stopped: every address sharing those leading bits gets the
 * same answer, which lets the caller cache the answer for that prefix.
 *
 * Built-in classes (their names are the class):
 *   private        10/8, 172.16/12, 192.168/16         RFC 1918
 *   shared         100.64/10                           RFC 6598
 *   loopback       127/8, ::1/128                      RFC 1122 §3.2.1.3, RFC 4291
 *   link-local     169.254/16, fe80::/10               RFC 3927, RFC 4291
 *   multicast      224/4, ff00::/8                     RFC 5771, RFC 4291
 *   documentation  192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32
 *                                                      RFC 5737, RFC 3849
 *   ula            fc00::/7                            RFC 4193
 */
#include <stdlib.h>
#include <string.h>

#include "core/addr.h"
#include "core/strtab.h"
#include "enrich/enrich_int.h"

struct node {
	uint32_t child[2]; /* 0: none (node 0 is a root, never a child) */
	uint32_t val;      /* index into vals, 0: none */
};

struct ng_nettrie {
	struct node *nodes; /* [0] IPv4 root, [1] IPv6 root */
	size_t n, cap;
	ng_net_val *vals; /* [0] unused */
	size_t nvals, capvals;
	/* IPv4 first octets under which some prefix ends (bit per octet): an
	 * address outside them takes the root's value at depth 8 without a
	 * descent (most public addresses: no class, no configured network) */
	uint64_t busy4[4];
};

static const uint8_t v4pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static inline unsigned bit(const uint8_t *a, unsigned i)
{
	return (a[i / 8] >> (7 - i % 8)) & 1;
}

static uint32_t new_node(ng_nettrie *t)
{
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 64;
		struct node *n = realloc(t->nodes, nc * sizeof *n);
		if (!n)
			return 0;
		t->nodes = n;
		t->cap = nc;
	}
	memset(&t->nodes[t->n], 0, sizeof t->nodes[0]);
	return (uint32_t)t->n++;
}

int ng_nettrie_add(ng_nettrie *t, const uint8_t net[16], unsigned plen, ng_net_val v)
{
	bool v4 = plen >= 96 && !memcmp(net, v4pre, 12);
	const uint8_t *bits = v4 ? net + 12 : net;
	unsigned len = v4 ? plen - 96 : plen;
	uint32_t cur = v4 ? 0 : 1;
	if (v4 && len > 0) { /* the first octets the prefix covers */
		unsigned lo = bits[0] & (len >= 8 ? 0xff : 0xff << (8 - len) & 0xff);
		unsigned n = len >= 8 ? 1 : 1u << (8 - len);
		for (unsigned o = lo; o < lo + n; o++)
			t->busy4[o / 64] |= UINT64_C(1) << (o % 64);
	}
	for (unsigned i = 0; i < len; i++) {
		unsigned b = bit(bits, i);
		if (!t->nodes[cur].child[b]) {
			uint32_t n = new_node(t);
			if (!n)
				return -1;
			t->nodes[cur].child[b] = n;
		}
		cur = t->nodes[cur].child[b];
	}
	if (!t->nodes[cur].val) {
		if (t->nvals == t->capvals) {
			size_t nc = t->capvals * 2;
			ng_net_val *n = realloc(t->vals, nc * sizeof *n);
			if (!n)
				return -1;
			t->vals = n;
			t->capvals = nc;
		}
		t->nodes[cur].val = (uint32_t)t->nvals++;
	}
	t->vals[t->nodes[cur].val] = v;
	return 0;
}

ng_nettrie *ng_nettrie_new(void)
{
	static const struct {
		const char *prefix, *cls;
	} builtin[] = {
	    {"10.0.0.0/8", "private"},
	    {"172.16.0.0/12", "private"},
	    {"192.168.0.0/16", "private"},
	    {"100.64.0.0/10", "shared"},
	    {"127.0.0.0/8", "loopback"},
	    {"::1/128", "loopback"},
	    {"169.254.0.0/16", "link-local"},
	    {"fe80::/10", "link-local"},
	    {"224.0.0.0/4", "multicast"},
	    {"ff00::/8", "multicast"},
	    {"192.0.2.0/24", "documentation"},
	    {"198.51.100.0/24", "documentation"},
	    {"203.0.113.0/24", "documentation"},
	    {"2001:db8::/32", "documentation"},
	    {"fc00::/7", "ula"},
	};
	ng_nettrie *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->capvals = 32;
	t->vals = calloc(t->capvals, sizeof *t->vals);
	t->nvals = 1;
	if (!t->vals || new_node(t) != 0 || new_node(t) != 1)
		goto fail;
	for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) {
		uint8_t net[16];
		unsigned plen;
		if (!ng_prefix_parse(builtin[i].prefix, net, &plen))
			goto fail;
		ng_net_val v = {.name = ng_intern_cstr(builtin[i].cls)};
		if (ng_nettrie_add(t, net, plen, v) < 0)
			goto fail;
	}
	return t;
fail:
	ng_nettrie_free(t);
	return NULL;
}

uint32_t ng_nettrie_lookup(const ng_nettrie *t, const uint8_t a[16], unsigned *depth)
{
	bool v4 = !memcmp(a, v4pre, 12);
	const uint8_t *bits = v4 ? a + 12 : a;
	unsigned len = v4 ? 32 : 128, i = 0;
	uint32_t cur = v4 ? 0 : 1, best = t->nodes[cur].val;
	/* No prefix ends under this first octet: the descent could only meet
	 * nodes without a value (on the way to other octets' prefixes), and
	 * the answer holds over the whole /8 (a longer prefix than the descent
	 * would give: still right for the caller's cache).  A 0/0 prefix
	 * (len 0) sets no octet busy and is the root's value. */
	if (v4 && !(t->busy4[bits[0] / 64] >> (bits[0] % 64) & 1)) {
		*depth = 8;
		return best;
	}
	for (; i < len; i++) {
		uint32_t nx = t->nodes[cur].child[bit(bits, i)];
		if (!nx)
			break;
		cur = nx;
		if (t->nodes[cur].val)
			best = t->nodes[cur].val;
	}
	*depth = i;
	return best;
}

const ng_net_val *ng_nettrie_val(const ng_nettrie *t, uint32_t idx)
{
	return &t->vals[idx];
}

void ng_nettrie_free(ng_nettrie *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->vals);
	free(t);
}
