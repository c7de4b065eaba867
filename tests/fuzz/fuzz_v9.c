/*
 * fuzz_v9.c — libFuzzer target for NetFlow v9 (netflow_v9.c, templates.c,
 * record.c).
 *
 * The input is one datagram with its version forced to 9.  A fresh decoder
 * decodes it twice, so templates (and options) defined by the first pass
 * decode the data sets of the second, held sets are replayed, and the
 * state file is written and read back.  A third pass sends it as the
 * exporter would after a restart (restart.c): sysUpTime 1 s, sequence 0,
 * UNIX Secs 2 min on, so the templates of the first passes are stale,
 * held sets are dropped and the data waits for the templates again.
 * Seeds: the v9 payloads of the capture corpus (tests/fuzz/run.sh
 * extracts them).
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch out = {0};
	ng_fuzz_decode(d, data, size, 9, 1, 1000, &out);
	ng_fuzz_decode(d, data, size, 9, 1, 2000, &out);
	if (size >= 20) {
		uint8_t *r = malloc(size);
		if (r) {
			memcpy(r, data, size);
			uint32_t secs = (uint32_t)r[8] << 24 | r[9] << 16 | r[10] << 8 | r[11];
			secs += 120;
			static const uint8_t up[4] = {0, 0, 0x03, 0xe8}, zero[4] = {0};
			memcpy(r + 4, up, 4);
			r[8] = (uint8_t)(secs >> 24), r[9] = (uint8_t)(secs >> 16);
			r[10] = (uint8_t)(secs >> 8), r[11] = (uint8_t)secs;
			memcpy(r + 12, zero, 4);
			ng_fuzz_decode(d, r, size, 9, 1, 122000, &out);
			free(r);
		}
	}
	ng_decoder_expire(d, 100000);
	ng_flow_batch_free(&out);
	ng_decoder_free(d);
	return 0;
}
