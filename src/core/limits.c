/*
 * limits.c — the table of NG_LIMITS (core/limits.h) for the code that
 * walks it: the configuration reader, the defaults, the docs check.
 */
#include "core/limits.h"

#include <string.h>

const ng_limit_info ng_limit_infos[NG_LIMIT_COUNT] = {
#define X(field, key, def, doc) {key, def, offsetof(ng_limits, field), doc},
    NG_LIMITS(X)
#undef X
};

void ng_limits_defaults(ng_limits *l)
{
	memset(l, 0, sizeof *l);
	ng_limits_fill(l);
}

void ng_limits_fill(ng_limits *l)
{
	for (int i = 0; i < NG_LIMIT_COUNT; i++) {
		uint64_t *v = (uint64_t *)(void *)((char *)l + ng_limit_infos[i].offset);
		if (!*v)
			*v = ng_limit_infos[i].def;
	}
}
