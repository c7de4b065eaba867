/*
 * fuzz_v9.c — libFuzzer target for NetFlow v9 (netflow_v9.c, templates.c,
 * record.c).
 *
 * The input is one datagram with its version forced to 9.  A fresh decoder
 * decodes it twice, so templates (and options) defined by the first pass
 * decode the data sets of the second, held sets are replayed, and the
 * state file is written and read back.  Seeds: the v9 payloads of the
 * capture corpus (tests/fuzz/run.sh extracts them).
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch out = {0};
	ng_fuzz_decode(d, data, size, 9, 1, 1000, &out);
	ng_fuzz_decode(d, data, size, 9, 1, 2000, &out);
	ng_decoder_expire(d, 100000);
	ng_flow_batch_free(&out);
	ng_decoder_free(d);
	return 0;
}
