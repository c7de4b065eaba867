/*
 * config.c — the YAML configuration file (see config.h).
 *
 * libyaml's document API loads the whole file as a node graph (files are
 * small); the walk below checks each key against what it expects.
 */
#include "core/config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <regex.h>
#include <yaml.h>

#include "core/addr.h"
#include "core/timefmt.h"

struct ctx {
	yaml_document_t doc;
	const char *path;
	char *err;
	size_t errlen;
};

static int fail(struct ctx *x, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct ctx *x, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[768]; /* the longest: limits: unknown key, with every key */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(x->err, x->errlen, "%s:%zu: %s", x->path, n ? n->start_mark.line + 1 : 0, msg);
	return -1;
}

int ng_config_set(char **dst, const char *src)
{
	char *n = NULL;
	if (src && !(n = strdup(src)))
		return -1;
	free(*dst);
	*dst = n;
	return 0;
}

static yaml_node_t *node(struct ctx *x, int id)
{
	return yaml_document_get_node(&x->doc, id);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int get_str(struct ctx *x, const yaml_node_t *n, const char *key, char **dst)
{
	const char *s = scalar(n);
	if (!s)
		return fail(x, n, "%s: expected a string", key);
	if (ng_config_set(dst, s) < 0)
		return fail(x, n, "out of memory");
	return 0;
}

static int get_bool(struct ctx *x, const yaml_node_t *n, const char *key, bool *dst)
{
	const char *s = scalar(n);
	if (s && (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcmp(s, "1")))
		*dst = true;
	else if (s && (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcmp(s, "0")))
		*dst = false;
	else
		return fail(x, n, "%s: expected true or false", key);
	return 0;
}

static int get_uint(struct ctx *x, const yaml_node_t *n, const char *key, uint64_t max,
                    uint64_t *dst)
{
	const char *s = scalar(n);
	char *end;
	errno = 0;
	unsigned long long v = s ? strtoull(s, &end, 10) : 0;
	if (!s || !*s || *s == '-' || errno || *end || v > max)
		return fail(x, n, "%s: expected a whole number up to %llu", key,
		            (unsigned long long)max);
	*dst = v;
	return 0;
}

/* Calls fn for every key/value pair of a mapping node. */
typedef int (*pair_fn)(struct ctx *x, const char *key, yaml_node_t *val, void *arg);

static int each_pair(struct ctx *x, yaml_node_t *map, const char *what, pair_fn fn, void *arg)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return fail(x, map, "%s: expected a mapping (key: value lines)", what);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = node(x, p->key), *v = node(x, p->value);
		const char *key = scalar(k);
		if (!key)
			return fail(x, k, "%s: keys must be strings", what);
		if (fn(x, key, v, arg) < 0)
			return -1;
	}
	return 0;
}

/* Calls fn for every item of a sequence node. */
typedef int (*item_fn)(struct ctx *x, yaml_node_t *item, void *arg);

static int each_item(struct ctx *x, yaml_node_t *seq, const char *what, item_fn fn, void *arg)
{
	if (!seq || seq->type != YAML_SEQUENCE_NODE)
		return fail(x, seq, "%s: expected a list", what);
	for (yaml_node_item_t *i = seq->data.sequence.items.start; i < seq->data.sequence.items.top;
	     i++)
		if (fn(x, node(x, *i), arg) < 0)
			return -1;
	return 0;
}

static void *grow(void *arr, size_t n, size_t size)
{
	void *p = realloc(arr, (n + 1) * size);
	if (p)
		memset((char *)p + n * size, 0, size);
	return p;
}

/* ---- interfaces, exporters, networks ---------------------------------- */

static int iface_pair(struct ctx *x, const char *key, yaml_node_t *v, void *arg)
{
	ng_cfg_iface *i = arg;
	uint64_t u;
	if (!strcmp(key, "index")) {
		if (get_uint(x, v, key, UINT32_MAX, &u) < 0)
			return -1;
		i->index = (uint32_t)u;
		return 0;
	}
	if (!strcmp(key, "name"))
		return get_str(x, v, key, &i->name);
	if (!strcmp(key, "description"))
		return get_str(x, v, key, &i->description);
	if (!strcmp(key, "speed"))
		return get_uint(x, v, key, UINT64_MAX, &i->speed);
	return fail(x, v, "interfaces: unknown key '%s' (index, name, description, speed)", key);
}

static int iface_item(struct ctx *x, yaml_node_t *n, void *arg)
{
	ng_cfg_exporter *e = arg;
	ng_cfg_iface *a = grow(e->ifs, e->nifs, sizeof *a);
	if (!a)
		return fail(x, n, "out of memory");
	e->ifs = a;
	ng_cfg_iface *i = &a[e->nifs++];
	i->index = UINT32_MAX;
	if (each_pair(x, n, "interfaces", iface_pair, i) < 0)
		return -1;
	if (i->index == UINT32_MAX)
		return fail(x, n, "interfaces: every interface needs an index");
	return 0;
}

/* ---- SNMP (enrich.snmp, exporters[].snmp) ----------------------------- */

/* True when `s` is one of the NULL-terminated names (case-insensitive). */
static bool one_of(const char *s, const char *const *names)
{
	for (; *names; names++)
		if (!strcasecmp(s, *names))
			return true;
	return false;
}

static int snmp_pair(struct ctx *x, const char *key, yaml_node_t *v, void *arg)
{
	static const char *const auths[] = {"MD5",     "SHA",     "SHA-224", "SHA-256",
	                                    "SHA-384", "SHA-512", NULL};
	static const char *const privs[] = {"DES", "AES", NULL};
	ng_cfg_snmp *s = arg;
	uint64_t u;
	if (!strcmp(key, "agent"))
		return get_str(x, v, key, &s->agent);
	if (!strcmp(key, "port")) {
		if (get_uint(x, v, key, 65535, &u) < 0)
			return -1;
		if (!u)
			return fail(x, v, "snmp: port 0: give the agent's UDP port (default 161)");
		s->port = (unsigned)u;
		return 0;
	}
	if (!strcmp(key, "version")) {
		const char *t = scalar(v);
		if (t && (!strcasecmp(t, "2c") || !strcmp(t, "2")))
			s->version = 2;
		else if (t && !strcmp(t, "3"))
			s->version = 3;
		else
			return fail(x, v, "snmp: version '%s': give 2c or 3", t ? t : "");
		return 0;
	}
	if (!strcmp(key, "community"))
		return get_str(x, v, key, &s->community);
	if (!strcmp(key, "user"))
		return get_str(x, v, key, &s->user);
	if (!strcmp(key, "auth_protocol")) {
		if (get_str(x, v, key, &s->auth_proto) < 0)
			return -1;
		if (!one_of(s->auth_proto, auths))
			return fail(x, v,
			            "snmp: auth_protocol '%s': give MD5, SHA, SHA-224, SHA-256, "
			            "SHA-384 or SHA-512",
			            s->auth_proto);
		return 0;
	}
	if (!strcmp(key, "priv_protocol")) {
		if (get_str(x, v, key, &s->priv_proto) < 0)
			return -1;
		if (!one_of(s->priv_proto, privs))
			return fail(x, v, "snmp: priv_protocol '%s': give DES or AES",
			            s->priv_proto);
		return 0;
	}
	if (!strcmp(key, "auth_key"))
		return get_str(x, v, key, &s->auth_key);
	if (!strcmp(key, "priv_key"))
		return get_str(x, v, key, &s->priv_key);
	return fail(x, v,
	            "snmp: unknown key '%s' (agent, port, version, community, user, "
	            "auth_protocol, auth_key, priv_protocol, priv_key)",
	            key);
}

/* One snmp: mapping into a new *dst, checked whole: what each version
 * needs, keys of 8 characters at least (RFC 3414 §11.2). */
static int get_snmp(struct ctx *x, yaml_node_t *v, ng_cfg_snmp **dst)
{
	if (*dst)
		return fail(x, v, "snmp: given twice");
	if (!(*dst = calloc(1, sizeof **dst)))
		return fail(x, v, "out of memory");
	ng_cfg_snmp *s = *dst;
	if (each_pair(x, v, "snmp", snmp_pair, s) < 0)
		return -1;
	if (!s->version)
		s->version = s->user ? 3 : 2;
	if (s->version == 2 && !s->community)
		return fail(x, v, "snmp: version 2c needs a community");
	if (s->version == 3 && !s->user)
		return fail(x, v, "snmp: version 3 needs a user");
	if (s->version == 2 && (s->user || s->auth_key || s->priv_key))
		return fail(x, v, "snmp: user, auth_key and priv_key are for version 3");
	if (s->priv_key && !s->auth_key)
		return fail(x, v, "snmp: priv_key needs an auth_key (authPriv, RFC 3414)");
	if ((s->auth_key && strlen(s->auth_key) < 8) || (s->priv_key && strlen(s->priv_key) < 8))
		return fail(x, v,
		            "snmp: auth_key and priv_key need 8 characters at least "
		            "(RFC 3414 section 11.2)");
	return 0;
}

static int snmp_poll_pair(struct ctx *x, const char *key, yaml_node_t *v, void *arg)
{
	ng_cfg_snmp_poll *p = arg;
	static const struct {
		const char *key;
		size_t off;
		uint64_t max;
	} nums[] = {
	    {"refresh", offsetof(ng_cfg_snmp_poll, refresh_s), 86400},
	    {"timeout", offsetof(ng_cfg_snmp_poll, timeout_ms), 60000},
	    {"retries", offsetof(ng_cfg_snmp_poll, retries), 10},
	    {"max_exporters", offsetof(ng_cfg_snmp_poll, max_exporters), 65536},
	    {"max_interfaces", offsetof(ng_cfg_snmp_poll, max_interfaces), 1000000},
	};
	for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
		if (strcmp(key, nums[i].key))
			continue;
		uint64_t u;
		if (get_uint(x, v, key, nums[i].max, &u) < 0)
			return -1;
		if (!u && strcmp(key, "retries"))
			return fail(x, v, "snmp: %s: give a positive value", key);
		*(unsigned *)(void *)((char *)p + nums[i].off) = (unsigned)u;
		p->retries_set |= !strcmp(key, "retries");
		return 0;
	}
	if (!strcmp(key, "default"))
		return get_snmp(x, v, &p->fallback);
	return fail(x, v,
	            "snmp: unknown key '%s' (refresh, timeout, retries, max_exporters, "
	            "max_interfaces, default)",
	            key);
}

static void free_snmp(ng_cfg_snmp *s)
{
	if (!s)
		return;
	free(s->agent);
	free(s->community);
	free(s->user);
	free(s->auth_proto);
	free(s->auth_key);
	free(s->priv_proto);
	free(s->priv_key);
	free(s);
}

static int exporter_pair(struct ctx *x, const char *key, yaml_node_t *v, void *arg)
{
	ng_cfg_exporter *e = arg;
	if (!strcmp(key, "address")) {
		const char *s = scalar(v);
		if (!s || !ng_addr_parse(s, e->addr))
			return fail(x, v, "exporters: address '%s' is not an IP address",
			            s ? s : "");
		return 0;
	}
	if (!strcmp(key, "name"))
		return get_str(x, v, key, &e->name);
	if (!strcmp(key, "interfaces"))
		return each_item(x, v, "interfaces", iface_item, e);
	if (!strcmp(key, "snmp"))
		return get_snmp(x, v, &e->snmp);
	return fail(x, v, "exporters: unknown key '%s' (address, name, interfaces, snmp)", key);
}

static int exporter_item(struct ctx *x, yaml_node_t *n, void *arg)
{
	ng_config *c = arg;
	ng_cfg_exporter *a = grow(c->exps, c->nexps, sizeof *a);
	if (!a)
		return fail(x, n, "out of memory");
	c->exps = a;
	ng_cfg_exporter *e = &a[c->nexps++];
	static const uint8_t none[16];
	if (each_pair(x, n, "exporters", exporter_pair, e) < 0)
		return -1;
	if (!memcmp(e->addr, none, 16))
		return fail(x, n, "exporters: every exporter needs an address");
	return 0;
}

static int network_pair(struct ctx *x, const char *key, yaml_node_t *v, void *arg)
{
	ng_cfg_network *w = arg;
	if (!strcmp(key, "prefix")) {
		const char *s = scalar(v);
		if (!s || !ng_prefix_parse(s, w->net, &w->plen))
			return fail(x, v, "networks: prefix '%s' is not ADDRESS/LENGTH",
			            s ? s : "");
		w->plen += 1000; /* marks "given" until the item is checked */
		return 0;
	}
	if (!strcmp(key, "name"))
		return get_str(x, v, key, &w->name);
	if (!strcmp(key, "role"))
		return get_str(x, v, key, &w->role);
	if (!strcmp(key, "site"))
		return get_str(x, v, key, &w->site);
	return fail(x, v, "networks: unknown key '%s' (prefix, name, role, site)", key);
}

static int network_item(struct ctx *x, yaml_node_t *n, void *arg)
{
	ng_config *c = arg;
	ng_cfg_network *a = grow(c->nets, c->nnets, sizeof *a);
	if (!a)
		return fail(x, n, "out of memory");
	c->nets = a;
	ng_cfg_network *w = &a[c->nnets++];
	if (each_pair(x, n, "networks", network_pair, w) < 0)
		return -1;
	if (w->plen < 1000)
		return fail(x, n, "networks: every network needs a prefix");
	w->plen -= 1000;
	return 0;
}

/* ---- classification rules, sampling rates ----------------------------- */

const char *const ng_class_attr_names[NG_CLASS_COUNT] = {
    "group", "role", "site", "region", "tenant", "boundary", "connectivity", "provider",
};

/* A pattern of a rule: a string that regcomp(REG_EXTENDED) takes. */
static int get_pattern(struct ctx *x, yaml_node_t *v, const char *key, char **dst)
{
	if (get_str(x, v, key, dst) < 0)
		return -1;
	regex_t re;
	int rc = regcomp(&re, *dst, REG_EXTENDED);
	if (rc) {
		char why[128];
		regerror(rc, &re, why, sizeof why);
		return fail(x, v,
		            "classify: %s '%s' is not a POSIX extended regular expression: %s", key,
		            *dst, why);
	}
	regfree(&re);
	return 0;
}

/* exporter: ADDRESS or ADDRESS/LEN into net, plen (128-bit space). */
static int get_net(struct ctx *x, yaml_node_t *v, const char *what, uint8_t net[16], unsigned *plen)
{
	const char *s = scalar(v);
	if (s && ng_prefix_parse(s, net, plen))
		return 0;
	if (s && ng_addr_parse(s, net)) {
		*plen = 128;
		return 0;
	}
	return fail(x, v, "%s: exporter '%s' is not an address nor ADDRESS/LENGTH", what,
	            s ? s : "");
}

static int match_pair(struct ctx *x, const char *key, yaml_node_t *v, void *arg)
{
	ng_cfg_rule *r = arg;
	if (!strcmp(key, "exporter")) {
		r->has_net = true;
		return get_net(x, v, "classify", r->net, &r->plen);
	}
	if (!strcmp(key, "exporter_name"))
		return get_pattern(x, v, key, &r->exporter_name);
	if (!strcmp(key, "interface_name"))
		return get_pattern(x, v, key, &r->if_name);
	if (!strcmp(key, "interface_description"))
		return get_pattern(x, v, key, &r->if_desc);
	return fail(x, v,
	            "classify: match: unknown key '%s' (exporter, exporter_name, interface_name, "
	            "interface_description)",
	            key);
}

static int set_pair(struct ctx *x, const char *key, yaml_node_t *v, void *arg)
{
	ng_cfg_rule *r = arg;
	for (int i = 0; i < NG_CLASS_COUNT; i++)
		if (!strcmp(key, ng_class_attr_names[i]))
			return get_str(x, v, key, &r->set[i]);
	return fail(x, v,
	            "classify: set: unknown key '%s' (group, role, site, region, tenant, "
	            "boundary, connectivity, provider)",
	            key);
}

static int rule_pair(struct ctx *x, const char *key, yaml_node_t *v, void *arg)
{
	if (!strcmp(key, "match"))
		return each_pair(x, v, "classify: match", match_pair, arg);
	if (!strcmp(key, "set"))
		return each_pair(x, v, "classify: set", set_pair, arg);
	return fail(x, v, "classify: unknown key '%s' (match, set)", key);
}

static int rule_item(struct ctx *x, yaml_node_t *n, void *arg)
{
	ng_config *c = arg;
	ng_cfg_rule *a = grow(c->rules, c->nrules, sizeof *a);
	if (!a)
		return fail(x, n, "out of memory");
	c->rules = a;
	ng_cfg_rule *r = &a[c->nrules++];
	r->line = n ? n->start_mark.line + 1 : 0;
	if (each_pair(x, n, "classify", rule_pair, r) < 0)
		return -1;
	bool any = false, exp_attr = false;
	for (int i = 0; i < NG_CLASS_COUNT; i++) {
		any |= r->set[i] != NULL;
		exp_attr |= i < NG_CLASS_FIRST_IF && r->set[i];
	}
	if (!any)
		return fail(x, n,
		            "classify: a rule needs set: with one of group, role, site, "
		            "region, tenant, boundary, connectivity, provider");
	if (exp_attr && (r->if_name || r->if_desc))
		return fail(
		    x, n,
		    "classify: group, role, site, region and tenant belong to the exporter: "
		    "a rule matching interface_name or interface_description cannot set "
		    "them");
	return 0;
}

static int sampling_pair(struct ctx *x, const char *key, yaml_node_t *v, void *arg)
{
	ng_cfg_sampling *s = arg;
	uint64_t u = 0;
	if (!strcmp(key, "exporter")) {
		if (get_net(x, v, "sampling", s->net, &s->plen) < 0)
			return -1;
		s->plen += 1000; /* marks "given" */
		return 0;
	}
	if (!strcmp(key, "rate")) {
		if (get_uint(x, v, key, 1u << 31, &u) < 0 || !u)
			return fail(x, v,
			            "sampling: rate: give packets per sample, 1 to 2147483648");
		s->rate = (uint32_t)u;
		return 0;
	}
	if (!strcmp(key, "override"))
		return get_bool(x, v, key, &s->override);
	return fail(x, v, "sampling: unknown key '%s' (exporter, rate, override)", key);
}

static int sampling_item(struct ctx *x, yaml_node_t *n, void *arg)
{
	ng_config *c = arg;
	ng_cfg_sampling *a = grow(c->samplings, c->nsamplings, sizeof *a);
	if (!a)
		return fail(x, n, "out of memory");
	c->samplings = a;
	ng_cfg_sampling *s = &a[c->nsamplings++];
	if (each_pair(x, n, "sampling", sampling_pair, s) < 0)
		return -1;
	if (s->plen < 1000 || !s->rate)
		return fail(x, n, "sampling: every item needs an exporter and a rate");
	s->plen -= 1000;
	return 0;
}

/* ---- top level -------------------------------------------------------- */

static int listen_item(struct ctx *x, yaml_node_t *n, void *arg)
{
	ng_config *c = arg;
	char **a = grow(c->listen, c->nlisten, sizeof *a);
	if (!a)
		return fail(x, n, "out of memory");
	c->listen = a;
	return get_str(x, n, "listen", &c->listen[c->nlisten++]);
}

/* One name of http_allowed_hosts, appended to the comma list. */
static int host_item(struct ctx *x, yaml_node_t *n, void *arg)
{
	ng_config *c = arg;
	const char *s = scalar(n);
	if (!s || !*s || strpbrk(s, ", \t"))
		return fail(x, n, "http_allowed_hosts: give host names, one an item");
	size_t old = c->http_allowed_hosts ? strlen(c->http_allowed_hosts) : 0;
	char *a = realloc(c->http_allowed_hosts, old + strlen(s) + 2);
	if (!a)
		return fail(x, n, "out of memory");
	if (old)
		a[old++] = ',';
	strcpy(a + old, s);
	c->http_allowed_hosts = a;
	return 0;
}

/* http_max_connections, http_max_per_client, http_idle_timeout: a whole
 * number within [1, max]. */
static int get_limit(struct ctx *x, yaml_node_t *v, const char *key, uint64_t max, unsigned *dst)
{
	uint64_t u = 0; /* get_uint sets it on success; GCC -O3 cannot see that */
	if (get_uint(x, v, key, max, &u) < 0 || u < 1)
		return fail(x, v, "%s: give a whole number, 1 to %llu", key,
		            (unsigned long long)max);
	*dst = (unsigned)u;
	return 0;
}

/* collect.max_past (1m to 36600d) or max_future (0s to 1d): a duration
 * such as 7d or 30m (ng_parse_duration_ms); the bounds are the collector's
 * (NG_COLL_MAX_*_LIMIT_MS, collector/collector.h). */
static int window_pair(struct ctx *x, const char *key, yaml_node_t *v, ng_config *c)
{
	const char *s = scalar(v);
	uint64_t ms;
	bool past = !strcmp(key, "max_past");
	if (!s || !ng_parse_duration_ms(s, &ms) ||
	    (past && (ms < 60000 || ms > 36600 * 86400000ull)) || (!past && ms > 86400000ull))
		return fail(x, v, "%s: give a duration such as %s (%s)", key, past ? "7d" : "1h",
		            past ? "1m to 36600d" : "0s to 1d");
	if (past)
		c->max_past_ms = ms;
	else {
		c->max_future_ms = ms;
		c->max_future_set = true;
	}
	return 0;
}

static int collect_pair(struct ctx *x, const char *key, yaml_node_t *v, void *arg)
{
	ng_config *c = arg;
	uint64_t u;
	if (!strcmp(key, "store"))
		return get_str(x, v, key, &c->store);
	if (!strcmp(key, "json"))
		return get_str(x, v, key, &c->json);
	if (!strcmp(key, "http"))
		return get_str(x, v, key, &c->http);
	if (!strcmp(key, "http_token"))
		return get_str(x, v, key, &c->http_token);
	if (!strcmp(key, "http_allowed_hosts"))
		return scalar(v) ? host_item(x, v, c) : each_item(x, v, key, host_item, c);
	if (!strcmp(key, "http_max_connections"))
		return get_limit(x, v, key, 10000, &c->http_max_connections);
	if (!strcmp(key, "http_max_per_client"))
		return get_limit(x, v, key, 10000, &c->http_max_per_client);
	if (!strcmp(key, "http_idle_timeout"))
		return get_limit(x, v, key, 3600, &c->http_idle_timeout);
	if (!strcmp(key, "http_cache")) {
		if (get_uint(x, v, key, 65536, &u) < 0)
			return fail(x, v, "http_cache: give MiB, 0 (none) to 65536");
		c->http_cache_mib = (unsigned)u;
		c->http_cache_set = true;
		return 0;
	}
	if (!strcmp(key, "listen"))
		return scalar(v) ? listen_item(x, v, c) : each_item(x, v, key, listen_item, c);
	if (!strcmp(key, "stats_interval")) {
		if (get_uint(x, v, key, 86400, &u) < 0 || u < 1)
			return fail(x, v, "stats_interval: give whole seconds, 1 to 86400");
		c->stats_interval = (unsigned)u;
		return 0;
	}
	if (!strcmp(key, "workers")) {
		if (get_uint(x, v, key, 64, &u) < 0 || u < 1)
			return fail(x, v, "workers: give a number of receive threads, 1 to 64");
		c->workers = (unsigned)u;
		return 0;
	}
	if (!strcmp(key, "max_past") || !strcmp(key, "max_future"))
		return window_pair(x, key, v, c);
	if (!strcmp(key, "implausible_time")) {
		const char *s = scalar(v);
		if (s && (!strcmp(s, "keep") || !strcmp(s, "reject"))) {
			c->implausible_time = !strcmp(s, "reject") ? NG_CFG_REJECT : NG_CFG_KEEP;
			return 0;
		}
		return fail(x, v, "implausible_time: give keep or reject");
	}
	return fail(x, v,
	            "collect: unknown key '%s' (store, listen, json, stats_interval, workers, "
	            "http, http_token, http_allowed_hosts, http_max_connections, "
	            "http_max_per_client, http_idle_timeout, http_cache, max_past, max_future, "
	            "implausible_time)",
	            key);
}

static int enrich_pair(struct ctx *x, const char *key, yaml_node_t *v, void *arg)
{
	ng_config *c = arg;
	if (!strcmp(key, "geoip_db"))
		return get_str(x, v, key, &c->geoip_db);
	if (!strcmp(key, "asn_db"))
		return get_str(x, v, key, &c->asn_db);
	if (!strcmp(key, "geoip_optional"))
		return get_bool(x, v, key, &c->geoip_optional);
	if (!strcmp(key, "language"))
		return get_str(x, v, key, &c->language);
	if (!strcmp(key, "services")) {
		bool on;
		if (get_bool(x, v, key, &on) < 0)
			return -1;
		c->no_services = !on;
		return 0;
	}
	if (!strcmp(key, "networks"))
		return each_item(x, v, key, network_item, c);
	if (!strcmp(key, "exporters"))
		return each_item(x, v, key, exporter_item, c);
	if (!strcmp(key, "snmp"))
		return each_pair(x, v, key, snmp_poll_pair, &c->snmp);
	if (!strcmp(key, "classify"))
		return each_item(x, v, key, rule_item, c);
	if (!strcmp(key, "sampling"))
		return each_item(x, v, key, sampling_item, c);
	return fail(x, v,
	            "enrich: unknown key '%s' (geoip_db, asn_db, geoip_optional, language, "
	            "services, networks, exporters, snmp, classify, sampling)",
	            key);
}

/* A size: a whole number of bytes, or with a K, M or G suffix (powers of
 * 1024).  Returns false when it is not one (or overflows). */
static bool parse_bytes(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!s || !*s || *s == '-')
		return false;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (errno || *end || end == s || v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

/* One key of `limits:` (NG_LIMITS, core/limits.h): a positive number;
 * the *_bytes* ones may carry a K, M or G suffix. */
static int limit_pair(struct ctx *x, const char *key, yaml_node_t *v, void *arg)
{
	ng_config *c = arg;
	for (int i = 0; i < NG_LIMIT_COUNT; i++) {
		const ng_limit_info *li = &ng_limit_infos[i];
		if (strcmp(key, li->key))
			continue;
		uint64_t *dst = (uint64_t *)(void *)((char *)&c->limits + li->offset);
		bool bytes = strstr(key, "_bytes") != NULL;
		const char *s = scalar(v);
		if (bytes ? !parse_bytes(s, dst) : get_uint(x, v, key, UINT32_MAX, dst) < 0)
			return fail(x, v, "limits: %s: expected a positive %s", key,
			            bytes ? "size (bytes, or with K, M or G)" : "whole number");
		if (!*dst)
			return fail(
			    x, v, "limits: %s: 0 is no limit; give a positive value (default %llu)",
			    key, (unsigned long long)li->def);
		return 0;
	}
	char keys[1024];
	size_t off = 0;
	for (int i = 0; i < NG_LIMIT_COUNT && off < sizeof keys; i++)
		off += (size_t)snprintf(keys + off, sizeof keys - off, "%s%s", i ? ", " : "",
		                        ng_limit_infos[i].key);
	return fail(x, v, "limits: unknown key '%s' (%s)", key, keys);
}

/* One URL of clickhouse.nodes. */
static int node_item(struct ctx *x, yaml_node_t *n, void *arg)
{
	ng_cfg_clickhouse *h = arg;
	char **a = grow(h->nodes, h->nnodes, sizeof *a);
	if (!a)
		return fail(x, n, "out of memory");
	h->nodes = a;
	a[h->nnodes] = NULL;
	if (get_str(x, n, "clickhouse: nodes", &a[h->nnodes]) < 0)
		return -1;
	h->nnodes++;
	return 0;
}

static int clickhouse_pair(struct ctx *x, const char *key, yaml_node_t *v, void *arg)
{
	ng_cfg_clickhouse *h = &((ng_config *)arg)->clickhouse;
	uint64_t u;
	static const struct {
		const char *key;
		size_t off;
	} strs[] = {
	    {"url", offsetof(ng_cfg_clickhouse, url)},
	    {"database", offsetof(ng_cfg_clickhouse, database)},
	    {"user", offsetof(ng_cfg_clickhouse, user)},
	    {"password", offsetof(ng_cfg_clickhouse, password)},
	    {"ca_file", offsetof(ng_cfg_clickhouse, ca_file)},
	    {"cert_file", offsetof(ng_cfg_clickhouse, cert_file)},
	    {"key_file", offsetof(ng_cfg_clickhouse, key_file)},
	    {"cluster", offsetof(ng_cfg_clickhouse, cluster)},
	};
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
		if (!strcmp(key, strs[i].key))
			return get_str(x, v, key, (char **)(void *)((char *)h + strs[i].off));
	const char *s = scalar(v);
	if (!strcmp(key, "timeout") || !strcmp(key, "retention") ||
	    !strcmp(key, "rollup_retention")) {
		uint64_t ms;
		if (!s || !ng_parse_duration_ms(s, &ms) || !ms)
			return fail(x, v, "clickhouse: %s: give a duration such as %s", key,
			            key[0] == 't' ? "30s" : "30d");
		if (key[0] == 't')
			h->timeout_ms = ms;
		else if (key[0] == 'r' && key[1] == 'e')
			h->retention_ms = ms;
		else
			h->rollup_retention_ms = ms;
		return 0;
	}
	if (!strcmp(key, "spool_max")) {
		if (!s || !parse_bytes(s, &h->spool_max) || !h->spool_max)
			return fail(x, v, "clickhouse: spool_max: give a size such as 1G or 500M");
		return 0;
	}
	if (!strcmp(key, "batch_rows")) {
		if (get_uint(x, v, key, 1000000, &u) < 0 || u < 1)
			return fail(x, v, "clickhouse: batch_rows: give rows, 1 to 1000000");
		h->batch_rows = (unsigned)u;
		return 0;
	}
	if (!strcmp(key, "compression")) {
		if (s && (!strcmp(s, "none") || !strcmp(s, "gzip"))) {
			h->gzip = !strcmp(s, "gzip");
			return 0;
		}
		return fail(x, v, "clickhouse: compression: give none or gzip");
	}
	if (!strcmp(key, "store")) {
		if (s && (!strcmp(s, "true") || !strcmp(s, "false"))) {
			h->store_too = !strcmp(s, "true");
			h->store_set = true;
			return 0;
		}
		return fail(x, v, "clickhouse: store: give true or false");
	}
	if (!strcmp(key, "insert")) {
		if (s && (!strcmp(s, "distributed") || !strcmp(s, "local"))) {
			h->insert_local = !strcmp(s, "local");
			return 0;
		}
		return fail(x, v, "clickhouse: insert: give distributed or local");
	}
	if (!strcmp(key, "replicated"))
		return get_bool(x, v, "clickhouse: replicated", &h->replicated);
	if (!strcmp(key, "nodes"))
		return scalar(v) ? node_item(x, v, h)
		                 : each_item(x, v, "clickhouse: nodes", node_item, h);
	return fail(x, v,
	            "clickhouse: unknown key '%s' (url, database, user, password, ca_file, "
	            "cert_file, key_file, timeout, spool_max, batch_rows, retention, "
	            "rollup_retention, compression, store, cluster, insert, replicated, nodes)",
	            key);
}

static int top_pair(struct ctx *x, const char *key, yaml_node_t *v, void *arg)
{
	if (!strcmp(key, "clickhouse"))
		return each_pair(x, v, key, clickhouse_pair, arg);
	if (!strcmp(key, "collect"))
		return each_pair(x, v, key, collect_pair, arg);
	if (!strcmp(key, "enrich"))
		return each_pair(x, v, key, enrich_pair, arg);
	if (!strcmp(key, "limits"))
		return each_pair(x, v, key, limit_pair, arg);
	return fail(x, v, "unknown section '%s' (collect, enrich, limits, clickhouse)", key);
}

int ng_config_load(const char *path, ng_config *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	struct ctx x = {.path = path, .err = err, .errlen = errlen};
	yaml_parser_t p;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_file(&p, f);
	int rc = -1;
	if (!yaml_parser_load(&p, &x.doc)) {
		snprintf(err, errlen, "%s:%zu: YAML: %s %s", path, p.problem_mark.line + 1,
		         p.problem ? p.problem : "syntax error", p.context ? p.context : "");
		goto out_parser;
	}
	yaml_node_t *root = yaml_document_get_root_node(&x.doc);
	if (!root) /* an empty file: every default */
		rc = 0;
	else
		rc = each_pair(&x, root, "top level", top_pair, c);
	yaml_document_delete(&x.doc);
	if (rc == 0 && ng_config_set(&c->path, path) < 0) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
out_parser:
	yaml_parser_delete(&p);
	fclose(f);
	if (rc < 0)
		ng_config_free(c);
	return rc;
}

int ng_config_env(ng_config *c, char *err, size_t errlen)
{
	static const struct {
		const char *var;
		size_t off;
	} strs[] = {
	    {"NAGARE_STORE", offsetof(ng_config, store)},
	    {"NAGARE_JSON", offsetof(ng_config, json)},
	    {"NAGARE_HTTP", offsetof(ng_config, http)},
	    {"NAGARE_HTTP_TOKEN", offsetof(ng_config, http_token)},
	    {"NAGARE_HTTP_ALLOWED_HOSTS", offsetof(ng_config, http_allowed_hosts)},
	    {"NAGARE_GEOIP_DB", offsetof(ng_config, geoip_db)},
	    {"NAGARE_ASN_DB", offsetof(ng_config, asn_db)},
	    {"NAGARE_LANGUAGE", offsetof(ng_config, language)},
	};
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		const char *v = getenv(strs[i].var);
		if (v && *v && ng_config_set((char **)((char *)c + strs[i].off), v) < 0) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	const char *v = getenv("NAGARE_GEOIP_OPTIONAL");
	if (v && *v) {
		if (!strcasecmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes"))
			c->geoip_optional = true;
		else if (!strcasecmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no"))
			c->geoip_optional = false;
		else {
			snprintf(err, errlen, "NAGARE_GEOIP_OPTIONAL='%s': give 1 or 0", v);
			return -1;
		}
	}
	return 0;
}

void ng_config_free(ng_config *c)
{
	free(c->path);
	free(c->store);
	for (size_t i = 0; i < c->nlisten; i++)
		free(c->listen[i]);
	free(c->listen);
	free(c->json);
	free(c->http);
	free(c->http_token);
	free(c->http_allowed_hosts);
	free(c->geoip_db);
	free(c->asn_db);
	free(c->language);
	for (size_t i = 0; i < c->nnets; i++) {
		free(c->nets[i].name);
		free(c->nets[i].role);
		free(c->nets[i].site);
	}
	free(c->nets);
	for (size_t i = 0; i < c->nexps; i++) {
		for (size_t j = 0; j < c->exps[i].nifs; j++) {
			free(c->exps[i].ifs[j].name);
			free(c->exps[i].ifs[j].description);
		}
		free(c->exps[i].ifs);
		free(c->exps[i].name);
		free_snmp(c->exps[i].snmp);
	}
	free(c->exps);
	free_snmp(c->snmp.fallback);
	free(c->clickhouse.url);
	free(c->clickhouse.database);
	free(c->clickhouse.user);
	free(c->clickhouse.password);
	free(c->clickhouse.ca_file);
	free(c->clickhouse.cert_file);
	free(c->clickhouse.key_file);
	free(c->clickhouse.cluster);
	for (size_t i = 0; i < c->clickhouse.nnodes; i++)
		free(c->clickhouse.nodes[i]);
	free(c->clickhouse.nodes);
	for (size_t i = 0; i < c->nrules; i++) {
		free(c->rules[i].exporter_name);
		free(c->rules[i].if_name);
		free(c->rules[i].if_desc);
		for (int j = 0; j < NG_CLASS_COUNT; j++)
			free(c->rules[i].set[j]);
	}
	free(c->rules);
	free(c->samplings);
	memset(c, 0, sizeof *c);
}
