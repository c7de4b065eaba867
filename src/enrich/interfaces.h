/*
 * interfaces.h — interface names, descriptions and speeds learnt from
 * options data and from SNMP (see interfaces.c).  One thread at a time.
 */
#ifndef NG_ENRICH_INTERFACES_H
#define NG_ENRICH_INTERFACES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/flow.h"

typedef struct ng_iftab ng_iftab;

/* A table of at most `max` interfaces (limits.interfaces) that adds at
 * most `max_names` strings to the process's string table (core/strtab.h,
 * limits.interface_names): interned strings are never freed, so a sender
 * renaming its interfaces without end must not grow it without end.
 * NULL when out of memory. */
ng_iftab *ng_iftab_new(size_t max, size_t max_names);
void ng_iftab_free(ng_iftab *t);

/* Records exporter/ifIndex → name, description from options data.
 * Returns 1 when new or changed, 0 when already known so (or when SNMP
 * named the interface: SNMP wins over options data), -1 when out of
 * memory, -2 when it is new and the table holds `max` already (the name
 * is not kept), -3 when the name or description is a string not interned
 * yet and the table has added `max_names` already (the entry keeps what
 * it had). */
int ng_iftab_set(ng_iftab *t, const uint8_t exporter[16], uint32_t index, const char *name,
                 const char *desc);

/* Records what the exporter's SNMP agent says of ifIndex `index`
 * (enrich/snmp.h): name (ifName, else ifDescr), description (ifAlias),
 * speed in bits/s (0 unknown).  It replaces what options data gave.  Only
 * for an interface the table holds (ng_iftab_watch put it there when a
 * record named it).  Same returns as ng_iftab_set; 0 also when the table
 * does not hold it. */
int ng_iftab_set_snmp(ng_iftab *t, const uint8_t exporter[16], uint32_t index, const char *name,
                      const char *desc, uint64_t speed);

/* SNMP: `polled(arg, exporter)` tells whether an exporter's agent is
 * polled.  From then on ng_iftab_apply keeps an (empty) entry for every
 * interface of such an exporter that a record names, and queues it for
 * ng_iftab_take_new: the interfaces seen in flows are those polled.  The
 * queue holds 4096; what does not fit waits for a later record. */
void ng_iftab_watch(ng_iftab *t, bool (*polled)(void *arg, const uint8_t exporter[16]), void *arg);

/* Up to `max` interfaces queued since the last call, into ex[] / index[]. */
size_t ng_iftab_take_new(ng_iftab *t, uint8_t (*ex)[16], uint32_t *index, size_t max);

/* Fills in_if_name / out_if_name (the interface's name, else its
 * description), in/out_if_desc and in/out_if_speed of records still
 * without one. */
void ng_iftab_apply(ng_iftab *t, ng_flow *flows, size_t n);

/* Calls fn for every interface named (entries still waiting for SNMP
 * are left out); `snmp` tells the source. */
void ng_iftab_foreach(const ng_iftab *t,
                      void (*fn)(const uint8_t exporter[16], uint32_t index, const char *name,
                                 const char *desc, uint64_t speed, bool snmp, void *arg),
                      void *arg);

#endif
