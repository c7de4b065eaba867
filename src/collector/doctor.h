/*
 * doctor.h — what stands between this machine and a collector that loses
 * nothing: the checks of `nagare doctor`, which `nagare collect` also runs
 * (the machine's part) and logs at start.
 *
 * Each check gives one finding: a level (ok, warn, fail), the check's
 * name ("sysctl net.core.rmem_max", "store space", "port 127.0.0.1:2055"),
 * what was found, and what to do when it is not ok.  The kernel tuning
 * checked is the one the ElastiFlow installation guide makes people do by
 * hand (net.core.rmem_max, netdev_max_backlog, udp_rmem_min, udp_mem),
 * with the values nagare needs and why; see docs/doctor.md.
 */
#ifndef NG_COLLECTOR_DOCTOR_H
#define NG_COLLECTOR_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"

typedef enum ng_doc_level { NG_DOC_OK = 0, NG_DOC_WARN = 1, NG_DOC_FAIL = 2 } ng_doc_level;

/* The file the kernel settings go in, and the command that applies it. */
#define NG_DOCTOR_SYSCTL_FILE "/etc/sysctl.d/60-nagare.conf"

typedef struct ng_doctor_opts {
	/* Where proc/ is: "" or NULL for the running kernel's /proc; a test
	 * gives a directory holding a fake proc/sys/... tree. */
	const char *proc_root;
	const char *store;         /* NULL: no store checks */
	const char *const *listen; /* the collector's addresses; NULL: defaults */
	size_t nlisten;
	const ng_config *cfg;   /* databases, HTTP; NULL: none configured */
	const char *http;       /* HTTP address (flag or configuration); NULL: */
	bool http_off;          /* ... the default, unless off */
	bool http_token;        /* a token is configured */
	bool ports;             /* check the listen ports are free */
	bool state;             /* read the store's state: limits, drops */
	const char *clickhouse; /* ClickHouse URL to check; NULL: cfg's clickhouse.url */
	bool clickhouse_off;    /* no ClickHouse check (collect's start: the sink checks) */
} ng_doctor_opts;

/* One finding: `check` names it, `what` says what was found, `fix` what to
 * do (NULL when ok).  Strings valid during the call only. */
typedef void (*ng_doctor_fn)(ng_doc_level level, const char *check, const char *what,
                             const char *fix, void *arg);

/*
 * Runs every check `o` asks for, calling `fn` once a finding, in order:
 * kernel (sysctls, the receive buffer a socket is granted), clock, store
 * (file system, free space), state (limits hit, kernel drops, time
 * window, quarantine: from STORE/state/exporters.json), ports, databases,
 * HTTP, ClickHouse (reachable, schema current, inserts keeping up).  When a sysctl is below what
 * nagare needs, *sysctl_lines (when not NULL) gets the malloc'ed text of NG_DOCTOR_SYSCTL_FILE that
 * fixes them all (owned by the caller), else NULL.  Returns the worst level.
 */
ng_doc_level ng_doctor_run(const ng_doctor_opts *o, ng_doctor_fn fn, void *arg,
                           char **sysctl_lines);

/* The sysctl.d file the package installs (/usr/lib/sysctl.d/60-nagare.conf):
 * a comment, then "KEY = VALUE" for each setting check_sysctls wants, at
 * the value it wants, each with why (udp_mem depends on the machine and is
 * left to doctor).  Written into buf (len bytes, NUL-terminated when it
 * fits; 4096 is enough).  Returns the length it needs, as snprintf. */
size_t ng_doctor_sysctl_conf(char *buf, size_t len);

/* "ok", "warn", "fail". */
const char *ng_doc_level_name(ng_doc_level l);

#endif
