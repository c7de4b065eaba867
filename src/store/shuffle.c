/*
 * shuffle.c — byte planes (the layout and why: shuffle.h).
 *
 * One loop per common width (8, 4, 2 bytes), a plane at a time for the
 * others.  Each call handles a block (16384 rows of one column) or a
 * dictionary, so that the call itself, across files, costs nothing next
 * to its loop.
 */
#include "store/shuffle.h"

#include <string.h>

/* out[k*n + i] = byte k of in[i*w]: each plane holds one byte of every
 * value, so the constant high bytes of small numbers form long runs. */
void ng_shuffle(uint8_t *out, const uint8_t *in, size_t n, unsigned w)
{
	if (w == 1) {
		memcpy(out, in, n);
		return;
	}
	size_t i0 = 0;
	if (w == 8) { /* 8 values at a time through a register transpose */
		for (; i0 + 8 <= n; i0 += 8) {
			uint64_t a[8];
			memcpy(a, in + i0 * 8, 64);
			ng_transpose8(a);
			for (unsigned k = 0; k < 8; k++)
				memcpy(out + (size_t)k * n + i0, &a[k], 8);
		}
	}
	if (w == 4) { /* one pass: each value's bytes to the four planes */
		uint8_t *o0 = out, *o1 = out + n, *o2 = out + 2 * n, *o3 = out + 3 * n;
		for (size_t i = 0; i < n; i++) {
			uint32_t v;
			memcpy(&v, in + i * 4, 4);
			o0[i] = (uint8_t)v;
			o1[i] = (uint8_t)(v >> 8);
			o2[i] = (uint8_t)(v >> 16);
			o3[i] = (uint8_t)(v >> 24);
		}
		return;
	}
	if (w == 2) {
		uint8_t *o0 = out, *o1 = out + n;
		for (size_t i = 0; i < n; i++) {
			uint16_t v;
			memcpy(&v, in + i * 2, 2);
			o0[i] = (uint8_t)v;
			o1[i] = (uint8_t)(v >> 8);
		}
		return;
	}
	for (unsigned k = 0; k < w; k++) {
		uint8_t *o = out + (size_t)k * n;
		const uint8_t *s = in + k;
		for (size_t i = i0; i < n; i++)
			o[i] = s[i * w];
	}
}

/* ng_shuffle() of n DICT entry indexes, all below k: the planes no index
 * reaches (all of them above the first when k <= 256, the top two when
 * k <= 65536) are zeroed without reading the indexes for them. */
void ng_shuffle_index(uint8_t *out, const uint32_t *idx, size_t n, size_t k)
{
	if (k > 65536) {
		ng_shuffle(out, (const uint8_t *)idx, n, 4);
		return;
	}
	if (k <= 256) {
		for (size_t i = 0; i < n; i++)
			out[i] = (uint8_t)idx[i];
		memset(out + n, 0, 3 * n);
		return;
	}
	uint8_t *o1 = out + n;
	for (size_t i = 0; i < n; i++) {
		out[i] = (uint8_t)idx[i];
		o1[i] = (uint8_t)(idx[i] >> 8);
	}
	memset(out + 2 * n, 0, 2 * n);
}

/* The inverse of ng_shuffle(). */
void ng_unshuffle(uint8_t *out, const uint8_t *in, size_t n, unsigned w)
{
	if (w == 1) {
		memcpy(out, in, n);
		return;
	}
	size_t i0 = 0;
	if (w == 8) {
		for (; i0 + 8 <= n; i0 += 8) {
			uint64_t a[8];
			for (unsigned k = 0; k < 8; k++)
				memcpy(&a[k], in + (size_t)k * n + i0, 8);
			ng_transpose8(a);
			memcpy(out + i0 * 8, a, 64);
		}
	}
	if (w == 4) { /* one pass: each value from the four planes (ports,
		       * string indexes); the byte scatter below is 4× slower */
		const uint8_t *p0 = in, *p1 = in + n, *p2 = in + 2 * n, *p3 = in + 3 * n;
		for (size_t i = 0; i < n; i++) {
			uint32_t v = (uint32_t)p0[i] | (uint32_t)p1[i] << 8 |
			             (uint32_t)p2[i] << 16 | (uint32_t)p3[i] << 24;
			memcpy(out + i * 4, &v, 4);
		}
		return;
	}
	if (w == 2) {
		const uint8_t *p0 = in, *p1 = in + n;
		for (size_t i = 0; i < n; i++) {
			uint16_t v = (uint16_t)(p0[i] | p1[i] << 8);
			memcpy(out + i * 2, &v, 2);
		}
		return;
	}
	for (unsigned k = 0; k < w; k++) {
		const uint8_t *s = in + (size_t)k * n;
		uint8_t *o = out + k;
		for (size_t i = i0; i < n; i++)
			o[i * w] = s[i];
	}
}
