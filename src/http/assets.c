/*
 * assets.c — lookup of the embedded dashboard files (assets.h).
 */
#include "http/assets.h"

#include <string.h>

static const ng_asset *set_list;
static size_t set_n;

void ng_http_set_assets(const ng_asset *list, size_t n)
{
	set_list = list;
	set_n = list ? n : 0;
}

/* The table in use: one set at run time, else the generated one. */
static const ng_asset *table(size_t *n)
{
	if (set_list) {
		*n = set_n;
		return set_list;
	}
	if (ng_web_assets && &ng_web_assets_count) {
		*n = ng_web_assets_count;
		return ng_web_assets;
	}
	*n = 0;
	return NULL;
}

size_t ng_http_asset_count(void)
{
	size_t n;
	table(&n);
	return n;
}

const ng_asset *ng_http_find_asset(const char *path)
{
	size_t n;
	const ng_asset *t = table(&n);
	if (!strcmp(path, "/"))
		path = "/index.html";
	for (size_t i = 0; i < n; i++)
		if (t[i].path && !strcmp(t[i].path, path))
			return &t[i];
	return NULL;
}
