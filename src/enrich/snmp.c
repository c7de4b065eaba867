/*
 * snmp.c — the SNMP poller (see snmp.h): ifName, ifDescr, ifAlias,
 * ifSpeed and ifHighSpeed of the interfaces flows name, per exporter.
 *
 * IF-MIB (RFC 2863), by number (no MIB files are read):
 *   ifDescr      1.3.6.1.2.1.2.2.1.2.IDX      DisplayString
 *   ifSpeed      1.3.6.1.2.1.2.2.1.5.IDX      Gauge32, bits/s, 4294967295 = more
 *   ifName       1.3.6.1.2.1.31.1.1.1.1.IDX   DisplayString
 *   ifHighSpeed  1.3.6.1.2.1.31.1.1.1.15.IDX  Gauge32, 10^6 bits/s
 *   ifAlias      1.3.6.1.2.1.31.1.1.1.18.IDX  DisplayString (0..64)
 * One GET asks the five columns of up to IFS_PER_GET interfaces (a reply
 * too big for the agent, tooBig, is asked again one interface at a time).
 *
 * Threads.  One poller thread owns every net-snmp session (the
 * single-session API, snmp_sess_*, which net-snmp documents as safe when
 * each session is used by one thread) and does all the network waiting.
 * The agents' table (which interfaces, their last values, the counters)
 * is under `mu`; the poller takes it to pick what is due and to store a
 * reply, never across a request.  The receive threads take it once a
 * second (ng_snmp_want, ng_snmp_take) and the HTTP threads for the
 * status (ng_snmp_put_json).  ng_snmp_polled reads only what is fixed at
 * start and takes no lock: it runs on the receive path.
 *
 * Synchronous requests, one agent after another: an agent that does not
 * answer holds the others up by timeout x (retries + 1) per refresh.  Its
 * session is closed after a failure and opened again at its next round
 * (a restarted agent has a new engine boot count, RFC 3414 §2.2).
 *
 * Bounds: max_exporters agents, max_interfaces interfaces each (what is
 * past them is counted as dropped, in the status); strings are cut to
 * NG_STR_MAX bytes and control characters replaced by '?' (an agent's
 * strings end up in the string table and in JSON).
 */
#include "enrich/snmp.h"

#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/addr.h"
#include "core/json.h"
#include "core/log.h"
#include "core/strtab.h"
#include "core/timefmt.h"

#define IFS_PER_GET 4
#define NCOLS 5
#define ERR_LEN 256
#define RETRY_MS 30000

enum { COL_NAME, COL_DESCR, COL_ALIAS, COL_SPEED, COL_HIGH };

static const oid col_oid[NCOLS][11] = {
    [COL_NAME] = {1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 1},   [COL_DESCR] = {1, 3, 6, 1, 2, 1, 2, 2, 1, 2},
    [COL_ALIAS] = {1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 18}, [COL_SPEED] = {1, 3, 6, 1, 2, 1, 2, 2, 1, 5},
    [COL_HIGH] = {1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 15},
};
static const size_t col_len[NCOLS] = {11, 10, 11, 10, 11};

struct iface {
	uint32_t index;
	char *name, *desc; /* malloc'd, NULL none */
	uint64_t speed;
	uint64_t polled_ms; /* last try, 0 never */
	uint64_t gen;       /* generation of the last change, 0 none yet */
};

struct agent {
	uint8_t ex[16];
	const ng_cfg_snmp *cfg; /* borrowed from the configuration */
	char peer[NG_ADDR_STRLEN + 32];
	void *sess; /* poller thread only; NULL closed */
	struct iface *ifs;
	size_t n, cap;
	/* counters and state, under mu */
	uint64_t polls, replies, failures, timeouts, dropped;
	uint64_t last_ok_ms, last_err_ms;
	char last_error[ERR_LEN];
};

struct ng_snmp {
	const ng_config *cfg;
	uint64_t refresh_ms, timeout_ms;
	unsigned retries, max_exporters, max_interfaces;
	/* fixed at start (ng_snmp_polled): the exporters configured, sorted */
	uint8_t (*fixed)[16];
	size_t nfixed;
	bool any; /* enrich.snmp.default: every exporter */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	struct agent *ag;
	size_t nag;
	uint64_t dropped_agents; /* exporters past max_exporters */
	uint64_t gen;
	pthread_t th;
};

/* ---- values ------------------------------------------------------------ */

uint64_t ng_snmp_speed(bool has_speed, uint32_t if_speed, bool has_high, uint32_t if_high_speed)
{
	if (has_speed && if_speed != UINT32_MAX)
		return if_speed;
	if (has_high && if_high_speed)
		return (uint64_t)if_high_speed * 1000000u;
	return has_speed ? if_speed : 0;
}

/* A DisplayString of an agent as a C string: at most NG_STR_MAX bytes, up
 * to a NUL, control characters as '?'.  NULL when empty or out of memory. */
static char *clean(const uint8_t *s, size_t len)
{
	if (len > NG_STR_MAX)
		len = NG_STR_MAX;
	const uint8_t *z = memchr(s, 0, len);
	if (z)
		len = (size_t)(z - s);
	if (!len)
		return NULL;
	char *o = malloc(len + 1);
	if (!o)
		return NULL;
	for (size_t i = 0; i < len; i++)
		o[i] = s[i] < 0x20 || s[i] == 0x7f ? '?' : (char)s[i];
	o[len] = 0;
	return o;
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* ---- the table (under mu) ---------------------------------------------- */

static int cmp_addr(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

static const ng_cfg_snmp *config_of(const ng_snmp *p, const uint8_t ex[16])
{
	for (size_t i = 0; i < p->cfg->nexps; i++)
		if (p->cfg->exps[i].snmp && !memcmp(p->cfg->exps[i].addr, ex, 16))
			return p->cfg->exps[i].snmp;
	return p->cfg->snmp.fallback;
}

bool ng_snmp_polled(void *arg, const uint8_t exporter[16])
{
	const ng_snmp *p = arg;
	return p->any || bsearch(exporter, p->fixed, p->nfixed, 16, cmp_addr) != NULL;
}

/* The agent of exporter ex, added when new and within the bounds. */
static struct agent *agent_of(ng_snmp *p, const uint8_t ex[16])
{
	for (size_t i = 0; i < p->nag; i++)
		if (!memcmp(p->ag[i].ex, ex, 16))
			return &p->ag[i];
	const ng_cfg_snmp *c = config_of(p, ex);
	if (!c)
		return NULL;
	if (p->nag >= p->max_exporters) {
		if (!p->dropped_agents++)
			ng_warn("SNMP: enrich.snmp.max_exporters (%u) reached: more exporters are "
			        "not polled (counted: snmp_exporters_dropped in /api/v1/exporters)",
			        p->max_exporters);
		return NULL;
	}
	struct agent *a = &p->ag[p->nag++];
	memset(a, 0, sizeof *a);
	memcpy(a->ex, ex, 16);
	a->cfg = c;
	char addr[NG_ADDR_STRLEN];
	const char *host = c->agent ? c->agent : ng_addr_format(ex, addr);
	bool v6 = strchr(host, ':') != NULL;
	snprintf(a->peer, sizeof a->peer, "%s:%s%s%s:%u", v6 ? "udp6" : "udp", v6 ? "[" : "", host,
	         v6 ? "]" : "", c->port ? c->port : 161);
	return a;
}

void ng_snmp_want(ng_snmp *p, const uint8_t (*ex)[16], const uint32_t *index, size_t n)
{
	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < n; i++) {
		struct agent *a = agent_of(p, ex[i]);
		if (!a)
			continue;
		bool have = false;
		for (size_t j = 0; j < a->n && !have; j++)
			have = a->ifs[j].index == index[i];
		if (have)
			continue;
		if (a->n >= p->max_interfaces) {
			a->dropped++;
			continue;
		}
		if (a->n == a->cap) {
			size_t nc = a->cap ? a->cap * 2 : 16;
			struct iface *g = realloc(a->ifs, nc * sizeof *g);
			if (!g) {
				a->dropped++;
				continue;
			}
			a->ifs = g;
			a->cap = nc;
		}
		a->ifs[a->n++] = (struct iface){.index = index[i]};
	}
	if (n)
		pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

uint64_t ng_snmp_take(ng_snmp *p, uint64_t since,
                      void (*fn)(void *arg, const uint8_t exporter[16], uint32_t index,
                                 const char *name, const char *desc, uint64_t speed),
                      void *arg)
{
	pthread_mutex_lock(&p->mu);
	uint64_t gen = p->gen;
	if (gen > since)
		for (size_t i = 0; i < p->nag; i++)
			for (size_t j = 0; j < p->ag[i].n; j++) {
				const struct iface *f = &p->ag[i].ifs[j];
				if (f->gen > since)
					fn(arg, p->ag[i].ex, f->index, f->name, f->desc, f->speed);
			}
	pthread_mutex_unlock(&p->mu);
	return gen;
}

static void put_u64(FILE *f, const char *key, uint64_t v)
{
	fprintf(f, ",\"%s\":%" PRIu64, key, v);
}

void ng_snmp_put_json(ng_snmp *p, FILE *f)
{
	pthread_mutex_lock(&p->mu);
	fputs("\"snmp\":[", f);
	for (size_t i = 0; i < p->nag; i++) {
		const struct agent *a = &p->ag[i];
		char addr[NG_ADDR_STRLEN];
		size_t named = 0;
		for (size_t j = 0; j < a->n; j++)
			named += a->ifs[j].gen != 0;
		fputs(i ? ",{\"exporter\":" : "{\"exporter\":", f);
		ng_json_put_str(f, ng_addr_format(a->ex, addr));
		fputs(",\"agent\":", f);
		ng_json_put_str(f, a->peer);
		fprintf(f, ",\"version\":\"%s\"", a->cfg->version == 3 ? "3" : "2c");
		put_u64(f, "interfaces", a->n);
		put_u64(f, "interfaces_named", named);
		put_u64(f, "polls", a->polls);
		put_u64(f, "replies", a->replies);
		put_u64(f, "failures", a->failures);
		put_u64(f, "timeouts", a->timeouts);
		put_u64(f, "interfaces_dropped", a->dropped);
		put_u64(f, "last_ok_ms", a->last_ok_ms);
		put_u64(f, "last_error_ms", a->last_err_ms);
		fputs(",\"last_error\":", f);
		ng_json_put_str(f, a->last_error);
		const char *state = a->last_err_ms > a->last_ok_ms ? "failing"
		                    : a->last_ok_ms                ? "ok"
		                                                   : "waiting";
		fputs(",\"state\":", f);
		ng_json_put_str(f, state);
		fputc('}', f);
	}
	fprintf(f, "],\"snmp_exporters_dropped\":%" PRIu64, p->dropped_agents);
	pthread_mutex_unlock(&p->mu);
}

/* ---- sessions (poller thread) ------------------------------------------ */

static const oid *auth_oid(const char *name, size_t *len)
{
	static const struct {
		const char *name;
		int type;
	} t[] = {
	    {"MD5", NETSNMP_USMAUTH_HMACMD5},           {"SHA", NETSNMP_USMAUTH_HMACSHA1},
	    {"SHA-224", NETSNMP_USMAUTH_HMAC128SHA224}, {"SHA-256", NETSNMP_USMAUTH_HMAC192SHA256},
	    {"SHA-384", NETSNMP_USMAUTH_HMAC256SHA384}, {"SHA-512", NETSNMP_USMAUTH_HMAC384SHA512},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcasecmp(name, t[i].name))
			return sc_get_auth_oid(t[i].type, len);
	return NULL;
}

/* Opens a's session; NULL with the cause in err[ERR_LEN]. */
static void *open_session(const ng_snmp *p, const struct agent *a, char *err)
{
	const ng_cfg_snmp *c = a->cfg;
	netsnmp_session s;
	snmp_sess_init(&s);
	char peer[sizeof a->peer];
	memcpy(peer, a->peer, sizeof peer);
	s.peername = peer;
	s.timeout = (long)(p->timeout_ms * 1000);
	s.retries = (int)p->retries;
	if (c->version == 2) {
		s.version = SNMP_VERSION_2c;
		s.community = (u_char *)c->community;
		s.community_len = strlen(c->community);
	} else {
		s.version = SNMP_VERSION_3;
		s.securityName = c->user;
		s.securityNameLen = strlen(c->user);
		s.securityLevel = SNMP_SEC_LEVEL_NOAUTH;
		if (c->auth_key) {
			s.securityLevel = SNMP_SEC_LEVEL_AUTHNOPRIV;
			s.securityAuthProto = (oid *)auth_oid(c->auth_proto ? c->auth_proto : "SHA",
			                                      &s.securityAuthProtoLen);
			s.securityAuthKeyLen = USM_AUTH_KU_LEN;
			if (!s.securityAuthProto ||
			    generate_Ku(s.securityAuthProto, (u_int)s.securityAuthProtoLen,
			                (const u_char *)c->auth_key, strlen(c->auth_key),
			                s.securityAuthKey,
			                &s.securityAuthKeyLen) != SNMPERR_SUCCESS) {
				snprintf(err, ERR_LEN, "cannot derive the authentication key (%s)",
				         c->auth_proto ? c->auth_proto : "SHA");
				return NULL;
			}
		}
		if (c->priv_key) {
			s.securityLevel = SNMP_SEC_LEVEL_AUTHPRIV;
			bool des = c->priv_proto && !strcasecmp(c->priv_proto, "DES");
			s.securityPrivProto =
			    (oid *)(des ? usmDESPrivProtocol : usmAESPrivProtocol);
			s.securityPrivProtoLen =
			    des ? USM_PRIV_PROTO_DES_LEN : USM_PRIV_PROTO_AES_LEN;
			s.securityPrivKeyLen = USM_PRIV_KU_LEN;
			if (generate_Ku(s.securityAuthProto, (u_int)s.securityAuthProtoLen,
			                (const u_char *)c->priv_key, strlen(c->priv_key),
			                s.securityPrivKey,
			                &s.securityPrivKeyLen) != SNMPERR_SUCCESS) {
				snprintf(err, ERR_LEN, "cannot derive the privacy key");
				return NULL;
			}
		}
	}
	void *h = snmp_sess_open(&s);
	if (!h) {
		int liberr, syserr;
		char *msg = NULL;
		snmp_error(&s, &liberr, &syserr, &msg);
		snprintf(err, ERR_LEN, "%s", msg ? msg : "cannot open the session");
		free(msg);
	}
	return h;
}

/* One reply's values of interface k of the request (varbinds k*NCOLS ..). */
struct got {
	char *s[3]; /* name, descr, alias */
	bool has[NCOLS];
	uint32_t u[NCOLS];
};

/* Matches varbind v against column `col` of ifIndex idx. */
static bool is_col(const netsnmp_variable_list *v, int col, uint32_t idx)
{
	return v->name_length == col_len[col] + 1 && v->name[col_len[col]] == idx &&
	       !memcmp(v->name, col_oid[col], col_len[col] * sizeof(oid));
}

static void take_var(const netsnmp_variable_list *v, int col, struct got *g)
{
	if (v->type == SNMP_NOSUCHOBJECT || v->type == SNMP_NOSUCHINSTANCE ||
	    v->type == SNMP_ENDOFMIBVIEW)
		return;
	if (col <= COL_ALIAS && v->type == ASN_OCTET_STR) {
		g->s[col] = clean(v->val.string, v->val_len);
		g->has[col] = true;
	} else if (col > COL_ALIAS &&
	           (v->type == ASN_GAUGE || v->type == ASN_INTEGER || v->type == ASN_COUNTER) &&
	           v->val.integer) {
		g->u[col] = (uint32_t)*v->val.integer;
		g->has[col] = true;
	}
}

/* Sends one GET for idx[0..n); fills g[0..n).  Returns 0, 1 for tooBig,
 * -1 for a failure (err set; *timeout when no reply). */
static int get_ifs(void *h, const uint32_t *idx, size_t n, struct got *g, char *err, bool *timeout)
{
	netsnmp_pdu *pdu = snmp_pdu_create(SNMP_MSG_GET);
	if (!pdu) {
		snprintf(err, ERR_LEN, "out of memory");
		return -1;
	}
	for (size_t k = 0; k < n; k++)
		for (int c = 0; c < NCOLS; c++) {
			oid o[12];
			memcpy(o, col_oid[c], col_len[c] * sizeof(oid));
			o[col_len[c]] = idx[k];
			snmp_add_null_var(pdu, o, col_len[c] + 1);
		}
	netsnmp_pdu *resp = NULL;
	int st = snmp_sess_synch_response(h, pdu, &resp);
	int rc = 0;
	if (st == STAT_TIMEOUT) {
		*timeout = true;
		snprintf(err, ERR_LEN, "no reply (timeout)");
		rc = -1;
	} else if (st != STAT_SUCCESS || !resp) {
		int liberr, syserr;
		char *msg = NULL;
		snmp_sess_error(h, &liberr, &syserr, &msg);
		snprintf(err, ERR_LEN, "%s", msg ? msg : "request failed");
		free(msg);
		rc = -1;
	} else if (resp->errstat == SNMP_ERR_TOOBIG) {
		rc = 1;
	} else if (resp->errstat != SNMP_ERR_NOERROR) {
		snprintf(err, ERR_LEN, "agent error: %s (varbind %ld)",
		         snmp_errstring(resp->errstat), resp->errindex);
		rc = -1;
	} else {
		/* RFC 3416 §4.2.1: the varbinds of the reply in the order asked */
		size_t i = 0;
		for (netsnmp_variable_list *v = resp->variables; v && i < n * NCOLS;
		     v = v->next_variable, i++) {
			size_t k = i / NCOLS;
			int c = (int)(i % NCOLS);
			if (is_col(v, c, idx[k]))
				take_var(v, c, &g[k]);
		}
	}
	if (resp)
		snmp_free_pdu(resp);
	return rc;
}

/* ---- the poller thread ------------------------------------------------- */

/* Stores interface idx's values g of agent a (mu held). */
static void store(ng_snmp *p, struct agent *a, uint32_t idx, struct got *g)
{
	for (size_t j = 0; j < a->n; j++) {
		struct iface *f = &a->ifs[j];
		if (f->index != idx)
			continue;
		char *name = g->s[COL_NAME] ? g->s[COL_NAME] : g->s[COL_DESCR];
		char *desc = g->s[COL_ALIAS];
		uint64_t speed = ng_snmp_speed(g->has[COL_SPEED], g->u[COL_SPEED], g->has[COL_HIGH],
		                               g->u[COL_HIGH]);
		if (!f->gen || !same(f->name, name) || !same(f->desc, desc) || f->speed != speed) {
			free(f->name);
			free(f->desc);
			f->name = name ? strdup(name) : NULL;
			f->desc = desc ? strdup(desc) : NULL;
			f->speed = speed;
			f->gen = ++p->gen;
		}
		return;
	}
}

static void free_got(struct got *g, size_t n)
{
	for (size_t k = 0; k < n; k++)
		for (int c = 0; c < 3; c++)
			free(g[k].s[c]);
}

/* Whether f is to be asked now: never asked, or asked a refresh ago (an
 * interface never named, 30 s ago at most: an agent that was away at
 * the start is not waited for a whole refresh). */
static bool is_due(const ng_snmp *p, const struct iface *f, uint64_t now)
{
	uint64_t every = f->gen || p->refresh_ms < RETRY_MS ? p->refresh_ms : RETRY_MS;
	return !f->polled_ms || f->polled_ms + every <= now;
}

/* Asks up to IFS_PER_GET of agent ai's due interfaces, opening its
 * session when closed.  Returns 1 when nothing was due, 0 after a reply,
 * -1 after a failure.  Called without mu. */
static int poll_some(ng_snmp *p, size_t ai, uint64_t now)
{
	uint32_t due[IFS_PER_GET];
	size_t n = 0;
	pthread_mutex_lock(&p->mu);
	struct agent *a = &p->ag[ai];
	for (size_t j = 0; j < a->n && n < IFS_PER_GET; j++)
		if (is_due(p, &a->ifs[j], now)) {
			due[n++] = a->ifs[j].index;
			a->ifs[j].polled_ms = now;
		}
	void *h = a->sess;
	pthread_mutex_unlock(&p->mu);
	if (!n)
		return 1;
	char err[ERR_LEN] = "";
	bool timeout = false;
	struct got g[IFS_PER_GET];
	memset(g, 0, sizeof g);
	int rc = -1;
	if (!h)
		h = open_session(p, a, err); /* a->cfg and a->peer are fixed: no lock */
	if (h) {
		rc = get_ifs(h, due, n, g, err, &timeout);
		for (size_t k = 0; rc == 1 && k < n; k++) /* tooBig: one at a time */
			if ((rc = get_ifs(h, &due[k], 1, &g[k], err, &timeout)) == 1) {
				snprintf(err, ERR_LEN,
				         "reply too big for the agent (tooBig) for one "
				         "interface");
				rc = -1;
			}
	}
	if (rc < 0 && !timeout && !strncmp(err, "Timeout", 7))
		timeout = true;
	pthread_mutex_lock(&p->mu);
	a = &p->ag[ai];
	a->polls++;
	if (rc == 0) {
		a->sess = h;
		a->replies++;
		a->last_ok_ms = ng_now_ms();
		for (size_t k = 0; k < n; k++)
			store(p, a, due[k], &g[k]);
	} else {
		a->sess = NULL;
		a->failures++;
		a->timeouts += timeout;
		a->last_err_ms = ng_now_ms();
		bool changed = strcmp(a->last_error, err) != 0;
		snprintf(a->last_error, sizeof a->last_error, "%s", err);
		if (changed) {
			char ex[NG_ADDR_STRLEN];
			ng_warn(
			    "SNMP: exporter %s, agent %s: %s (the names known are kept; counted "
			    "as failures in the Exporters page's SNMP table)",
			    ng_addr_format(a->ex, ex), a->peer, err);
		}
	}
	pthread_mutex_unlock(&p->mu);
	if (rc != 0 && h)
		snmp_sess_close(h);
	free_got(g, n);
	return rc == 0 ? 0 : -1;
}

/* Polls every due interface of agent ai; after a failure the rest of
 * them wait for the next refresh (a dead agent costs one timeout a
 * round, not one per interface). */
static void poll_agent(ng_snmp *p, size_t ai, uint64_t now)
{
	int rc;
	while ((rc = poll_some(p, ai, now)) == 0) {
		pthread_mutex_lock(&p->mu);
		bool stop = p->stop;
		pthread_mutex_unlock(&p->mu);
		if (stop)
			return;
	}
	if (rc < 0) {
		pthread_mutex_lock(&p->mu);
		struct agent *a = &p->ag[ai];
		for (size_t j = 0; j < a->n; j++)
			if (is_due(p, &a->ifs[j], now))
				a->ifs[j].polled_ms = now;
		pthread_mutex_unlock(&p->mu);
	}
}

static void *run(void *arg)
{
	ng_snmp *p = arg;
	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		size_t nag = p->nag;
		pthread_mutex_unlock(&p->mu);
		uint64_t now = ng_now_ms();
		for (size_t i = 0; i < nag; i++)
			poll_agent(p, i, now);
		pthread_mutex_lock(&p->mu);
		if (p->stop)
			break;
		/* again in 250 ms at most: new interfaces are signalled, refreshes
		 * come due with time */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p->cv, &p->mu, &ts);
	}
	pthread_mutex_unlock(&p->mu);
	for (size_t i = 0; i < p->nag; i++)
		if (p->ag[i].sess) {
			snmp_sess_close(p->ag[i].sess);
			p->ag[i].sess = NULL;
		}
	return NULL;
}

/* net-snmp once per process: no configuration files, no persistent
 * state, no MIB files (OIDs are numbers here), no log on stderr. */
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static void lib_init(void)
{
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
	netsnmp_ds_set_int(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_MIB_WARNINGS, 0);
	/* no MIB directory: init_snmp would parse the system's MIB files
	 * and warn on stderr about the modules Debian leaves out */
	netsnmp_set_mib_directory("/nonexistent/nagare-reads-no-mibs");
	/* a handler that drops: with none at all net-snmp logs to stderr */
	snmp_disable_log();
	netsnmp_register_loghandler(NETSNMP_LOGHANDLER_NONE, LOG_EMERG);
	init_snmp("nagare");
}

ng_snmp *ng_snmp_start(const ng_config *cfg, char *err, size_t errlen)
{
	err[0] = 0;
	size_t nfixed = 0;
	for (size_t i = 0; i < cfg->nexps; i++)
		nfixed += cfg->exps[i].snmp != NULL;
	if (!nfixed && !cfg->snmp.fallback)
		return NULL;
	ng_snmp *p = calloc(1, sizeof *p);
	if (!p)
		goto nomem;
	const ng_cfg_snmp_poll *o = &cfg->snmp;
	p->cfg = cfg;
	p->refresh_ms = (uint64_t)(o->refresh_s ? o->refresh_s : NG_SNMP_REFRESH_S) * 1000;
	p->timeout_ms = o->timeout_ms ? o->timeout_ms : NG_SNMP_TIMEOUT_MS;
	p->retries = o->retries_set ? o->retries : NG_SNMP_RETRIES;
	p->max_exporters = o->max_exporters ? o->max_exporters : NG_SNMP_MAX_EXPORTERS;
	p->max_interfaces = o->max_interfaces ? o->max_interfaces : NG_SNMP_MAX_INTERFACES;
	p->any = cfg->snmp.fallback != NULL;
	p->fixed = calloc(nfixed ? nfixed : 1, 16);
	p->ag = calloc(p->max_exporters, sizeof *p->ag);
	if (!p->fixed || !p->ag)
		goto nomem;
	for (size_t i = 0; i < cfg->nexps; i++)
		if (cfg->exps[i].snmp)
			memcpy(p->fixed[p->nfixed++], cfg->exps[i].addr, 16);
	qsort(p->fixed, p->nfixed, 16, cmp_addr);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	pthread_once(&lib_once, lib_init);
	int rc = pthread_create(&p->th, NULL, run, p);
	if (rc) {
		snprintf(err, errlen, "SNMP: cannot start the poller thread: %s", strerror(rc));
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
		free(p->fixed);
		free(p->ag);
		free(p);
		return NULL;
	}
	return p;
nomem:
	snprintf(err, errlen, "SNMP: out of memory");
	if (p) {
		free(p->fixed);
		free(p->ag);
	}
	free(p);
	return NULL;
}

void ng_snmp_stop(ng_snmp *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->th, NULL);
	for (size_t i = 0; i < p->nag; i++) {
		for (size_t j = 0; j < p->ag[i].n; j++) {
			free(p->ag[i].ifs[j].name);
			free(p->ag[i].ifs[j].desc);
		}
		free(p->ag[i].ifs);
	}
	free(p->ag);
	free(p->fixed);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}
