/*
 * backend.c — one query, on the backend given (backend.h).
 */
#include "query/backend.h"

int ng_backend_run(const ng_backend *b, const ng_query *q, ng_query_result *res, char *err,
                   size_t errlen)
{
	if (b->ch)
		return ng_query_run_ch(b->ch, &b->sv, q, res, err, errlen);
	return ng_query_run(b->store, q, res, err, errlen);
}
