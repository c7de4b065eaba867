/*
 * client.h — ClickHouse's HTTP interface over libcurl.
 *
 * One ng_ch_client is one keep-alive connection (a curl easy handle
 * reused: libcurl keeps the TCP connection open between requests) to one
 * server, used by one thread at a time.  A statement goes in the URL
 * (`?query=`, percent-encoded) when a body follows it (INSERT … FORMAT
 * RowBinary), else as the POST body.  Every request carries
 * wait_end_of_query=1, so the HTTP status is the statement's result (the
 * server buffers the answer until the query ended: ClickHouse docs,
 * "HTTP Interface", "Response buffering").
 *
 * What a reply says (ng_ch_reply): the HTTP status (0 when none came);
 * the exception code the server sent in X-ClickHouse-Exception-Code (its
 * error codes, src/Common/ErrorCodes.cpp) and its text (the body of an
 * error reply); the body of a good one.  And whether the request may have
 * reached the server: a connection refused or a name not resolved is
 * NG_CH_NOT_SENT (nothing was executed); any other failure is
 * NG_CH_UNKNOWN, since ClickHouse may have executed the statement before
 * the answer was lost (a time-out, a reset, a server killed after its
 * commit): the sink checks before sending such an INSERT again
 * (sink/clickhouse.c).
 *
 * Compression: replies come gzip-compressed when the server supports it
 * (enable_http_compression=1 and Accept-Encoding, libcurl decodes);
 * request bodies are gzip-compressed (Content-Encoding: gzip, zlib level
 * 1) when the configuration asks for it: on loopback it costs more CPU
 * than it saves.
 */
#ifndef NG_CH_CLIENT_H
#define NG_CH_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a client connects to; the strings are copied by ng_ch_open. */
typedef struct ng_ch_conn {
	const char *url;      /* http[s]://HOST[:PORT][/DATABASE]; default port 8123 */
	const char *database; /* NULL: the URL's path, else "nagare" */
	const char *user;     /* NULL: "default" (the server's) */
	const char *password; /* NULL: none */
	const char *ca_file;  /* TLS: CA bundle to verify the server; NULL: the system's */
	const char *cert_file, *key_file; /* TLS client certificate and key; NULL: none */
	unsigned timeout_ms;              /* a whole request; 0: 30 000 */
	unsigned connect_timeout_ms;      /* 0: 3 000 */
	bool gzip;                        /* compress request bodies */
	size_t reply_max;                 /* bytes of a reply kept, past which it is an error; 0:
	                                   * NG_CH_REPLY_MAX (a query backend's listing: more) */
	/* NULL, or settings sent with every request as URL parameters
	 * ("insert_distributed_sync=1": ClickHouse docs, "HTTP Interface":
	 * any setting may be a parameter); [a-z0-9_=&] only */
	const char *settings;
} ng_ch_conn;

enum ng_ch_outcome {
	NG_CH_OK = 0,   /* HTTP 200 */
	NG_CH_NOT_SENT, /* no connection: the statement did not run */
	NG_CH_REFUSED,  /* an HTTP error status: the server answered and refused */
	NG_CH_UNKNOWN,  /* no answer after sending: it may have run */
};

/* Bounds on what a reply may hold: a longer body is cut (and reported as
 * an error: nagare's own statements answer a few bytes; the query
 * backend sets ng_ch_conn.reply_max). */
#define NG_CH_REPLY_MAX (1u << 20)
#define NG_CH_ERR_MAX 512

typedef struct ng_ch_reply {
	enum ng_ch_outcome outcome;
	long status;             /* HTTP status; 0 when none */
	int exception;           /* X-ClickHouse-Exception-Code; 0 when none */
	char *body;              /* malloc'd, NUL-terminated; NULL when empty */
	size_t len;              /* bytes of body */
	bool truncated;          /* more than NG_CH_REPLY_MAX came */
	bool timed_out;          /* ng_ch_conn.timeout_ms passed (CURLE_OPERATION_TIMEDOUT),
	                          * or the server's TIMEOUT_EXCEEDED (code 159) */
	char err[NG_CH_ERR_MAX]; /* a sentence for the log when outcome != OK */
} ng_ch_reply;

typedef struct ng_ch_client ng_ch_client;

/* Initialises libcurl once per process (curl_global_init is not
 * thread-safe: the first ng_ch_open calls it under a mutex). */

/* A client for `conn` (nothing is connected yet).  Returns NULL with the
 * cause in err[errlen] (a URL that is not http:// or https://, a database
 * name other than [A-Za-z0-9_], out of memory). */
ng_ch_client *ng_ch_open(const ng_ch_conn *conn, char *err, size_t errlen);
void ng_ch_close(ng_ch_client *c);

/* Whether s is a name nagare writes into SQL as is (a database, a
 * cluster): 1 to 127 bytes of [A-Za-z0-9_]. */
bool ng_ch_name_ok(const char *s);

/* The database name ([A-Za-z0-9_]+, so it can be written into SQL as is)
 * and the URL without its path, for messages. */
const char *ng_ch_database(const ng_ch_client *c);
const char *ng_ch_base_url(const ng_ch_client *c);

/* Runs `sql` (NUL-terminated) with `body` (len bytes; NULL for none) as
 * its data, under the query id `query_id` ([A-Za-z0-9_-], NULL: the
 * server makes one; ClickHouse refuses a query whose id is running).
 * Fills *r (free it with ng_ch_reply_free) and returns 0 when the server
 * answered 200, else -1 (r->outcome, r->err say why). */
int ng_ch_exec(ng_ch_client *c, const char *sql, const void *body, size_t len, const char *query_id,
               ng_ch_reply *r);

/* ng_ch_exec of a statement without data; the reply's body is copied
 * into out[outlen] (NUL-terminated, trailing newline removed) when out
 * is not NULL.  Returns 0, or -1 with the cause in err[errlen]. */
int ng_ch_query(ng_ch_client *c, const char *sql, char *out, size_t outlen, char *err,
                size_t errlen);

void ng_ch_reply_free(ng_ch_reply *r);

/*
 * The error text of a ClickHouse error body, for a log line: "Code: N,
 * e.displayText() = DB::Exception: WHAT" (18.16; later "Code: N.
 * DB::Exception: WHAT. (NAME)"), its lines joined by a space (a
 * Distributed table's failure names the shard on its later lines), cut
 * to out[outlen] (at least 1), bytes outside printable ASCII replaced by
 * '?'.  Reads at most len bytes of body.  Returns out.
 */
char *ng_ch_error_text(const char *body, size_t len, char *out, size_t outlen);

#endif
