/*
 * ch_conn.h — the ClickHouse a command talks to: its --clickhouse URL,
 * else the configuration's clickhouse: section (docs/clickhouse.md), the
 * same way for collect, `clickhouse init`, query and serve.
 */
#ifndef NG_CLI_CH_CONN_H
#define NG_CLI_CH_CONN_H

#include "clickhouse/client.h"
#include "core/config.h"

/*
 * Fills *out from `url` (a command's --clickhouse; NULL: h->url) and the
 * rest of h (database, user, password, TLS files, time-out capped at
 * 10 minutes, compression).  The strings are borrowed from url and h.
 * Returns 1 when a URL is given, 0 when none is (*out zeroed), or -1
 * after the usage message of command `cmd` (exit status 2) when the URL
 * is not http:// or https://.
 */
int ng_cli_ch_conn(const char *cmd, const char *url, const ng_cfg_clickhouse *h, ng_ch_conn *out);

#endif
