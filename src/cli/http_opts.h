/*
 * http_opts.h — the HTTP server's flags shared by `collect` and `serve`
 * (docs/security.md "HTTP"):
 *
 *   --http-allowed-host NAME    a name also answered as Host (repeatable)
 *   --http-max-connections N    open connections at most (default 256)
 *   --http-max-per-client N     of one client address (default 32)
 *   --http-idle-timeout SECS    idle connections closed after (default 10)
 *   --http-cache MIB            the query cache (store/framecache.h; default: an
 *                               eighth of the memory, 64 MiB to 4 GiB)
 *   --ptr off|system|ADDR[:PORT]  host names (query/ptr.h; default
 *                               $NAGARE_PTR, else off)
 */
#ifndef NG_CLI_HTTP_OPTS_H
#define NG_CLI_HTTP_OPTS_H

#include <getopt.h>

#include "http/http.h"

/* getopt_long values of the flags: above any a command uses itself. */
enum {
	NG_OPT_HTTP_ALLOWED_HOST = 1000,
	NG_OPT_HTTP_MAX_CONNECTIONS,
	NG_OPT_HTTP_MAX_PER_CLIENT,
	NG_OPT_HTTP_IDLE_TIMEOUT,
	NG_OPT_HTTP_CACHE,
	NG_OPT_PTR,
};

/* The struct option entries of the flags, for a command's table. */
/* clang-format off */
#define NG_HTTP_LONG_OPTS \
	{"http-allowed-host", required_argument, NULL, NG_OPT_HTTP_ALLOWED_HOST}, \
	{"http-max-connections", required_argument, NULL, NG_OPT_HTTP_MAX_CONNECTIONS}, \
	{"http-max-per-client", required_argument, NULL, NG_OPT_HTTP_MAX_PER_CLIENT}, \
	{"http-idle-timeout", required_argument, NULL, NG_OPT_HTTP_IDLE_TIMEOUT}, \
	{"http-cache", required_argument, NULL, NG_OPT_HTTP_CACHE}, \
	{"ptr", required_argument, NULL, NG_OPT_PTR}

/* Their lines of a command's --help. */
#define NG_HTTP_HELP \
	"      --http-allowed-host NAME  also answer requests for Host NAME (repeatable);\n" \
	"                          loopback names and addresses are always answered\n" \
	"      --http-max-connections N  open connections at most (default 256)\n" \
	"      --http-max-per-client N   of one client address (default 32)\n" \
	"      --http-idle-timeout SECS  close connections idle this long (default 10)\n" \
	"      --http-cache MIB    inflated column blocks kept between queries\n" \
	"                          (default: an eighth of the memory, 64 to 4096; 0: none)\n" \
	"      --ptr off|system|ADDR[:PORT]  host names of addresses in the API's\n" \
	"                          answers (resolve=1) and pages: off (default: a DNS\n" \
	"                          server would learn which addresses are looked at),\n" \
	"                          the system's resolvers, or this IPv4 DNS server\n" \
	"                          (default: $NAGARE_PTR, else off)\n"
/* clang-format on */

/* The flags as given: hosts joined with commas. */
typedef struct ng_cli_http {
	char hosts[1024];
	char ptr[128];         /* --ptr; limits.ptr points here or to $NAGARE_PTR */
	ng_http_limits limits; /* allowed_hosts points into hosts when any */
	bool cache_given;      /* --http-cache: limits.cache_mib is the flag's */
} ng_cli_http;

/* Takes one of the flags above (c, its getopt value; arg, its value)
 * into *h.  Returns 1 when c was one of them, 0 when not, or 2 (the
 * usage error printed for command `cmd`). */
int ng_cli_http_opt(const char *cmd, int c, const char *arg, ng_cli_http *h);

/* After the flags: $NAGARE_PTR when --ptr was not given. */
void ng_cli_http_env(ng_cli_http *h);

#endif
