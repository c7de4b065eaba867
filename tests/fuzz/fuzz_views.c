/*
 * fuzz_views.c — libFuzzer target for the saved views' parsers
 * (http/views.c): the views file and the POST body.
 *
 * Whatever the bytes: no crash or leak; a file that parses holds at most
 * NG_VIEWS_MAX views of valid names and states, and writes back to text
 * that parses to the same views; a body that parses gives a valid name
 * and state.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/views.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The file text of *v (what ng_views_save writes), malloc'd. */
static char *text_of(const ng_views *v, size_t *len)
{
	char *t = NULL;
	FILE *m = open_memstream(&t, len);
	if (!m)
		abort();
	fprintf(m, "%s\n", NG_VIEWS_MAGIC);
	for (size_t i = 0; i < v->n; i++)
		fprintf(m, "%s\t%s\n", v->v[i].name, v->v[i].state);
	fclose(m);
	return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static ng_views v, w;
	char err[256];
	if (ng_views_parse((const char *)data, size, &v, err, sizeof err) == 0) {
		if (v.n > NG_VIEWS_MAX)
			abort();
		size_t len;
		char *t = text_of(&v, &len);
		if (ng_views_parse(t, len, &w, err, sizeof err) || w.n != v.n)
			abort();
		for (size_t i = 0; i < v.n; i++)
			if (strcmp(v.v[i].name, w.v[i].name) ||
			    strcmp(v.v[i].state, w.v[i].state) ||
			    !ng_view_name_ok(v.v[i].name, strlen(v.v[i].name)) ||
			    !ng_view_state_ok(v.v[i].state, strlen(v.v[i].state)))
				abort();
		free(t);
	}
	ng_views_free(&v);
	ng_views_free(&w);
	char name[NG_VIEW_NAME_MAX + 1], *state;
	unsigned rc = ng_views_body((const char *)data, size, name, &state, err, sizeof err);
	if (!rc) {
		if (!ng_view_name_ok(name, strlen(name)) || !ng_view_state_ok(state, strlen(state)))
			abort();
		free(state);
	} else if (rc != 400 && rc != 413) {
		abort();
	}
	return 0;
}
