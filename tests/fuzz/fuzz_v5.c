/*
 * fuzz_v5.c — libFuzzer target for NetFlow v1/v5/v7 (netflow_v5.c).
 *
 * The input is one datagram; its version is forced to 1, 5 or 7 (by the
 * input's length) so every input reaches the fixed-format decoder.  Each
 * input is decoded twice by one fresh decoder (sequence tracking).  Seeds:
 * the v5 payloads of the capture corpus (tests/fuzz/run.sh extracts them).
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t versions[3] = {5, 1, 7};
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch out = {0};
	for (int pass = 0; pass < 2; pass++)
		ng_fuzz_decode(d, data, size, versions[size % 3], 1, 1000, &out);
	ng_flow_batch_free(&out);
	ng_decoder_free(d);
	return 0;
}
