/*
 * snmp.h — interface names, descriptions and speeds polled from the
 * exporters' SNMP agents (IF-MIB, RFC 2863), on a thread of its own
 * (see snmp.c; docs/enrichment.md "SNMP").
 *
 * The receive threads tell the poller which interfaces flows name
 * (ng_snmp_want, from ng_iftab_take_new once a second) and take what it
 * learnt back into their interface tables (ng_snmp_take).  Both take the
 * poller's mutex for a copy, never while it waits on the network.
 */
#ifndef NG_ENRICH_SNMP_H
#define NG_ENRICH_SNMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/config.h"

/* Defaults of enrich.snmp (docs/configuration.md). */
#define NG_SNMP_REFRESH_S 300       /* an interface polled again after 5 minutes */
#define NG_SNMP_TIMEOUT_MS 1000     /* a request's wait for the reply */
#define NG_SNMP_RETRIES 1           /* tries after the first */
#define NG_SNMP_MAX_EXPORTERS 256   /* agents polled */
#define NG_SNMP_MAX_INTERFACES 4096 /* interfaces polled per agent */

typedef struct ng_snmp ng_snmp;

/* Starts the poller for the exporters of `cfg` that have an snmp: entry
 * (or every exporter seen, with enrich.snmp.default).  `cfg` is borrowed
 * and must outlive the poller.  Returns NULL with err[0] = 0 when nothing
 * is to be polled, NULL with the cause in err[errlen] when the thread
 * cannot start or an agent's address is not an address. */
ng_snmp *ng_snmp_start(const ng_config *cfg, char *err, size_t errlen);

/* Stops the thread (within a request's timeout) and frees.  NULL: no-op. */
void ng_snmp_stop(ng_snmp *p);

/* Whether `exporter`'s agent is polled (for ng_iftab_watch).  `p` is an
 * ng_snmp; lock-free, any thread. */
bool ng_snmp_polled(void *p, const uint8_t exporter[16]);

/* Asks for interfaces ex[i] / index[i], i < n (seen in flows).  An agent
 * past max_exporters, an interface past max_interfaces, is counted and not
 * polled.  Any thread. */
void ng_snmp_want(ng_snmp *p, const uint8_t (*ex)[16], const uint32_t *index, size_t n);

/* Calls fn for every interface whose values changed after generation
 * `since` (0: all known): name (ifName, else ifDescr), description
 * (ifAlias), speed in bits/s (0 unknown).  Strings valid during the call.
 * Returns the current generation, to pass next time.  Any thread; fn runs
 * under the poller's mutex and must not call the poller. */
uint64_t ng_snmp_take(ng_snmp *p, uint64_t since,
                      void (*fn)(void *arg, const uint8_t exporter[16], uint32_t index,
                                 const char *name, const char *desc, uint64_t speed),
                      void *arg);

/* The agents' state as two JSON members into f (docs/api.md
 * "exporters"): "snmp":[{exporter, agent, version, interfaces,
 * interfaces_named, polls, replies, failures, timeouts,
 * interfaces_dropped, last_ok_ms, last_error_ms, last_error, state}] and
 * "snmp_exporters_dropped" (exporters past max_exporters, not polled). */
void ng_snmp_put_json(ng_snmp *p, FILE *f);

/* The interface speed in bits/s from ifSpeed and ifHighSpeed (RFC 2863:
 * ifSpeed is bits/s and stays at 4294967295 past it, ifHighSpeed is
 * 10^6 bits/s).  has_*: the agent answered that column. */
uint64_t ng_snmp_speed(bool has_speed, uint32_t if_speed, bool has_high, uint32_t if_high_speed);

#endif
