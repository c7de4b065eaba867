/*
 * ch_conn.c — a command's ClickHouse connection (ch_conn.h).
 */
#include "cli/ch_conn.h"

#include <string.h>

#include "cli/usage.h"

int ng_cli_ch_conn(const char *cmd, const char *url, const ng_cfg_clickhouse *h, ng_ch_conn *out)
{
	memset(out, 0, sizeof *out);
	if (!url)
		url = h->url;
	if (!url)
		return 0;
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		ng_usage_fail(cmd,
		              "--clickhouse '%s': give the HTTP interface's URL, such as "
		              "http://127.0.0.1:8123/nagare",
		              url);
		return -1;
	}
	*out =
	    (ng_ch_conn){.url = url,
	                 .database = h->database,
	                 .user = h->user,
	                 .password = h->password,
	                 .ca_file = h->ca_file,
	                 .cert_file = h->cert_file,
	                 .key_file = h->key_file,
	                 .timeout_ms = (unsigned)(h->timeout_ms > 600000 ? 600000 : h->timeout_ms),
	                 .gzip = h->gzip};
	return 1;
}
