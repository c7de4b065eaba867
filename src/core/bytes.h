/*
 * bytes.h — reading and writing fixed-width integers at a byte pointer.
 *
 * The one set of byte readers of nagare.  Two byte orders, because two kinds
 * of bytes cross its boundary:
 *
 *   - big-endian ("network byte order", RFC 1700): every export protocol
 *     (NetFlow v5/v9 RFC 3954, IPFIX RFC 7011 §3 "all fields are in network
 *     byte order", sFlow v5 XDR RFC 4506 §4), the packet headers sFlow
 *     samples carry, pcap-ng's and Ethernet's fields, the decoder's
 *     template state file (decode/state.c);
 *   - host order (ng_get_host_uint): ng_flow's fields and the columns built
 *     from them, in memory only;
 *   - little-endian: nagare's own store formats (store/segment.c, the
 *     counter-sample files of store/counters.c), fixed so that a store moves
 *     between machines.
 *
 * Every function reads or writes exactly the bytes its name says at `p`, with
 * no alignment requirement; the caller has checked that they are there (a
 * decoder checks the length of what it reads before it reads it).  Each is one
 * unaligned load or store and, where the host order differs, one byte swap
 * instruction, so they cost nothing on the hot path.
 */
#ifndef NG_BYTES_H
#define NG_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) ||                                                                    \
    (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__ && __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__)
#error "core/bytes.h needs a little- or big-endian host (GCC/Clang __BYTE_ORDER__)"
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NG_TO_BE16(v) __builtin_bswap16(v)
#define NG_TO_BE32(v) __builtin_bswap32(v)
#define NG_TO_BE64(v) __builtin_bswap64(v)
#define NG_TO_LE16(v) (v)
#define NG_TO_LE32(v) (v)
#define NG_TO_LE64(v) (v)
#else
#define NG_TO_BE16(v) (v)
#define NG_TO_BE32(v) (v)
#define NG_TO_BE64(v) (v)
#define NG_TO_LE16(v) __builtin_bswap16(v)
#define NG_TO_LE32(v) __builtin_bswap32(v)
#define NG_TO_LE64(v) __builtin_bswap64(v)
#endif

/* One reader and one writer per (order, width): a memcpy of the bytes (one
 * unaligned load or store) and a byte swap where the host order differs. */
#define NG_BYTES_RW(order, ORDER, bits)                                                            \
	static inline uint##bits##_t ng_get_##order##bits(const uint8_t *p)                        \
	{                                                                                          \
		uint##bits##_t v;                                                                  \
		memcpy(&v, p, sizeof v);                                                           \
		return (uint##bits##_t)NG_TO_##ORDER##bits(v);                                     \
	}                                                                                          \
	static inline void ng_put_##order##bits(uint8_t *p, uint##bits##_t v)                      \
	{                                                                                          \
		v = (uint##bits##_t)NG_TO_##ORDER##bits(v);                                        \
		memcpy(p, &v, sizeof v);                                                           \
	}

/* ng_get_be16/32/64, ng_put_be16/32/64: big-endian (network order). */
NG_BYTES_RW(be, BE, 16)
NG_BYTES_RW(be, BE, 32)
NG_BYTES_RW(be, BE, 64)
/* ng_get_le16/32/64, ng_put_le16/32/64: little-endian (nagare's files). */
NG_BYTES_RW(le, LE, 16)
NG_BYTES_RW(le, LE, 32)
NG_BYTES_RW(le, LE, 64)

/* The unsigned integer of w bytes (1, 2, 4; anything else: 8) at p in the
 * host's order: a field of an ng_flow record or of a column in memory,
 * which never leave the process in that form. */
static inline uint64_t ng_get_host_uint(const uint8_t *p, unsigned w)
{
	switch (w) {
	case 1: return *p;
	case 2: {
		uint16_t v;
		memcpy(&v, p, 2);
		return v;
	}
	case 4: {
		uint32_t v;
		memcpy(&v, p, 4);
		return v;
	}
	default: {
		uint64_t v;
		memcpy(&v, p, 8);
		return v;
	}
	}
}

/* Unsigned big-endian integer of any width 1..8 (RFC 7011 §6.2 reduced-size
 * encoding: a counter may be sent in fewer bytes than its abstract type).
 * `len` 0 gives 0; the caller keeps `len` at most 8. */
static inline uint64_t ng_get_be_uint(const uint8_t *p, unsigned len)
{
	switch (len) {
	case 1: return p[0];
	case 2: return ng_get_be16(p);
	case 4: return ng_get_be32(p);
	case 8: return ng_get_be64(p);
	default: {
		uint64_t v = 0;
		for (unsigned i = 0; i < len; i++)
			v = v << 8 | p[i];
		return v;
	}
	}
}

#endif
