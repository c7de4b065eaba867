/*
 * decode.c — `nagare decode [--json-out FILE] FILE...`: decode captures or
 * raw export payload files to NDJSON flow records.
 *
 * Every file goes through one decoder, in the order given, so templates
 * read from one file decode the data sets of the next (the corpus often
 * keeps them in sibling files).  Flows go to stdout (or --json-out FILE),
 * one JSON object a line, in the same form as `collect --json` and
 * `query --format ndjson`.  A summary of counters goes to stderr.
 *
 * Exit status: 0 when every file was read (malformed exports are counted,
 * not fatal), 1 when a file could not be read or the output failed,
 * 2 on a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/usage.h"
#include "core/addr.h"
#include "decode/decoder.h"
#include "net/capture.h"
#include "sink/json.h"
#include "store/exporters.h"

static const char decode_help[] =
    "usage: nagare decode [--json-out FILE] FILE...\n"
    "\n"
    "Decodes NetFlow v1/v5/v7/v9, IPFIX and sFlow export packets from pcap or\n"
    "pcapng captures (any UDP port, IPv4 or IPv6) or from raw UDP payload files,\n"
    "and prints one JSON object per flow record on stdout.  Files share one\n"
    "decoder, in order: give the template file before its data file.  A raw\n"
    "payload file has the exporter address 0.0.0.0.\n"
    "\n"
    "  -o, --json-out FILE  write the NDJSON flows to FILE instead of stdout\n"
    "  -q, --quiet          no counter summary on stderr\n"
    "  -h, --help           this help\n"
    "\n"
    "Exit status: 0 all files read, 1 a file could not be read, 2 usage error.\n";

struct decode_run {
	ng_decoder *dec;
	ng_flow_batch batch;
	FILE *out;
	const char *out_name;
	uint64_t flows;
	int write_failed;
};

/* Capture callback: decode one datagram, print its records. */
static int on_datagram(const ng_datagram *dg, void *arg)
{
	struct decode_run *r = arg;
	ng_flow_batch_clear(&r->batch);
	ng_decode(r->dec, dg, &r->batch);
	if (r->batch.n && ng_json_write_flows(r->out, r->batch.flows, r->batch.n) < 0) {
		r->write_failed = errno ? errno : EIO;
		return 1; /* stop: the reader of our output is gone */
	}
	r->flows += r->batch.n;
	return 0;
}

/* Data sets that missed their template and were neither decoded later
 * nor dropped are still held at the end of input. */
static uint64_t still_held(const ng_exporter_stats *s)
{
	uint64_t done = s->held + s->errors[NG_DERR_HELD_DROPPED];
	return s->template_misses > done ? s->template_misses - done : 0;
}

static void print_stats(const ng_exporter_stats *s, void *arg)
{
	(void)arg;
	char a[NG_ADDR_STRLEN];
	fprintf(stderr,
	        "exporter %s domain %" PRIu32 " (%s): packets %" PRIu64 ", records %" PRIu64
	        ", options records %" PRIu64 ", templates %" PRIu64 ", template misses %" PRIu64
	        ", held %" PRIu64 ", lost %" PRIu64,
	        ng_addr_format(s->exporter, a), s->domain, ng_protocol_name(s->version), s->packets,
	        s->records, s->options_records, s->templates, s->template_misses, s->held, s->lost);
	if (s->counter_samples || s->lost_samples || s->discards)
		fprintf(stderr,
		        ", counter samples %" PRIu64 ", lost samples %" PRIu64
		        ", discards %" PRIu64,
		        s->counter_samples, s->lost_samples, s->discards);
	if (s->restarts)
		fprintf(stderr, ", restarts %" PRIu64, s->restarts);
	fputc('\n', stderr);
	int any = 0;
	for (int i = 0; i < NG_DERR_COUNT; i++) {
		if (!s->errors[i])
			continue;
		fprintf(stderr, "%s%s %" PRIu64, any ? ", " : "  errors: ", ng_decode_error_name(i),
		        s->errors[i]);
		any = 1;
	}
	if (any)
		fputc('\n', stderr);
	uint64_t waiting = still_held(s);
	if (waiting)
		fprintf(stderr,
		        "  %" PRIu64 " data set(s) still held at end of input: their template "
		        "never arrived (give the template file first)\n",
		        waiting);
}

static void print_summary(const struct decode_run *r, const ng_capture_stats *cs, int files,
                          int failed)
{
	fprintf(stderr,
	        "nagare decode: %d of %d file(s) read, %" PRIu64 " packets, %" PRIu64
	        " export datagrams, %" PRIu64 " flow records\n",
	        files - failed, files, cs->packets, cs->datagrams, r->flows);
	if (cs->skipped || cs->truncated)
		fprintf(stderr,
		        "capture: %" PRIu64 " frames skipped (not UDP over IPv4/IPv6; %" PRIu64
		        " IP fragments, %" PRIu64 " malformed), %" PRIu64
		        " datagrams cut short by the snap length\n",
		        cs->skipped, cs->fragments, cs->malformed, cs->truncated);
	ng_decoder_foreach_stats(r->dec, print_stats, NULL);
}

int ng_cmd_decode(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json-out", required_argument, NULL, 'o'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {0, 0, 0, 0},
	};
	const char *json_out = NULL;
	int quiet = 0, c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': json_out = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': fputs(decode_help, stdout); return 0;
		default: return ng_usage_error("decode", c, argv);
		}
	}
	if (optind >= argc)
		return ng_usage_fail("decode", "no input file");

	struct decode_run r = {.out = stdout, .out_name = "stdout"};
	if (json_out && strcmp(json_out, "-")) {
		r.out = fopen(json_out, "w");
		r.out_name = json_out;
		if (!r.out) {
			fprintf(stderr, "nagare decode: cannot write %s: %s\n", json_out,
			        strerror(errno));
			return 1;
		}
	}
	/* Many small lines: a large buffer saves a write per record. */
	static char obuf[1 << 16];
	setvbuf(r.out, obuf, _IOFBF, sizeof obuf);
	r.dec = ng_decoder_new(NULL);
	if (!r.dec) {
		fprintf(stderr, "nagare decode: out of memory\n");
		return 1;
	}
	ng_capture_stats cs = {0};
	int failed = 0, files = 0;
	for (int i = optind; i < argc && !r.write_failed; i++, files++) {
		char err[512];
		if (ng_capture_read(argv[i], on_datagram, &r, &cs, err, sizeof err) == -1) {
			fprintf(stderr, "nagare decode: %s\n", err);
			failed++;
		}
	}
	if (fflush(r.out) != 0 && !r.write_failed)
		r.write_failed = errno ? errno : EIO;
	if (r.write_failed)
		fprintf(stderr, "nagare decode: writing %s: %s\n", r.out_name,
		        strerror(r.write_failed));
	if (!quiet)
		print_summary(&r, &cs, files, failed);
	if (r.out != stdout)
		fclose(r.out);
	ng_decoder_free(r.dec);
	ng_flow_batch_free(&r.batch);
	return failed || r.write_failed ? 1 : 0;
}
