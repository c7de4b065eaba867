/*
 * fuzz_templates.c — libFuzzer target for template state across datagrams:
 * template store and replacement, withdrawal, held data sets and their
 * bounds, options state, and the state file.
 *
 * The input is a sequence of datagrams separated by the 4 bytes "NGDG";
 * the byte after each separator picks the exporter (low 2 bits) and
 * advances the clock (so held sets age out).  The datagrams go through one
 * decoder with a small held budget and small limits (core/limits.h: 3 of
 * the 4 exporters, a few domains and templates), so the evictions run;
 * what the decoder holds must stay within them.  Then the state is saved, loaded into
 * a second decoder, which decodes the datagrams again; and the input
 * itself is offered as a state file image (it must be refused or loaded,
 * never crash).  Seeds: corpus groups (template file + data files) joined
 * with the separator (tests/fuzz/run.sh builds them).
 */
#include <stdio.h>
#include <unistd.h>

#include "fuzz_common.h"

/* state.c (decode_int.h) */
int ng_decoder_load_mem(ng_decoder *d, const uint8_t *p, size_t n);

static const uint8_t SEP[4] = {'N', 'G', 'D', 'G'};

static void feed(ng_decoder *d, const uint8_t *data, size_t size, ng_flow_batch *out)
{
	size_t o = 0;
	uint8_t src = 0;
	uint64_t now = 1000;
	while (o <= size) {
		const uint8_t *end = NULL;
		for (size_t i = o; i + 4 <= size; i++)
			if (!memcmp(data + i, SEP, 4)) {
				end = data + i;
				break;
			}
		size_t n = end ? (size_t)(end - (data + o)) : size - o;
		if (n)
			ng_fuzz_decode(d, data + o, n, 0, src, now, out);
		if (!end)
			break;
		o += n + 4;
		if (o < size) {
			src = data[o] & 3;
			now += (uint64_t)(data[o] >> 2) * 1000;
			o++;
		}
		ng_decoder_expire(d, now);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	if (!path[0])
		snprintf(path, sizeof path, "/tmp/ng-fuzz-state-%d", (int)getpid());
	ng_decoder_config cfg = {.held_max_bytes = 4096,
	                         .held_max_age = 5000,
	                         .limits = {.exporters = 3,
	                                    .domains = 6,
	                                    .domains_per_exporter = 3,
	                                    .templates = 12,
	                                    .templates_per_domain = 6,
	                                    .template_bytes = 16 << 10,
	                                    .template_bytes_per_domain = 8 << 10,
	                                    .held_bytes = 6144,
	                                    .sflow_sources = 64}};
	ng_decoder *d = ng_decoder_new(&cfg);
	ng_flow_batch out = {0};
	feed(d, data, size, &out);
	ng_limit_stats l;
	ng_decoder_limit_stats(d, &l);
	if (l.exporters > 3 || l.domains > 6 || l.templates > 12 || l.template_bytes > (16 << 10) ||
	    l.held_bytes > 6144)
		abort(); /* past a limit */
	/* state round trip: in memory, and through a real file (with its
	 * fsync) for one input in 64 */
	ng_decoder *e = ng_decoder_new(&cfg);
	uint8_t *img;
	size_t len;
	if (ng_decoder_save_mem(d, &img, &len) != 0)
		abort();
	if (ng_decoder_load_mem(e, img, len) != 0)
		abort(); /* an image we wrote must load */
	free(img);
	if (size % 64 == 0) {
		if (ng_decoder_save(d, path) != 0 || ng_decoder_load(e, path) != 0)
			abort();
	}
	feed(e, data, size, &out);
	ng_decoder_load_mem(e, data, size);
	/* the same bytes as a state image with a valid checksum (FNV-1a over
	 * all but the last 8 bytes), so the parser behind it is reached */
	if (size >= 16) {
		uint8_t *img = malloc(size);
		if (img) {
			memcpy(img, data, size);
			memcpy(img, "NGDS\0\0\0\1", 8);
			uint64_t h = 0xcbf29ce484222325ULL;
			for (size_t i = 0; i < size - 8; i++) {
				h ^= img[i];
				h *= 0x100000001b3ULL;
			}
			for (int i = 0; i < 8; i++)
				img[size - 8 + i] = (uint8_t)(h >> (56 - 8 * i));
			if (ng_decoder_load_mem(e, img, size) == 0)
				feed(e, data, size, &out);
			free(img);
		}
	}
	ng_flow_batch_free(&out);
	ng_decoder_free(d);
	ng_decoder_free(e);
	return 0;
}
