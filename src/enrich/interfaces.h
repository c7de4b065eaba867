/*
 * interfaces.h — interface names learnt from options data (see
 * interfaces.c).  One thread at a time.
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

/* Records exporter/ifIndex → name, description.  Returns 1 when new or
 * changed, 0 when already known so, -1 when out of memory, -2 when it is
 * new and the table holds `max` already (the name is not kept), -3 when
 * the name or description is a string not interned yet and the table has
 * added `max_names` already (the entry keeps what it had). */
int ng_iftab_set(ng_iftab *t, const uint8_t exporter[16], uint32_t index, const char *name,
                 const char *desc);

/* Fills in_if_name / out_if_name of records still without one (the
 * interface's name, else its description). */
void ng_iftab_apply(const ng_iftab *t, ng_flow *flows, size_t n);

void ng_iftab_foreach(const ng_iftab *t,
                      void (*fn)(const uint8_t exporter[16], uint32_t index, const char *name,
                                 const char *desc, void *arg),
                      void *arg);

#endif
