/*
 * test_rng.h — the tests' pseudo-random numbers: xorshift64 (Marsaglia,
 * "Xorshift RNGs", 2003), the same sequence from the same seed on every
 * run, so a failing case can be replayed.  Header-only.
 */
#ifndef NG_TEST_RNG_H
#define NG_TEST_RNG_H

#include <stdint.h>

/* The next value of the generator whose state (never 0) is *s. */
static inline uint64_t ts_xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#endif
