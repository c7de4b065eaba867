/*
 * fsck.c — `nagare fsck --store DIR [--dry-run]`: check every segment and
 * rollup of a store whole and move the damaged ones aside into
 * DIR/quarantine/ (never deleting them; store/fsck.c says how).
 *
 * Queries already skip a damaged segment whole (store/scan.c), so fsck
 * changes no answer; it makes the damage visible once, takes the files
 * out of every later scan's way (each would check and report them
 * again), and keeps them for whoever wants to look.
 *
 * Exit status: 0 every file whole; 1 damaged files found (moved, or with
 * --dry-run only listed); 2 usage error; 3 not a store, or a damaged
 * file could not be moved.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/store_path.h"
#include "cli/usage.h"
#include "store/store.h"

static const char fsck_help[] =
    "usage: nagare fsck [--store DIR] [--dry-run]\n"
    "\n"
    "Checks every segment and rollup of a flow store whole (header, frame tables,\n"
    "every block of every column decompressed and its checksum verified) and moves\n"
    "each damaged file into DIR/quarantine/ under its own relative path; a damaged\n"
    "segment's rollups go with it.  Nothing is deleted.  Safe beside a running\n"
    "collector.  Queries skip damaged segments whole whether or not fsck ran.\n"
    "\n"
    "  -s, --store DIR  flow store (default: $NAGARE_STORE,\n"
    "                   else /var/lib/nagare (the service's), else\n"
    "                   ~/.local/share/nagare)\n"
    "  -n, --dry-run    list the damaged files, move nothing\n"
    "  -q, --quiet      print the summary only\n"
    "  -h, --help       this help\n"
    "\n"
    "Exit status: 0 every file whole, 1 damaged files found (moved; with\n"
    "--dry-run, listed), 2 usage error, 3 not a store or a file could not be moved.\n";

typedef struct out_ctx {
	const char *dir;
	bool quiet;
} out_ctx;

/* ng_fsck_opts.fn: one line a damaged file, paths relative to the store. */
static void on_damaged(const char *path, const char *why, const char *moved_to,
                       const char *move_err, void *arg)
{
	const out_ctx *o = arg;
	if (o->quiet)
		return;
	size_t dl = strlen(o->dir);
	const char *rel = strncmp(path, o->dir, dl) ? path : path + dl + 1;
	printf("damaged: %s: %s", rel, why);
	if (moved_to)
		printf(" -> %s", strncmp(moved_to, o->dir, dl) ? moved_to : moved_to + dl + 1);
	else if (move_err)
		printf(" (%s)", move_err);
	putchar('\n');
}

int ng_cmd_fsck(int argc, char **argv)
{
	static const struct option opts[] = {{"store", required_argument, NULL, 's'},
	                                     {"dry-run", no_argument, NULL, 'n'},
	                                     {"quiet", no_argument, NULL, 'q'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {0}};
	const char *dir = NULL;
	bool dry = false, quiet = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:nqh", opts, NULL)) != -1) {
		switch (c) {
		case 's': dir = optarg; break;
		case 'n': dry = true; break;
		case 'q': quiet = true; break;
		case 'h': fputs(fsck_help, stdout); return 0;
		default: return ng_usage_error("fsck", c, argv);
		}
	}
	if (optind < argc)
		return ng_usage_fail("fsck", "unexpected argument '%s'", argv[optind]);
	char dbuf[4096];
	if (!(dir = ng_cli_store("fsck", dir, false, dbuf, sizeof dbuf)))
		return 2;
	size_t dl = strlen(dir);
	char d[4096];
	snprintf(d, sizeof d, "%.*s", (int)(dl > 1 && dir[dl - 1] == '/' ? dl - 1 : dl), dir);
	out_ctx oc = {d, quiet};
	ng_fsck_opts o = {.dry_run = dry, .fn = on_damaged, .arg = &oc};
	ng_fsck_stats st;
	if (ng_store_fsck(d, &o, &st)) {
		fprintf(stderr, "nagare fsck: %s is not a flow store (no %s/flows directory)\n", d,
		        d);
		return 3;
	}
	const uint64_t bad = st.damaged_segments + st.damaged_rollups;
	printf("fsck: %" PRIu64 " segments and %" PRIu64 " rollups checked: %" PRIu64
	       " damaged segments (with %" PRIu64 " rollups), %" PRIu64 " damaged rollups",
	       st.segments, st.rollups, st.damaged_segments, st.rollups_with_segment,
	       st.damaged_rollups);
	if (bad && dry)
		printf("; dry run: nothing moved\n");
	else if (bad)
		printf("; %" PRIu64 " files moved to %s/quarantine\n", st.moved, d);
	else
		printf("\n");
	if (st.unreadable)
		fprintf(stderr, "nagare fsck: %" PRIu64 " hour directories could not be read\n",
		        st.unreadable);
	if (st.move_errors) {
		fprintf(stderr, "nagare fsck: %" PRIu64 " damaged files could not be moved\n",
		        st.move_errors);
		return 3;
	}
	return bad ? 1 : 0;
}
