/*
 * doctor.c — `nagare doctor`: checks this machine, the store and the
 * configuration for what would make a collector lose flows or answer
 * wrongly, one line a check (collector/doctor.c does the checking).
 *
 * Exit status: 0 nothing failed (warnings may be printed), 1 a check
 * failed, 2 usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/store_path.h"
#include "cli/usage.h"
#include "collector/doctor.h"
#include "enrich/geodata.h"

static const char doctor_help[] =
    "usage: nagare doctor [--store DIR] [--config FILE] [--listen ADDR:PORT]...\n"
    "                     [--http ADDR:PORT | --no-http] [--clickhouse URL]\n"
    "\n"
    "Checks what stands between this machine and a collector that loses nothing, one\n"
    "line a check, ok / warn / fail with what to do: the kernel's UDP buffer and\n"
    "backlog settings (with the exact lines for " NG_DOCTOR_SYSCTL_FILE ") and the\n"
    "buffer a socket is granted, the clock, the store's file system and free space,\n"
    "what the last collector run hit (limits, kernel drops, implausible times, the\n"
    "quarantine), the listen ports, the GeoIP/ASN databases and their age, the HTTP\n"
    "address and token.  `nagare collect` logs the machine's warnings at start.\n"
    "\n"
    "  -s, --store DIR          flow store (default: the configuration's, else the\n"
    "                           default store when it exists: docs/cli.md)\n"
    "  -c, --config FILE        YAML configuration (or NAGARE_CONFIG)\n"
    "  -l, --listen ADDR:PORT   a collector address to check (repeatable; default:\n"
    "                           the configuration's, else :2055 :4739 :6343 :9995)\n"
    "      --http ADDR:PORT     the HTTP address to check (default 127.0.0.1:8080)\n"
    "      --no-http            no HTTP server\n"
    "      --clickhouse URL     the ClickHouse to check: it answers, the schema is\n"
    "                           current, inserts keep up (default: clickhouse.url)\n"
    "  -q, --quiet              print warnings and failures only\n"
    "      --sysctl-conf        print the sysctl.d file of the values checked (the\n"
    "                           package's /usr/lib/sysctl.d/60-nagare.conf) and exit\n"
    "  -h, --help               this help\n"
    "\n"
    "Exit status: 0 nothing failed, 1 a check failed, 2 usage error.\n";

typedef struct out {
	bool quiet;
	unsigned n[3];
} out;

static void print(ng_doc_level l, const char *check, const char *what, const char *fix, void *arg)
{
	out *o = arg;
	o->n[l]++;
	if (o->quiet && l == NG_DOC_OK)
		return;
	printf("%-5s %s: %s\n", ng_doc_level_name(l), check, what);
	if (fix)
		printf("      -> %s\n", fix);
}

typedef struct doctor_args {
	const char *store, *config, *http;
	const char *listen[32];
	size_t nlisten;
	bool no_http, quiet;
	const char *proc_root;  /* --proc-root (tests): a fake proc/ tree */
	const char *clickhouse; /* --clickhouse URL */
} doctor_args;

/* Returns -1 to go on, else the exit status. */
static int parse(int argc, char **argv, doctor_args *a)
{
	static const struct option opts[] = {{"store", required_argument, NULL, 's'},
	                                     {"config", required_argument, NULL, 'c'},
	                                     {"listen", required_argument, NULL, 'l'},
	                                     {"http", required_argument, NULL, 'H'},
	                                     {"no-http", no_argument, NULL, 'N'},
	                                     {"proc-root", required_argument, NULL, 'P'},
	                                     {"quiet", no_argument, NULL, 'q'},
	                                     {"sysctl-conf", no_argument, NULL, 'S'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {"clickhouse", required_argument, NULL, 'C'},
	                                     {0}};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:c:l:qh", opts, NULL)) != -1) {
		switch (c) {
		case 's': a->store = optarg; break;
		case 'c': a->config = optarg; break;
		case 'l':
			if (a->nlisten == sizeof a->listen / sizeof a->listen[0])
				return ng_usage_fail("doctor", "too many --listen addresses");
			a->listen[a->nlisten++] = optarg;
			break;
		case 'H': a->http = optarg; break;
		case 'N': a->no_http = true; break;
		case 'P': a->proc_root = optarg; break;
		case 'C': a->clickhouse = optarg; break;
		case 'q': a->quiet = true; break;
		case 'S': {
			char buf[4096];
			ng_doctor_sysctl_conf(buf, sizeof buf);
			fputs(buf, stdout);
			return 0;
		}
		case 'h': fputs(doctor_help, stdout); return 0;
		default: return ng_usage_error("doctor", c, argv);
		}
	}
	if (optind < argc)
		return ng_usage_fail("doctor", "unexpected argument '%s'", argv[optind]);
	return -1;
}

int ng_cmd_doctor(int argc, char **argv)
{
	doctor_args a = {0};
	int rc = parse(argc, argv, &a);
	if (rc >= 0)
		return rc;
	ng_config cfg = {0};
	char err[1024]; /* room for the longest key list (limits:) */
	const char *path = a.config ? a.config : getenv("NAGARE_CONFIG");
	if ((path && *path && ng_config_load(path, &cfg, err, sizeof err) < 0) ||
	    ng_config_env(&cfg, err, sizeof err) < 0) {
		fprintf(stderr, "nagare doctor: %s\n", err);
		ng_config_free(&cfg);
		return 1;
	}
	/* the databases collect would use, the default ones included */
	if (ng_geodata_apply(&cfg, NULL) < 0) {
		fprintf(stderr, "nagare doctor: out of memory\n");
		ng_config_free(&cfg);
		return 1;
	}
	/* the store collect would use (store_path.h), when it is there */
	char dbuf[4096];
	const char *store = a.store ? a.store : cfg.store;
	if (!store && (store = ng_cli_store("doctor", NULL, false, dbuf, sizeof dbuf)) &&
	    access(store, F_OK) != 0)
		store = NULL;
	ng_doctor_opts o = {.proc_root = a.proc_root,
	                    .store = store,
	                    .listen = a.nlisten ? a.listen : (const char *const *)cfg.listen,
	                    .nlisten = a.nlisten ? a.nlisten : cfg.nlisten,
	                    .cfg = &cfg,
	                    .http = a.http ? a.http : cfg.http,
	                    .http_off = a.no_http,
	                    .http_token = cfg.http_token && *cfg.http_token,
	                    .ports = true,
	                    .state = true,
	                    .clickhouse = a.clickhouse};
	out so = {.quiet = a.quiet};
	char *lines = NULL;
	ng_doc_level worst = ng_doctor_run(&o, print, &so, &lines);
	if (lines) {
		printf("\nTo tune the kernel for nagare, put these lines in " NG_DOCTOR_SYSCTL_FILE
		       "\nand apply them with `sysctl --system` (no reboot needed):\n\n%s",
		       lines);
		free(lines);
	}
	printf("\ndoctor: %u ok, %u warn, %u fail\n", so.n[NG_DOC_OK], so.n[NG_DOC_WARN],
	       so.n[NG_DOC_FAIL]);
	ng_config_free(&cfg);
	return worst == NG_DOC_FAIL ? 1 : 0;
}
