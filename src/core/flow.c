/* flow.c — the flow record batch (see flow.h). */
#include "core/flow.h"

#include <stdlib.h>
#include <string.h>

ng_flow *ng_flow_batch_push(ng_flow_batch *b)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		ng_flow *f = realloc(b->flows, cap * sizeof *f);
		if (!f)
			return NULL;
		b->flows = f;
		b->cap = cap;
	}
	ng_flow *r = &b->flows[b->n++];
	memset(r, 0, sizeof *r);
	r->direction = NG_DIR_UNKNOWN;
	return r;
}

void ng_flow_batch_clear(ng_flow_batch *b)
{
	b->n = 0;
}

void ng_flow_batch_free(ng_flow_batch *b)
{
	free(b->flows);
	b->flows = NULL;
	b->n = b->cap = 0;
}
