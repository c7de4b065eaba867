/*
 * ptr.h — host names (DNS PTR records) of the addresses a query shows,
 * looked up at display time (see ptr.c; docs/query.md "Host names").
 *
 * Never on the ingest path: the API (resolve=1) and `nagare query
 * --resolve` ask for the addresses of their answer, with a time budget;
 * what is not known within it is shown as the address.
 */
#ifndef NG_QUERY_PTR_H
#define NG_QUERY_PTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "query/query.h"

#define NG_PTR_NAME_MAX 256 /* a name's bytes with the NUL (RFC 1035: 253 + dots) */
#define NG_PTR_WORKERS 4    /* lookups in flight at once */
#define NG_PTR_RATE 100     /* lookups started per second at most */
#define NG_PTR_CACHE 8192   /* names (and misses) cached */
#define NG_PTR_QUEUE 1024   /* lookups waiting at most; more stay addresses */
#define NG_PTR_TIMEOUT_MS 2000
#define NG_PTR_BUDGET_MS 500 /* default time a request waits for names */
#define NG_PTR_BUDGET_MAX_MS 5000
#define NG_PTR_NEG_TTL_S 300   /* NXDOMAIN or no PTR: cached this long */
#define NG_PTR_FAIL_TTL_S 30   /* no answer (timeout, SERVFAIL): retried after */
#define NG_PTR_MAX_TTL_S 86400 /* a record's TTL is cut to a day */

typedef struct ng_ptr ng_ptr;

/* server: "system" (or NULL): the system's resolvers (/etc/resolv.conf,
 * res_ninit); or "ADDR" / "ADDR:PORT", an IPv4 DNS server (port 53 by
 * default).  Returns NULL with the cause in err[errlen] when the server
 * is not an address or the threads cannot start. */
ng_ptr *ng_ptr_new(const char *server, char *err, size_t errlen);
/* Stops the lookup threads (a lookup in flight may take its timeout) and
 * frees.  NULL: no-op. */
void ng_ptr_free(ng_ptr *p);

/* The names of addrs[0..n) (IPv4-mapped or IPv6, 16 bytes) into names[i]
 * ("" when not known): from the cache, else looked up, waiting at most
 * budget_ms in all (lookups still in flight then go on and fill the cache
 * for the next request).  Returns how many have a name.  Thread-safe. */
size_t ng_ptr_resolve(ng_ptr *p, const uint8_t (*addrs)[16], size_t n, unsigned budget_ms,
                      char (*names)[NG_PTR_NAME_MAX]);

/* Counters since start: lookups sent, answered with a name, failed (no
 * answer, SERVFAIL), refused (the queue full). */
void ng_ptr_counts(ng_ptr *p, uint64_t *sent, uint64_t *named, uint64_t *failed, uint64_t *refused);

/*
 * The first PTR record's name and TTL in the DNS message msg[len] (an
 * answer to a PTR question, RFC 1035 §4.1), into name[namelen] (dotted,
 * no trailing dot; characters outside letters, digits, '-', '_' and '.'
 * as '?') and *ttl (seconds).  Returns 1 with a name, 0 when the answer
 * holds none, -1 when the message is malformed (short, a bad label, a
 * compression loop).  The parser of bytes from the network: fuzzed
 * (tests/fuzz/fuzz_ptr.c).
 */
int ng_ptr_parse(const uint8_t *msg, size_t len, char *name, size_t namelen, uint32_t *ttl);

/* The distinct whole addresses of a result: its rows' address keys
 * (not prefixes), or its flows' source and destination, into out[0..max).
 * Returns how many. */
size_t ng_ptr_addresses(const ng_query *q, const ng_query_result *res, uint8_t (*out)[16],
                        size_t max);

/* "names":{"ADDR":"NAME",...} of the n addresses that have a name (the
 * JSON member, no surrounding braces or comma). */
void ng_ptr_put_json(FILE *f, const uint8_t (*addrs)[16], char (*names)[NG_PTR_NAME_MAX], size_t n);

#endif
