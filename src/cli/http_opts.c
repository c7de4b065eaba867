/* http_opts.c — the HTTP server's flags shared by collect and serve
 * (http_opts.h). */
#include "cli/http_opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/usage.h"

/* A whole number of [1, max] from s into *out.  False when it is not. */
static bool whole(const char *s, unsigned long max, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || end == s || s[0] == '-' || v < 1 || v > max)
		return false;
	*out = (unsigned)v;
	return true;
}

int ng_cli_http_opt(const char *cmd, int c, const char *arg, ng_cli_http *h)
{
	ng_http_limits *l = &h->limits;
	switch (c) {
	case NG_OPT_HTTP_ALLOWED_HOST: {
		size_t n = strlen(h->hosts);
		if (!*arg || n + strlen(arg) + 2 > sizeof h->hosts)
			return ng_usage_fail(
			    cmd, "--http-allowed-host '%s': empty, or too many names", arg);
		snprintf(h->hosts + n, sizeof h->hosts - n, "%s%s", n ? "," : "", arg);
		l->allowed_hosts = h->hosts;
		return 1;
	}
	case NG_OPT_HTTP_MAX_CONNECTIONS:
		if (!whole(arg, 10000, &l->max_connections))
			return ng_usage_fail(cmd, "--http-max-connections '%s': give 1 to 10000",
			                     arg);
		return 1;
	case NG_OPT_HTTP_MAX_PER_CLIENT:
		if (!whole(arg, 10000, &l->max_per_client))
			return ng_usage_fail(cmd, "--http-max-per-client '%s': give 1 to 10000",
			                     arg);
		return 1;
	case NG_OPT_HTTP_IDLE_TIMEOUT:
		if (!whole(arg, 3600, &l->idle_timeout_s))
			return ng_usage_fail(
			    cmd, "--http-idle-timeout '%s': give 1 to 3600 seconds", arg);
		return 1;
	case NG_OPT_HTTP_CACHE: {
		char *end;
		errno = 0;
		unsigned long v = strtoul(arg, &end, 10);
		if (errno || *end || end == arg || arg[0] == '-' || v > 65536)
			return ng_usage_fail(cmd, "--http-cache '%s': give MiB, 0 (none) to 65536",
			                     arg);
		l->cache_mib = (int)v;
		h->cache_given = true;
		return 1;
	}
	case NG_OPT_PTR:
		if (!*arg || strlen(arg) >= sizeof h->ptr)
			return ng_usage_fail(cmd, "--ptr '%s': give off, system or ADDR[:PORT]",
			                     arg);
		snprintf(h->ptr, sizeof h->ptr, "%s", arg);
		l->ptr = h->ptr;
		return 1;
	default: return 0;
	}
}

void ng_cli_http_env(ng_cli_http *h)
{
	const char *v = getenv("NAGARE_PTR");
	if (!h->limits.ptr && v && *v)
		h->limits.ptr = v;
}
