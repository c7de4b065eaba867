/*
 * ch_where.c — prints the ClickHouse WHERE expression nagare compiles a
 * filter to (query/filter_sql.h), for tests/e2e/test_clickhouse_filter.sh
 * until `nagare query --clickhouse` exists (issue 17 part 3).
 *
 *   ch_where [--ipv6] FILTER...
 *   ch_where --literal HEX      the string literal of the bytes HEX
 *   ch_where --top KEYS ORDER N FILTER...   the top-N statement over
 *                               nagare.flows (query/top_sql.h); KEYS as
 *                               -s takes them: dstport or srcas,dstport
 *
 * The words are joined with spaces into the filter, as `nagare query`
 * does.  --ipv6: for a server with the IPv6 type (19.3 on), else 18.16's
 * FixedString(16).  Exit status: 0, 1 the filter does not compile, 2 it
 * does not parse (the parser's message on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/field.h"
#include "query/filter_sql.h"
#include "query/top_sql.h"

int main(int argc, char **argv)
{
	ng_ch_server sv = {0};
	int i = 1;
	if (argc == 3 && !strcmp(argv[1], "--literal")) {
		/* the bytes of HEX (two digits each) as ng_ch_sql_str writes them */
		size_t n = strlen(argv[2]) / 2;
		unsigned char *b = malloc(n + 1);
		for (size_t k = 0; b && k < n; k++) {
			unsigned v;
			if (sscanf(argv[2] + 2 * k, "%2x", &v) != 1)
				return 2;
			b[k] = (unsigned char)v;
		}
		ng_ch_sql q = {0};
		ng_ch_sql_str(&q, b, n);
		printf("%s\n", q.s ? q.s : "");
		ng_ch_sql_free(&q);
		free(b);
		return 0;
	}
	const char *top = NULL, *order = NULL;
	size_t limit = 0;
	if (argc > 4 && !strcmp(argv[1], "--top")) {
		top = argv[2];
		order = argv[3];
		limit = strtoul(argv[4], NULL, 10);
		i = 5;
	}
	if (i < argc && !strcmp(argv[i], "--ipv6")) {
		sv.ipv6 = true;
		i++;
	}
	size_t len = 1;
	for (int k = i; k < argc; k++)
		len += strlen(argv[k]) + 1;
	char *text = calloc(1, len);
	if (!text)
		return 1;
	for (int k = i; k < argc; k++) {
		if (k > i)
			strcat(text, " ");
		strcat(text, argv[k]);
	}
	char err[1024];
	size_t col = 0;
	ng_filter *f = ng_filter_parse(text, err, sizeof err, &col);
	if (!f) {
		fprintf(stderr, "ch_where: bad filter at column %zu: %s\n", col + 1, err);
		free(text);
		return 2;
	}
	ng_ch_sql q = {0};
	int rc;
	if (top) {
		enum ng_field_id keys[4];
		size_t nkeys = 0;
		char names[256];
		snprintf(names, sizeof names, "%s", top);
		rc = 0;
		for (char *k = strtok(names, ","); k && rc == 0; k = strtok(NULL, ",")) {
			const ng_field *fd = ng_field_by_name(k);
			if (!fd || nkeys == 4) {
				snprintf(err, sizeof err, "no key '%s'", k);
				rc = -1;
			} else {
				keys[nkeys++] = fd->id;
			}
		}
		if (rc == 0)
			rc = ng_top_sql("nagare", keys, nkeys, order, limit, f, &sv, &q, err,
			                sizeof err);
	} else {
		rc = ng_filter_sql(f, &sv, NULL, "flows", &q, err, sizeof err);
	}
	if (rc < 0)
		fprintf(stderr, "ch_where: %s\n", err);
	else
		printf("%s\n", q.s);
	ng_ch_sql_free(&q);
	ng_filter_free(f);
	free(text);
	return rc < 0 ? 1 : 0;
}
