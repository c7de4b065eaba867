/*
 * main.c — the nagare command: one program, several subcommands.
 *
 *   nagare collect  receive flow exports, store them (src/cli/collect.c,
 *                   running src/collector/)
 *   nagare decode   decode captures of export packets to NDJSON (src/cli/decode.c)
 *   nagare query    query a flow store (src/cli/query.c)
 *   nagare status   per-exporter counters of a store (src/cli/status.c)
 *   nagare counters sFlow counter samples of a store (src/cli/counters.c)
 *   nagare serve    HTTP API and dashboards over a store (src/cli/serve.c)
 *   nagare compact  store maintenance now: compaction, rollups (src/cli/compact.c)
 *   nagare fsck     check every file of a store, move damaged ones aside (src/cli/fsck.c)
 *   nagare doctor   check the machine, the store and the configuration (src/cli/doctor.c)
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *doc;
} commands[] = {
    {"collect", ng_cmd_collect, "receive NetFlow v5/v9, IPFIX and sFlow, store the flows"},
    {"decode", ng_cmd_decode, "decode pcap or raw export payload files to NDJSON flows"},
    {"query", ng_cmd_query, "list flows or top-N statistics from a flow store"},
    {"status", ng_cmd_status, "per-exporter counters of a flow store"},
    {"counters", ng_cmd_counters, "sFlow interface/host counter samples of a store"},
    {"serve", ng_cmd_serve, "HTTP API and dashboards over a flow store"},
    {"compact", ng_cmd_compact, "merge small segments and write rollups of a flow store now"},
    {"fsck", ng_cmd_fsck, "check every segment and rollup, move damaged ones to quarantine/"},
    {"doctor", ng_cmd_doctor, "check kernel tuning, clock, store, ports, databases, limits hit"},
    {"clickhouse", ng_cmd_clickhouse, "create or upgrade nagare's schema in ClickHouse (init)"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: nagare COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].doc);
	fprintf(out,
	        "\n'nagare COMMAND --help' for a command's options; see docs/ and man nagare.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("nagare %s\n", NG_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "nagare: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
