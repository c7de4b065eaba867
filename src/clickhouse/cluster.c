/*
 * cluster.c — the servers of a ClickHouse cluster (cluster.h).
 *
 * Discovery, in three steps:
 *   1. the server of nagare's URL lists the cluster's rows
 *      (system.clusters: shard_num, replica_num, host_name, port);
 *   2. each candidate URL (clickhouse.nodes, else every row's host with
 *      the URL's HTTP port, and the URL itself) is asked which row it is:
 *      the row it holds with is_local = 1;
 *   3. every row must have been answered for by a URL.
 * Bytes from the servers (host names, numbers) are checked before they
 * go into a URL or a message: a host name is [A-Za-z0-9.:_-] (and [ ] for
 * an IPv6 address), numbers are decimal below 2^16.
 */
#include "clickhouse/cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

typedef struct row {
	unsigned shard, replica, port;
	char host[128];
} row;

static bool num(const char *s, size_t len, unsigned *out)
{
	unsigned v = 0;
	if (!len || len > 5)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	*out = v;
	return v < 65536;
}

static bool host_ok(const char *s, size_t len)
{
	if (!len || len >= 128)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:_-[]",
		            s[i]))
			return false;
	return true;
}

/* Parses up to max lines "SHARD\tREPLICA[\tHOST\tPORT]" of body into
 * rows; `full`: four fields.  Returns the rows, or -1 for a bad line. */
static int parse_rows(const char *body, bool full, row *rows, int max)
{
	int n = 0;
	for (const char *p = body; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l) {
			if (n == max)
				return -1;
			const char *f[4] = {0};
			size_t fl[4] = {0};
			int k = 0;
			for (const char *q = p; k < 4;) {
				const char *t = memchr(q, '\t', (size_t)(p + l - q));
				f[k] = q;
				fl[k] = t ? (size_t)(t - q) : (size_t)(p + l - q);
				k++;
				if (!t)
					break;
				q = t + 1;
			}
			row *r = &rows[n];
			if (k != (full ? 4 : 2) || !num(f[0], fl[0], &r->shard) ||
			    !num(f[1], fl[1], &r->replica))
				return -1;
			if (full) {
				if (!host_ok(f[2], fl[2]) || !num(f[3], fl[3], &r->port))
					return -1;
				memcpy(r->host, f[2], fl[2]);
				r->host[fl[2]] = 0;
			}
			n++;
		}
		p = e ? e + 1 : NULL;
	}
	return n;
}

/* Asks the server of c which row of cluster `name` it is.  Returns 0 with
 * *shard, *replica; 1 when it says it is none; -1 with the cause. */
static int whoami(ng_ch_client *c, const char *name, unsigned *shard, unsigned *replica, char *err,
                  size_t errlen)
{
	char q[256], out[256];
	snprintf(q, sizeof q,
	         "SELECT shard_num, replica_num FROM system.clusters WHERE cluster = '%s' AND "
	         "is_local FORMAT TabSeparated",
	         name);
	if (ng_ch_query(c, q, out, sizeof out, err, errlen) < 0)
		return -1;
	row r[2];
	int n = parse_rows(out, false, r, 2);
	if (n < 0 || n > 1) {
		snprintf(err, errlen,
		         "ClickHouse at %s: is more than one server of cluster %s (is_local), or "
		         "answered '%.40s'",
		         ng_ch_base_url(c), name, out);
		return -1;
	}
	if (n == 0)
		return 1;
	*shard = r[0].shard;
	*replica = r[0].replica;
	return 0;
}

void ng_ch_cluster_free(ng_ch_cluster *cl)
{
	if (!cl)
		return;
	for (size_t i = 0; i < cl->n; i++)
		ng_ch_close(cl->node[i].c);
	free(cl);
}

bool ng_ch_cluster_first_replica(const ng_ch_cluster *cl, size_t i)
{
	return i == 0 || cl->node[i - 1].shard != cl->node[i].shard;
}

/* scheme://host:port of a base URL into scheme[] and port[]. */
static void split_base(const char *base, char *scheme, size_t sl, char *port, size_t pl)
{
	const char *p = strstr(base, "://"), *colon = strrchr(base, ':');
	snprintf(scheme, sl, "%.*s", p ? (int)(p - base) : 4, p ? base : "http");
	snprintf(port, pl, "%s", colon && colon > p + 1 ? colon + 1 : "8123");
}

ng_ch_cluster *ng_ch_cluster_open(const ng_ch_conn *conn, const char *name, const char *const *urls,
                                  size_t nurls, char *err, size_t errlen)
{
	if (!ng_ch_name_ok(name)) {
		snprintf(err, errlen, "ClickHouse cluster '%s': use letters, digits and '_' only",
		         name);
		return NULL;
	}
	ng_ch_cluster *cl = calloc(1, sizeof *cl);
	row *rows = calloc(NG_CH_CLUSTER_MAX, sizeof *rows);
	ng_ch_client *main = NULL;
	if (!cl || !rows) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	snprintf(cl->name, sizeof cl->name, "%s", name);
	cl->self = (size_t)-1;
	if (!(main = ng_ch_open(conn, err, errlen)))
		goto fail;
	char q[256];
	snprintf(
	    q, sizeof q,
	    "SELECT shard_num, replica_num, host_name, port FROM system.clusters WHERE cluster "
	    "= '%s' ORDER BY shard_num, replica_num FORMAT TabSeparated",
	    name);
	ng_ch_reply r;
	if (ng_ch_exec(main, q, NULL, 0, NULL, &r) < 0) {
		snprintf(err, errlen, "%s", r.err);
		ng_ch_reply_free(&r);
		goto fail;
	}
	int nrows = parse_rows(r.body, true, rows, NG_CH_CLUSTER_MAX);
	ng_ch_reply_free(&r);
	if (nrows <= 0) {
		snprintf(
		    err, errlen,
		    nrows ? "ClickHouse at %s: system.clusters of cluster %s unreadable (or more "
		            "than 64 servers)"
		          : "ClickHouse at %s has no cluster %s (<remote_servers> of its "
		            "configuration: system.clusters)",
		    ng_ch_base_url(main), name);
		goto fail;
	}
	const char *db = ng_ch_database(main);
	char scheme[16], port[16];
	split_base(ng_ch_base_url(main), scheme, sizeof scheme, port, sizeof port);
	/* the candidates: the configured URLs, else each row's host on our
	 * port; nagare's own URL first in either case */
	size_t ncand = 1 + (nurls ? nurls : (size_t)nrows);
	for (size_t k = 0; k < ncand && cl->n < (size_t)nrows; k++) {
		char url[300];
		const char *u = conn->url;
		if (k && nurls)
			u = urls[k - 1];
		else if (k) {
			snprintf(url, sizeof url, "%s://%s:%s", scheme, rows[k - 1].host, port);
			u = url;
		}
		ng_ch_conn cc = *conn;
		cc.url = u;
		cc.database = db;
		char why[NG_CH_ERR_MAX];
		ng_ch_client *c = k ? ng_ch_open(&cc, why, sizeof why) : main;
		unsigned sh = 0, rep = 0;
		int w = c ? whoami(c, name, &sh, &rep, why, sizeof why) : -1;
		if (w != 0) {
			if (w < 0 && nurls && k) { /* a configured URL must answer */
				snprintf(err, errlen, "cluster %s: clickhouse.nodes %s: %s", name,
				         u, why);
				if (c != main)
					ng_ch_close(c);
				goto fail;
			}
			if (w < 0)
				ng_debug("clickhouse: cluster %s: %s: %s", name, u, why);
			if (c != main)
				ng_ch_close(c);
			continue;
		}
		bool dup = false;
		for (size_t i = 0; i < cl->n; i++)
			dup |= cl->node[i].shard == sh && cl->node[i].replica == rep;
		if (dup) {
			if (c != main)
				ng_ch_close(c);
			continue;
		}
		ng_ch_node *nd = &cl->node[cl->n];
		nd->shard = sh;
		nd->replica = rep;
		nd->c = c;
		if (c == main) {
			cl->self = cl->n;
			main = NULL;
		}
		for (int i = 0; i < nrows; i++)
			if (rows[i].shard == sh && rows[i].replica == rep) {
				snprintf(nd->host, sizeof nd->host, "%s", rows[i].host);
				nd->tcp_port = rows[i].port;
			}
		cl->n++;
	}
	if (main && cl->self == (size_t)-1) {
		ng_ch_close(main);
		main = NULL;
	}
	/* every row answered for */
	for (int i = 0; i < nrows; i++) {
		bool found = false;
		for (size_t j = 0; j < cl->n; j++)
			found |= cl->node[j].shard == rows[i].shard &&
			         cl->node[j].replica == rows[i].replica;
		if (!found) {
			snprintf(
			    err, errlen,
			    "cluster %s: no HTTP URL reaches shard %u replica %u (%s, TCP port "
			    "%u): "
			    "is it up? list its URL in clickhouse.nodes when its HTTP port is not "
			    "%s",
			    name, rows[i].shard, rows[i].replica, rows[i].host, rows[i].port, port);
			goto fail;
		}
	}
	/* by shard, then replica: the order of system.clusters */
	for (size_t i = 1; i < cl->n; i++)
		for (size_t j = i; j > 0 && (cl->node[j - 1].shard > cl->node[j].shard ||
		                             (cl->node[j - 1].shard == cl->node[j].shard &&
		                              cl->node[j - 1].replica > cl->node[j].replica));
		     j--) {
			ng_ch_node t = cl->node[j];
			cl->node[j] = cl->node[j - 1];
			cl->node[j - 1] = t;
			if (cl->self == j)
				cl->self = j - 1;
			else if (cl->self == j - 1)
				cl->self = j;
		}
	for (size_t i = 0; i < cl->n; i++)
		cl->shards += ng_ch_cluster_first_replica(cl, i);
	free(rows);
	return cl;
fail:
	ng_ch_close(main);
	free(rows);
	ng_ch_cluster_free(cl);
	return NULL;
}

int ng_ch_cluster_init(ng_ch_cluster *cl, const ng_ch_schema_opts *o, char *err, size_t errlen)
{
	int v = -1;
	for (size_t i = 0; i < cl->n; i++) {
		ng_ch_node *nd = &cl->node[i];
		if (ng_ch_detect(nd->c, &nd->sv, err, errlen) < 0)
			return -1;
		if ((v = ng_ch_schema_init(nd->c, &nd->sv, o, err, errlen)) < 0)
			return -1;
	}
	return v;
}
