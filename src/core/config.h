/*
 * config.h — the nagare configuration file (YAML 1.1, docs/configuration.md).
 *
 * The file gives the collector's options and the enrichment settings:
 * database paths, networks, exporter and interface names.  Command-line
 * flags override the file, and NAGARE_… environment variables override the
 * file too (flags win over both): ng_config_env applies the environment.
 *
 * Unknown keys are errors (a misspelt key silently ignored is a setting
 * silently lost); every error names the file, the line and the key.
 */
#ifndef NG_CONFIG_H
#define NG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"

typedef struct ng_cfg_iface {
	uint32_t index; /* SNMP ifIndex as exported in in_if / out_if */
	char *name;     /* e.g. "TenGigabitEthernet0/0/0" */
	char *description;
	uint64_t speed; /* bits per second, 0 unknown */
} ng_cfg_iface;

/* How to poll one exporter's SNMP agent for its interface names
 * (enrich/snmp.h, docs/enrichment.md "SNMP").  The security level of v3
 * follows from the keys given: none noAuthNoPriv, auth_key authNoPriv,
 * both authPriv. */
typedef struct ng_cfg_snmp {
	char *agent;      /* host name or address; NULL: the exporter's address */
	unsigned port;    /* UDP port; 0: 161 */
	unsigned version; /* 2 (v2c) or 3 */
	char *community;  /* v2c community */
	char *user;       /* v3 securityName (RFC 3414) */
	char *auth_proto; /* v3: "MD5", "SHA", "SHA-224", "SHA-256", "SHA-384", "SHA-512" */
	char *auth_key;   /* v3 authentication passphrase (8 characters at least) */
	char *priv_proto; /* v3: "DES" or "AES" (AES-128, RFC 3826) */
	char *priv_key;   /* v3 privacy passphrase (8 characters at least) */
} ng_cfg_snmp;

/* enrich.snmp: the poller's bounds and timing; 0 where the file gives
 * none (the defaults of enrich/snmp.h apply). */
typedef struct ng_cfg_snmp_poll {
	unsigned refresh_s;  /* seconds between two polls of an interface */
	unsigned timeout_ms; /* per request */
	unsigned retries;    /* per request, after the first try; set: retries_set */
	bool retries_set;
	unsigned max_exporters;  /* agents polled at most */
	unsigned max_interfaces; /* interfaces polled per exporter at most */
	ng_cfg_snmp *fallback;   /* enrich.snmp.default: for exporters without their own */
} ng_cfg_snmp_poll;

typedef struct ng_cfg_exporter {
	uint8_t addr[16]; /* IPv4-mapped */
	char *name;
	ng_cfg_iface *ifs;
	size_t nifs;
	ng_cfg_snmp *snmp; /* NULL: not polled (unless enrich.snmp.default) */
} ng_cfg_exporter;

typedef struct ng_cfg_network {
	uint8_t net[16];          /* IPv4-mapped, host bits clear */
	unsigned plen;            /* prefix length in the 128-bit space */
	char *name, *role, *site; /* NULL when not given */
} ng_cfg_network;

/* What a classification rule sets (enrich.classify, docs/configuration.md
 * "Classification"): the exporter's attributes, then its interfaces'. */
enum ng_class_attr {
	NG_CLASS_GROUP,
	NG_CLASS_ROLE,
	NG_CLASS_SITE,
	NG_CLASS_REGION,
	NG_CLASS_TENANT,
	NG_CLASS_BOUNDARY,
	NG_CLASS_CONNECTIVITY,
	NG_CLASS_PROVIDER,
	NG_CLASS_COUNT
};
#define NG_CLASS_FIRST_IF NG_CLASS_BOUNDARY /* the interface attributes from here */

/* The keys of set: ("group", "role", ..., "provider"), by enum ng_class_attr. */
extern const char *const ng_class_attr_names[NG_CLASS_COUNT];

/* One rule: every condition given must hold; then each attribute it sets
 * that no earlier rule set is set (a value may hold \0-\9: the groups of
 * the last pattern of the rule, in the order exporter_name,
 * interface_name, interface_description).  Patterns are POSIX extended
 * regular expressions (regcomp REG_EXTENDED), checked at load. */
typedef struct ng_cfg_rule {
	bool has_net;            /* exporter: ADDRESS or ADDRESS/LEN */
	uint8_t net[16];         /* IPv4-mapped, host bits clear */
	unsigned plen;           /* in the 128-bit space */
	char *exporter_name;     /* pattern, NULL none */
	char *if_name, *if_desc; /* patterns, NULL none */
	char *set[NG_CLASS_COUNT];
	size_t line; /* of the rule in the file, for messages */
} ng_cfg_rule;

/* enrich.sampling: a rate for the exporters of a prefix (the longest
 * prefix holding the exporter's address applies): for their records that
 * carry none, or, with override, for all of them. */
typedef struct ng_cfg_sampling {
	uint8_t net[16];
	unsigned plen;
	uint32_t rate; /* packets per sample, 1 to 2^31 */
	bool override;
} ng_cfg_sampling;
/* The clickhouse: section (docs/clickhouse.md, docs/configuration.md). */
typedef struct ng_cfg_clickhouse {
	char *url;      /* http[s]://HOST:PORT/DATABASE; NULL: no ClickHouse */
	char *database; /* NULL: the URL's path */
	char *user, *password;
	char *ca_file, *cert_file, *key_file; /* TLS; NULL: none */
	uint64_t timeout_ms;                  /* a request; 0: 30 s */
	uint64_t spool_max;                   /* bytes; 0: 1 GiB */
	uint64_t retention_ms;                /* flows; 0: keep (or collect --retention) */
	uint64_t rollup_retention_ms;         /* flows_1m, flows_1h; 0: keep */
	unsigned batch_rows;                  /* 0: 50 000 */
	bool gzip;                            /* compression: gzip */
	bool store_too;    /* store: true: also the embedded store (the default with a
	                    * --store or collect.store) */
	bool store_set;    /* store: given */
	char *cluster;     /* the servers' cluster name (<remote_servers>); NULL: one server */
	bool insert_local; /* insert: local (into the URL server's flows_local); else
	                    * distributed (through DB.flows, sharded by exporter) */
	bool replicated;   /* replicated: true: Replicated*MergeTree local tables */
	char **nodes;      /* nodes: the cluster servers' HTTP URLs; NULL: found */
	size_t nnodes;
} ng_cfg_clickhouse;

/* collect.implausible_time */
enum { NG_CFG_KEEP = 1, NG_CFG_REJECT = 2 };

typedef struct ng_config {
	char *path; /* file read, NULL when none */
	/* collect */
	char *store;
	char **listen;
	size_t nlisten;
	char *json;
	unsigned stats_interval;  /* 0: not given */
	unsigned workers;         /* collect.workers, 1 to 64; 0: not given */
	char *http;               /* HTTP API address "ADDR:PORT", NULL: default */
	char *http_token;         /* HTTP API token, NULL: none */
	char *http_allowed_hosts; /* names accepted as Host besides loopback ones, comma
	                           * separated; NULL: none (docs/security.md) */
	unsigned http_max_connections, http_max_per_client, http_idle_timeout; /* 0: default */
	unsigned http_cache_mib; /* MiB of the query cache (http.h cache_mib) ... */
	bool http_cache_set;     /* ... when given (0 MiB: none) */
	uint64_t max_past_ms;    /* time window (docs/security.md); 0: not given */
	uint64_t max_future_ms;  /* when max_future_set */
	bool max_future_set;
	int implausible_time; /* 0 not given, NG_CFG_KEEP, NG_CFG_REJECT */
	/* enrich */
	char *geoip_db;      /* MaxMind-format country/city (or IPinfo) database */
	char *asn_db;        /* MaxMind-format ASN database (may equal geoip_db) */
	bool geoip_optional; /* run on without a database that fails to open */
	char *language;      /* names language, default "en" */
	bool no_services;    /* services: false in the file */
	ng_cfg_network *nets;
	size_t nnets;
	ng_cfg_exporter *exps;
	size_t nexps;
	ng_cfg_snmp_poll snmp; /* enrich.snmp */
	ng_cfg_rule *rules;    /* enrich.classify, in order */
	size_t nrules;
	ng_cfg_sampling *samplings; /* enrich.sampling */
	size_t nsamplings;
	ng_cfg_clickhouse clickhouse;
	/* limits: (core/limits.h); 0 where the file gives none (the default
	 * applies: ng_limits_fill) */
	ng_limits limits;
} ng_config;

/* Reads the YAML file `path` into `c` (zeroed first).  Returns 0, or -1
 * with a message in err ("FILE:LINE: what is wrong"). */
int ng_config_load(const char *path, ng_config *c, char *err, size_t errlen);

/* Applies NAGARE_STORE, NAGARE_JSON, NAGARE_GEOIP_DB, NAGARE_ASN_DB,
 * NAGARE_GEOIP_OPTIONAL (1/true/yes), NAGARE_LANGUAGE over `c`.
 * Returns 0, or -1 with a message in err. */
int ng_config_env(ng_config *c, char *err, size_t errlen);

/* Replaces *dst with a copy of src (NULL clears).  Returns 0, -1 on ENOMEM. */
int ng_config_set(char **dst, const char *src);

/* Frees what the configuration holds and zeroes it. */
void ng_config_free(ng_config *c);

#endif
