/*
 * compact.c — `nagare compact --store DIR [--settle DURATION]`: the
 * collector's store maintenance (merging small segments, writing
 * rollups) run now, to the end, in the foreground: for a store filled by
 * an import or a collector that has stopped, or to give an existing
 * store its rollups.  Safe beside a running collector (the store's
 * maintenance lock) and beside readers (store.h).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "collector/maint.h"
#include "cli/store_path.h"
#include "cli/usage.h"
#include "core/timefmt.h"
#include "store/store.h"

static const char compact_help[] =
    "usage: nagare compact [--store DIR] [--settle DURATION]\n"
    "\n"
    "Merges the small segments of each hour and writes the rollups (flows summed\n"
    "per 5 minutes and per hour over a few fields) that top-N, time series and\n"
    "pair queries read instead of the flows when they can: what `nagare collect`\n"
    "does once a minute for hours that ended --settle ago, done now for all of\n"
    "them.  Query answers are the same with or without; only faster.\n"
    "\n"
    "  -s, --store DIR        flow store (default: $NAGARE_STORE, else\n"
    "                         /var/lib/nagare (the service's), else\n"
    "                         ~/.local/share/nagare)\n"
    "      --settle DURATION  leave hours that ended less than this ago (default 10m;\n"
    "                         0 takes every hour, also the current one)\n"
    "  -h, --help             this help\n"
    "\n"
    "Damaged segments are never merged into good ones nor given rollups: they are\n"
    "left in place, logged, and the exit status is 1 (as for any error); `nagare\n"
    "fsck` moves them aside.\n";

int ng_cmd_compact(int argc, char **argv)
{
	static const struct option opts[] = {{"store", required_argument, NULL, 's'},
	                                     {"settle", required_argument, NULL, 'S'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {0}};
	const char *dir = NULL;
	uint64_t settle = NG_MAINT_SETTLE_MS;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': dir = optarg; break;
		case 'S':
			if (!strcmp(optarg, "0"))
				settle = 0; /* a duration needs a unit; 0 alone means none */
			else if (!ng_parse_duration_ms(optarg, &settle))
				return ng_usage_fail("compact",
				                     "--settle '%s': use a duration like 10m or 2h",
				                     optarg);
			break;
		case 'h': fputs(compact_help, stdout); return 0;
		default: return ng_usage_error("compact", c, argv);
		}
	}
	if (optind < argc)
		return ng_usage_fail("compact", "unexpected argument '%s'", argv[optind]);
	char dbuf[4096];
	if (!(dir = ng_cli_store("compact", dir, false, dbuf, sizeof dbuf)))
		return 2;
	ng_store_maint_stats st = {0};
	uint64_t now = ng_now_ms();
	if (ng_store_compact(dir, now, settle, 0, &st) < 0 ||
	    ng_store_rollup(dir, now, settle, 0, false, &st) < 0) {
		fprintf(stderr, "nagare compact: %s is not a flow store (no %s/flows directory)\n",
		        dir, dir);
		return 1;
	}
	printf("compaction: %" PRIu64 " segments merged into %" PRIu64 " (%" PRIu64 " rows)\n",
	       st.segments_in, st.segments_out, st.rows);
	printf("rollups: %" PRIu64 " segments rolled up into %" PRIu64 " files (%" PRIu64
	       " rows)\n",
	       st.segments_rolled, st.rollups_written, st.rollup_rows);
	if (st.temporaries_removed)
		printf("temporaries: %" PRIu64
		       " left by an interrupted flush or compaction removed\n",
		       st.temporaries_removed);
	if (st.damaged)
		fprintf(stderr,
		        "nagare compact: %" PRIu64 " damaged segments left alone, not merged "
		        "(logged above): run `nagare fsck --store %s`\n",
		        st.damaged, dir);
	if (st.errors)
		fprintf(stderr, "nagare compact: %" PRIu64 " errors (logged above)\n", st.errors);
	return st.errors || st.damaged ? 1 : 0;
}
