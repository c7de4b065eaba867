/*
 * fuzz_ipfix.c — libFuzzer target for IPFIX (ipfix.c, templates.c,
 * record.c).
 *
 * The input is one datagram with its version forced to 10; when the input
 * is long enough its message length is set to the input size half of the
 * time (odd sizes), so mutations reach the sets instead of stopping at the
 * header check.  Decoded twice by one fresh decoder (templates of the first
 * pass apply to the second).  A third pass sends it as after an exporter
 * restart (restart.c): sequence 0, export time 1 min on, so those
 * templates are stale until the message announces them again.  Seeds:
 * the IPFIX payloads of the capture corpus (tests/fuzz/run.sh extracts
 * them).
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (size >= 16 && size < 65536 && (size & 1)) {
		buf[2] = (uint8_t)(size >> 8);
		buf[3] = (uint8_t)size;
	}
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch out = {0};
	ng_fuzz_decode(d, buf, size, 10, 1, 1000, &out);
	ng_fuzz_decode(d, buf, size, 10, 1, 2000, &out);
	if (size >= 16) {
		uint32_t t = (uint32_t)buf[4] << 24 | buf[5] << 16 | buf[6] << 8 | buf[7];
		t += 60;
		buf[4] = (uint8_t)(t >> 24), buf[5] = (uint8_t)(t >> 16);
		buf[6] = (uint8_t)(t >> 8), buf[7] = (uint8_t)t;
		memset(buf + 8, 0, 4);
		ng_fuzz_decode(d, buf, size, 10, 1, 62000, &out);
	}
	ng_flow_batch_free(&out);
	ng_decoder_free(d);
	free(buf);
	return 0;
}
