/*
 * decode_int.h — state shared by the decoder's files (not a public API).
 *
 * Object graph of one ng_decoder:
 *
 *   exporters (hash by address)      one per datagram source; owns the list
 *      │                             of data sets held for a missing template
 *      └─ domains (hash by address + observation domain / source ID)
 *            counters (ng_exporter_stats), sequence tracking, options state
 *            (sampling rate per sampler ID, default rate, system init time)
 *   templates (hash by domain, version, template ID)
 *            the field list as received plus its compiled form: a flat
 *            array of (length, action) ops walked once per data record
 *   enterprise counters (hash by PEN, IE)
 *
 * Every kind a sender can create is capped (cfg.limits, core/limits.h) and
 * ordered by last use on lists (lru.h), newest first:
 *
 *   d->ex_lru    every exporter        touched per datagram
 *   d->dom_lru   every domain          touched per datagram
 *   ex->doms     the exporter's domains
 *   d->tpl_lru   every template        touched per data set
 *   dom->tpls    the domain's templates
 *   d->held_all  every held data set   in arrival order (oldest last)
 *
 * A cap reached evicts the oldest entry of the list it bounds and counts it
 * (d->lim, NG_LIMIT_COUNTERS); an evicted domain takes its templates and
 * held sets with it and leaves its counters in d->others, so the totals
 * stay exact.
 *
 * Nothing here allocates per record: a record is decoded by walking the ops
 * of its template straight into the ng_flow slot of the output batch.
 */
#ifndef NG_DECODE_INT_H
#define NG_DECODE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bytes.h"
#include "core/hash.h"
#include "decode/decoder.h"
#include "decode/lru.h"

#if defined(__GNUC__)
#define ng_likely(x) __builtin_expect(!!(x), 1)
#define ng_unlikely(x) __builtin_expect(!!(x), 0)
#else
#define ng_likely(x) (x)
#define ng_unlikely(x) (x)
#endif

/* ---- a minimal chained hash table ---- */

struct ng_hnode {
	struct ng_hnode *next;
	uint64_t hash;
};

struct ng_htab {
	struct ng_hnode **b;
	size_t nb; /* power of two */
	size_t n;
};

int ng_htab_init(struct ng_htab *t, size_t nb);
void ng_htab_insert(struct ng_htab *t, struct ng_hnode *e);
void ng_htab_remove(struct ng_htab *t, struct ng_hnode *e);
/* First node with this hash (walk ->next comparing ->hash for the rest). */
static inline struct ng_hnode *ng_htab_first(const struct ng_htab *t, uint64_t h)
{
	return t->b ? t->b[h & (t->nb - 1)] : NULL;
}

/* ---- template ops ---- */

/* What to do with one field of a data record (see ie_registry.c). */
enum ng_action {
	NG_A_SKIP = 0,
	NG_A_BYTES,
	NG_A_PKTS,
	NG_A_BYTES_TOTAL,
	NG_A_PKTS_TOTAL,
	NG_A_OUT_BYTES,
	NG_A_OUT_PKTS,
	NG_A_INIT_BYTES,
	NG_A_INIT_PKTS, /* 231 / 298 (Cisco NSEL, RFC 5103 biflows) */
	NG_A_SRC4,
	NG_A_DST4,
	NG_A_NH4,
	NG_A_BGPNH4,
	NG_A_SRC6,
	NG_A_DST6,
	NG_A_NH6,
	NG_A_BGPNH6,
	NG_A_SRC_PORT,
	NG_A_DST_PORT,
	NG_A_PROTO,
	NG_A_TCP_FLAGS,
	NG_A_TOS,
	NG_A_ICMP_TC, /* 32 / 139: type << 8 | code */
	NG_A_ICMP_TYPE,
	NG_A_ICMP_CODE,
	NG_A_IN_IF,
	NG_A_OUT_IF,
	NG_A_IN_PHYS,
	NG_A_OUT_PHYS,
	NG_A_DIRECTION,
	NG_A_SRC_AS,
	NG_A_DST_AS,
	NG_A_SRC_MASK,
	NG_A_DST_MASK,
	NG_A_SRC_VLAN,
	NG_A_DST_VLAN,
	NG_A_DOT1Q_VLAN,
	NG_A_POST_DOT1Q_VLAN,
	NG_A_MPLS_LABEL,
	NG_A_MPLS_LABEL2,
	NG_A_MPLS_LABEL3,
	NG_A_MPLS_LABEL4,
	NG_A_MPLS_LABEL5,
	NG_A_MPLS_LABEL6,
	NG_A_MPLS_LABEL7,
	NG_A_MPLS_LABEL8,
	NG_A_MPLS_LABEL9,
	NG_A_MPLS_LABEL10,
	NG_A_SRC_MAC,
	NG_A_DST_MAC,
	NG_A_POST_SRC_MAC,
	NG_A_POST_DST_MAC,
	NG_A_IP_VERSION,
	NG_A_START_UPTIME,
	NG_A_END_UPTIME, /* 22 / 21: ms of sysUpTime */
	NG_A_START_SEC,
	NG_A_END_SEC, /* 150 / 151 */
	NG_A_START_MS,
	NG_A_END_MS, /* 152 / 153 */
	NG_A_START_NTP,
	NG_A_END_NTP, /* 154..157 */
	NG_A_START_DELTA_US,
	NG_A_END_DELTA_US,      /* 158 / 159 */
	NG_A_SYSINIT_MS,        /* 160 */
	NG_A_OBS_MS,            /* 323 observationTimeMilliseconds */
	NG_A_SAMPLING_INTERVAL, /* 34 / 50 */
	NG_A_SAMPLER_ID,        /* 48 / 302 */
	NG_A_PKT_INTERVAL,
	NG_A_PKT_SPACE, /* 305 / 306 */
	NG_A_SAMPLING_SIZE,
	NG_A_SAMPLING_POP, /* 309 / 310 */
	NG_A_BASIC_LIST,   /* 291 basicList (RFC 6313 §4.5.1) */
	NG_A_SUB_LIST,     /* 292 / 293 subTemplateList, subTemplateMultiList */
	NG_A_APP_ID,       /* 95 applicationId */
	NG_A_COUNT
};

#define NG_VARLEN 0xffff

struct ng_op {
	uint16_t len; /* bytes, or NG_VARLEN (RFC 7011 §7 length prefix) */
	uint8_t act;  /* enum ng_action */
	uint8_t pad_;
};

/* One field of a template as received. */
struct ng_tfield {
	uint16_t ie; /* without the enterprise bit */
	uint16_t len;
	uint32_t pen; /* 0: IANA */
};

struct ng_domain;

struct ng_tpl {
	struct ng_hnode h;
	struct ng_lru lru;  /* on d->tpl_lru */
	struct ng_lru dlru; /* on dom->tpls */
	size_t cost;        /* bytes counted against the template_bytes limits */
	struct ng_domain *dom;
	uint8_t version; /* 9 or 10 */
	bool options;
	uint16_t id;
	uint16_t scope_count; /* options: scope fields (v9: converted to a count) */
	uint16_t nfields;
	uint16_t nops;
	uint16_t nent;    /* enterprise counters */
	uint32_t min_len; /* minimum record length (variable fields: 1) */
	bool varlen;
	uint32_t epoch; /* dom->epoch when last announced (restart.c) */
	struct ng_tfield *fields;
	struct ng_op *ops;
	uint64_t **ent; /* &counter of each enterprise field */
};

/* ---- sequence tracking ---- */

struct ng_seq {
	uint32_t next;
	bool valid;
	uint8_t version;
};

/* ---- restart detection (restart.c) ---- */

/* What the latest datagram of a domain said (not a late one). */
struct ng_rmark {
	uint64_t received_ms; /* collector clock */
	uint64_t export_ms;   /* v9 UNIX secs, IPFIX export time, × 1000; sFlow 0 */
	uint32_t seq;         /* header sequence number */
	uint32_t uptime_ms;   /* v9 sysUpTime, sFlow uptime; IPFIX 0 */
	uint8_t version;      /* 9, 10, 0x50 sFlow; 0: no mark */
	bool two_streams;     /* two export processes share the domain: no checks */
	uint16_t port;        /* UDP source port (not in the state file) */
	uint16_t prev_port;   /* the mark's port and sequence before the last */
	uint32_t prev_seq;    /* restart, to tell a second process from it */
};

/* The header of the datagram being checked, in the same units. */
struct ng_rhdr {
	uint64_t received_ms, export_ms;
	uint32_t seq, uptime_ms;
	uint16_t port;
	uint8_t version;
	bool has_uptime;
};

/* What ng_restart_check found. */
enum ng_restart_verdict {
	NG_RS_NONE,    /* no restart */
	NG_RS_RESTART, /* the exporter restarted: dom's templates are stale */
	NG_RS_TWO,     /* the last "restart" was a second export process: the
	                * templates are current again, held sets may decode */
};

/* ---- per exporter and observation domain ---- */

#define NG_MAX_SAMPLERS 64

struct ng_sampler {
	uint64_t id;
	uint32_t rate;
};

struct ng_exporter;

struct ng_domain {
	struct ng_hnode h;
	struct ng_lru lru;    /* on d->dom_lru */
	struct ng_lru ex_lru; /* on ex->doms */
	struct ng_lru tpls;   /* its templates, most recently used first */
	size_t tpl_bytes;     /* their cost */
	size_t nheld;         /* held data sets of this domain */
	struct ng_exporter *ex;
	ng_exporter_stats st;
	struct ng_seq seq;
	/* options state (RFC 3954 §6.2, RFC 7011 §4) */
	uint32_t default_rate; /* options data without sampler ID; 0 = none */
	uint64_t sysinit_ms;   /* systemInitTimeMilliseconds; 0 = none */
	unsigned nsamplers;
	struct ng_sampler samplers[NG_MAX_SAMPLERS];
	struct ng_tpl *last_tpl; /* lookup cache, cleared on any template change */
	unsigned ntpl;           /* templates held (limits.templates_per_domain) */
	bool rate_swapped;       /* plausible.h: sent a sampling rate byte-swapped */
	struct ng_rmark mark;    /* restart.c: the latest datagram */
	uint32_t epoch;          /* moves on at each restart: older templates are stale */
	uint32_t session;        /* transport session (ng_datagram.session), 0 for UDP */
	struct ng_apps *apps;    /* apps.c: application names, or NULL */
};

/* The rate of sampler `id` in dom's own table (options data, RFC 3954
 * §6.2 / RFC 7011 §4), 0 when it has none. */
static inline uint32_t ng_sampler_own_rate(const struct ng_domain *dom, uint64_t id)
{
	for (unsigned i = 0; i < dom->nsamplers; i++)
		if (dom->samplers[i].id == id)
			return dom->samplers[i].rate;
	return 0;
}

/* samplers.c: the rate of sampler `id` from the options of dom's
 * exporter's other domains, when they agree on one (Cisco Catalyst 9300
 * sends its sampler table under its own source ID); 0 when none has it or
 * two disagree.  Counts sampler_other_domain in dom when one is found. */
uint32_t ng_sampler_rate_elsewhere(struct ng_domain *dom, uint64_t id);

/* A data set waiting for its template. */
struct ng_held {
	struct ng_held *next; /* the exporter's list, oldest first */
	struct ng_lru all;    /* on d->held_all, newest first */
	struct ng_domain *dom;
	uint64_t held_at; /* decoder clock (time_received) when held */
	uint64_t time_received;
	uint64_t export_ms;
	uint32_t uptime_ms;
	uint16_t tid;
	uint8_t version;
	uint16_t exporter_port;
	size_t len;
	uint8_t data[];
};

struct ng_exporter {
	struct ng_hnode h;
	struct ng_lru lru;  /* on d->ex_lru */
	struct ng_lru doms; /* its domains, most recently seen first */
	size_t ndom;
	uint8_t addr[16];
	struct ng_held *held, **held_tail; /* oldest first */
	size_t held_bytes;
	size_t sessions; /* domains of TCP/SCTP sessions (ng_domain.session != 0) */
};

struct ng_ent {
	struct ng_hnode h;
	uint32_t pen;
	uint16_t ie;
	uint64_t count;
};

struct ng_decoder {
	ng_decoder_config cfg;
	struct ng_htab exporters, domains, templates, ents;
	struct ng_lru ex_lru, dom_lru, tpl_lru, held_all; /* lru.h, newest first */
	size_t tpl_bytes, held_bytes;                     /* all templates, held sets */
	ng_limit_stats lim;       /* evictions (the gauges are filled on reading) */
	ng_exporter_stats others; /* counters of the domains evicted */
	bool loading;             /* ng_decoder_load: append as oldest, refuse when full */
	/* ng_decoder_load_some: the exporters whose entries are loaded */
	bool (*load_keep)(const uint8_t addr[16], void *arg);
	void *load_arg;
	struct ng_domain *last_dom; /* lookup cache */
	uint64_t now;               /* latest time_received seen */
	struct ng_tfield *scratch;  /* NG_MAX_FIELDS fields being parsed */
	struct ng_sflow *sflow;     /* sflow.c state, created on the first sFlow datagram */
	struct ng_ifq *ifq;         /* interfaces.c: names from options data, or NULL */
	uint64_t restarts;          /* restart.c: restarts seen, all domains */
	ng_restart_info rs_last;    /* and the domain of the latest */
	uint32_t session;           /* of the datagram ng_decode is on, else 0 */
	uint64_t app_names;         /* apps.c: names interned (limits.application_names) */
	uint64_t app_ids;           /* apps.c: IDs named, all domains (the same limit) */
};

/* A set is at most 65535 bytes and a field specifier at least 4. */
#define NG_MAX_FIELDS 16384

/* ---- context of the message being decoded ---- */

struct ng_msg {
	ng_decoder *d;
	struct ng_domain *dom;
	ng_flow_batch *out;
	uint64_t time_received; /* collector clock, ms */
	uint64_t export_ms;     /* export time, ms since the epoch */
	uint32_t uptime_ms;     /* v9 sysUpTime; 0 in IPFIX */
	uint8_t version;
	bool has_uptime;
	uint64_t boot_lo;   /* v9: export time - sysUpTime - 1 day (ng_data_set), else 0 */
	bool new_templates; /* a template arrived: replay held sets */
	bool missed;        /* a data set found no template */
	size_t records;     /* data records (incl. options) decoded */
	size_t appended;
};

/* interfaces.c: called for every options record (p: its `len` bytes) */
void ng_options_interfaces(struct ng_msg *m, const struct ng_tpl *t, const uint8_t *p, size_t len);

/* apps.c: the key of an applicationId (IE 95) of `len` bytes at p: its
 * value when it fits in 8 bytes, else a 64-bit hash of the bytes. */
uint64_t ng_app_key(const uint8_t *p, size_t len);

/* apps.c: the interned name (core/strtab.h) dom's options data gave the
 * application of `key`, 0 when none. */
uint32_t ng_app_name(const struct ng_domain *dom, uint64_t key);

/* apps.c: remembers `name` (`len` bytes, NUL-padded or not) for the
 * application of `key` in m->dom; refused (d->lim.applications_refused)
 * past the domain's 4096 IDs or limits.application_names. */
void ng_app_learn(struct ng_msg *m, uint64_t key, const uint8_t *name, size_t len);

/* apps.c: frees dom's application names (and gives their IDs back to
 * limits.application_names). */
void ng_apps_free(ng_decoder *d, struct ng_domain *dom);
void ng_ifq_free(ng_decoder *d);

/* decoder.c */
struct ng_domain *ng_domain_get(ng_decoder *d, const uint8_t addr[16], uint32_t domain);
/* The domain `m` of `e`, first in the recency lists (a datagram of it). */
static inline void ng_domain_touch(ng_decoder *d, struct ng_domain *m)
{
	ng_lru_touch(&d->dom_lru, &m->lru);
	ng_lru_touch(&m->ex->doms, &m->ex_lru);
	ng_lru_touch(&d->ex_lru, &m->ex->lru);
}
void ng_count_error(struct ng_domain *dom, enum ng_decode_error e);

/*
 * ICMP type and code from the destination port, for records that carry
 * none of their own: NetFlow v1/v5/v7 have no field for them, and many
 * v9/IPFIX exporters (softflowd, pmacctd) follow the same convention of
 * type × 256 + code in the destination port (as nfdump reads it).  The
 * port is kept as sent.  ICMP (1) and ICMPv6 (58) only.
 */
static inline void ng_icmp_from_port(ng_flow *f)
{
	if ((f->protocol == 1 || f->protocol == 58) && !f->icmp_type && !f->icmp_code) {
		f->icmp_type = (uint8_t)(f->dst_port >> 8);
		f->icmp_code = (uint8_t)f->dst_port;
	}
}

/* True when the n bytes at p are all zero: the padding exporters put after
 * the last set or record (RFC 7011 §3.3.1, RFC 3954 §5.3). */
static inline bool ng_all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Reads the set (IPFIX) or FlowSet (v9) header at p + *o in a message of
 * `len` bytes, both laid out as ID (2 bytes), length (2 bytes), body.
 * Returns true with the ID, body and body length, and moves *o past the
 * set; false at the end of the message.  A length below 4 would never
 * advance (RFC 7011 §3.3.2, RFC 3954 §5.2–5.3): counted as SET_TOO_SHORT
 * unless the rest is zero padding (PAN-OS pads after the last FlowSet); a
 * set never extends past its message: SET_OVERRUN.  Either ends the walk.
 */
static inline bool ng_next_set(struct ng_domain *dom, const uint8_t *p, size_t len, size_t *o,
                               uint16_t *id, const uint8_t **body, size_t *blen)
{
	if (len - *o < 4)
		return false;
	size_t slen = ng_get_be16(p + *o + 2);
	if (ng_unlikely(slen < 4)) {
		if (!ng_all_zero(p + *o, len - *o))
			ng_count_error(dom, NG_DERR_SET_TOO_SHORT);
		return false;
	}
	if (ng_unlikely(slen > len - *o)) {
		ng_count_error(dom, NG_DERR_SET_OVERRUN);
		return false;
	}
	*id = ng_get_be16(p + *o);
	*body = p + *o + 4;
	*blen = slen - 4;
	*o += slen;
	return true;
}
void ng_domain_seen(struct ng_domain *dom, const ng_datagram *dg, size_t len, uint8_t version);
uint64_t ng_seq_check(struct ng_seq *s, uint32_t seq, uint32_t advance, uint32_t max_gap,
                      uint64_t *lost);
uint64_t *ng_ent_counter(ng_decoder *d, uint32_t pen, uint16_t ie);

/* ie_registry.c */
enum ng_action ng_ie_action(uint16_t ie, uint16_t len, bool *bad_len);

/* templates.c */
/* The template (domain, version, id), marked as just used; NULL when
 * unknown. */
struct ng_tpl *ng_tpl_find(ng_decoder *d, struct ng_domain *dom, uint8_t version, uint16_t id);
/* Drops every template and held set of `dom` (counted as evicted /
 * held_dropped in its counters and d->lim), before the domain goes. */
void ng_domain_drop_state(ng_decoder *d, struct ng_domain *dom);
/* Adds or replaces a template; `fields` is copied.  Returns 0, or a
 * decode error (TEMPLATE_BAD) when the fields cannot form a record. */
int ng_tpl_add(ng_decoder *d, struct ng_domain *dom, uint8_t version, uint16_t id, bool options,
               uint16_t scope_count, const struct ng_tfield *fields, uint16_t nfields);
void ng_tpl_withdraw(ng_decoder *d, struct ng_domain *dom, uint8_t version, uint16_t id);
void ng_tpl_withdraw_all(ng_decoder *d, struct ng_domain *dom, uint8_t version, bool options);
void ng_tpl_free_all(ng_decoder *d);
void ng_held_add(struct ng_msg *m, uint16_t tid, const uint8_t *p, size_t len);
void ng_held_replay(struct ng_msg *m);
void ng_held_expire(ng_decoder *d, uint64_t now);
void ng_held_free_all(ng_decoder *d);
/* Drops the held sets of `dom` (counted as held_dropped). */
void ng_held_drop_domain(ng_decoder *d, struct ng_domain *dom);

/* restart.c: ng_restart_check without its shortcut. */
enum ng_restart_verdict ng_restart_check_all(ng_decoder *d, struct ng_domain *dom,
                                             const struct ng_rhdr *h);

/* v9, sFlow: a sequence number ahead of the mark's by 1 to this many
 * datagrams moved on (the loss bound of netflow_v9.c, sflow.c). */
#define NG_RS_SEQ_ON_MAX 100000u

/*
 * Compares header `h` with dom's mark and moves the mark on.  On a restart
 * (rules in restart.c) counts it and makes dom's templates stale.  Once
 * per datagram, before its sets.  The case of nearly every datagram is
 * decided here without a call: same protocol and port as the mark, export
 * time not back, sequence 1 to NG_RS_SEQ_ON_MAX on (never a restart by
 * any rule of restart.c, whatever the uptime says).
 */
static inline enum ng_restart_verdict ng_restart_check(ng_decoder *d, struct ng_domain *dom,
                                                       const struct ng_rhdr *h)
{
	struct ng_rmark *r = &dom->mark;
	if (ng_likely(r->version == h->version && r->port == h->port &&
	              h->export_ms >= r->export_ms &&
	              (uint32_t)(h->seq - r->seq) - 1u < NG_RS_SEQ_ON_MAX)) {
		r->seq = h->seq;
		r->uptime_ms = h->uptime_ms;
		r->export_ms = h->export_ms;
		r->received_ms = h->received_ms;
		return NG_RS_NONE;
	}
	return ng_restart_check_all(d, dom, h);
}

/* The template (dom, version, id) when it was announced since dom's last
 * restart (ng_tpl_find otherwise); NULL when unknown or stale, so its data
 * is held until the exporter announces it again. */
static inline struct ng_tpl *ng_tpl_current(ng_decoder *d, struct ng_domain *dom, uint8_t version,
                                            uint16_t id)
{
	struct ng_tpl *t = ng_tpl_find(d, dom, version, id);
	return t && ng_likely(t->epoch == dom->epoch) ? t : NULL;
}

/* record.c: decodes the records of one data set with template `t`
 * (RFC 3954 §5.3, RFC 7011 §3.3.2). */
void ng_data_set(struct ng_msg *m, struct ng_tpl *t, const uint8_t *p, size_t len);

/* state.c: loads a whole state file image (see ng_decoder_load). */
int ng_decoder_load_mem(ng_decoder *d, const uint8_t *p, size_t n);

/* netflow_v5.c, netflow_v9.c, ipfix.c */
size_t ng_decode_v5(ng_decoder *d, const ng_datagram *dg, ng_flow_batch *out);
size_t ng_decode_v9(ng_decoder *d, const ng_datagram *dg, ng_flow_batch *out);
size_t ng_decode_ipfix(ng_decoder *d, const ng_datagram *dg, ng_flow_batch *out);

#endif
