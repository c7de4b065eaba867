/*
 * classify.h — classification rules (enrich.classify) and configured
 * sampling rates (enrich.sampling) of docs/configuration.md
 * "Classification": what an exporter is (group, role, site, region,
 * tenant) and what each of its interfaces faces (boundary, connectivity,
 * provider), from its address and names.
 *
 * Rules are evaluated once per exporter (address, name) and once per
 * interface (exporter, ifIndex, name, description), when first seen and
 * again when a name changes, never per record: the answers are cached
 * (bounded tables, below), and a record only copies them.  A classifier
 * belongs to one table set (enrich.c) and follows its rule: one thread at
 * a time (the cache is written on a miss).
 */
#ifndef NG_ENRICH_CLASSIFY_H
#define NG_ENRICH_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"

typedef struct ng_classifier ng_classifier;

/* An exporter's answers: attr[NG_CLASS_GROUP .. NG_CLASS_TENANT] (interned
 * strings, 0 none) and the configured sampling rate (0: none) and whether
 * it overrides the exporter's own. */
typedef struct ng_class_exp {
	uint32_t attr[NG_CLASS_FIRST_IF];
	uint32_t rate;
	bool override;
} ng_class_exp;

/* An interface's answers: boundary, connectivity, provider (interned, 0
 * none), attr[k] for NG_CLASS_FIRST_IF + k. */
typedef struct ng_class_if {
	uint32_t attr[NG_CLASS_COUNT - NG_CLASS_FIRST_IF];
} ng_class_if;

/* Compiles c's rules (regcomp REG_EXTENDED; config.c checked them) and
 * sampling rates.  NULL with the cause in err when a pattern does not
 * compile or out of memory; a configuration without rules nor rates gives
 * a classifier that answers nothing (ng_classifier_empty). */
ng_classifier *ng_classifier_new(const ng_config *c, char *err, size_t errlen);
void ng_classifier_free(ng_classifier *k);

/* What the classifier can set: exporter attributes, interface attributes,
 * sampling rates. */
bool ng_classifier_has_exp(const ng_classifier *k);
bool ng_classifier_has_if(const ng_classifier *k);
bool ng_classifier_has_sampling(const ng_classifier *k);
static inline bool ng_classifier_empty(const ng_classifier *k)
{
	return !ng_classifier_has_exp(k) && !ng_classifier_has_if(k) &&
	       !ng_classifier_has_sampling(k);
}

/* The rules evaluated now, uncached: exporter `addr` (16 bytes,
 * IPv4-mapped) named `name` (NULL or "" when it has none) into *out. */
void ng_classify_exporter(const ng_classifier *k, const uint8_t addr[16], const char *name,
                          ng_class_exp *out);
/* ... and an interface of it named `if_name`, described `if_desc` (either
 * NULL or ""). */
void ng_classify_interface(const ng_classifier *k, const uint8_t addr[16], const char *name,
                           const char *if_name, const char *if_desc, ng_class_if *out);

/* Cached: the answers for exporter `addr` named `name` (interned id),
 * evaluated on the first sight of that pair.  Valid until the next call. */
const ng_class_exp *ng_classify_exp_cached(ng_classifier *k, const uint8_t addr[16], uint32_t name);
/* Cached: the answers for interface `ifindex` of exporter `addr` (named
 * `exp_name`) with names `if_name`, `if_desc` (interned ids), evaluated
 * when that combination is first seen.  Valid until the next call. */
const ng_class_if *ng_classify_if_cached(ng_classifier *k, const uint8_t addr[16],
                                         uint32_t exp_name, uint32_t ifindex, uint32_t if_name,
                                         uint32_t if_desc);

/* Evaluations done (cache misses), and cache resets (a table full: it is
 * emptied and filled again, so a sender inventing interfaces costs time,
 * not memory). */
void ng_classifier_stats(const ng_classifier *k, uint64_t *evals, uint64_t *resets);

#endif
