/*
 * test_filter_gen.h — random filters for the query tests: terms from the
 * test's own generator joined by and/or, with "not" here and there,
 * nested to a depth.  Header-only.
 */
#ifndef NG_TEST_FILTER_GEN_H
#define NG_TEST_FILTER_GEN_H

#include <stdint.h>
#include <stdio.h>

/* A filter of terms from term(buf, len) into b[len], nested up to `depth`
 * levels; rnd gives the choices.  A filter too long for b is cut (it then
 * fails to parse, which the caller sees). */
static inline void ts_random_filter(char *b, size_t len, unsigned depth,
                                    void (*term)(char *, size_t), uint64_t (*rnd)(void))
{
	if (depth == 0 || rnd() % 3 == 0) {
		char t[128];
		term(t, sizeof t);
		snprintf(b, len, "%s%s", rnd() % 4 == 0 ? "not " : "", t);
		return;
	}
	char l[512], r[512];
	ts_random_filter(l, sizeof l, depth - 1, term, rnd);
	ts_random_filter(r, sizeof r, depth - 1, term, rnd);
	if (snprintf(b, len, "%s(%s) %s (%s)", rnd() % 5 == 0 ? "not " : "", l,
	             rnd() % 2 ? "and" : "or", r) >= (int)len)
		b[len - 1] = 0;
}

#endif
