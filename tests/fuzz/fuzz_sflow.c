/*
 * fuzz_sflow.c — libFuzzer target for the sFlow v5 decoder (sflow.c).
 *
 * The input is one datagram.  It is decoded twice through one decoder (so
 * per-source sequence state and the counter hand-out are exercised), its
 * counter samples taken, and a few invariants checked: every record is an
 * sFlow record with a non-zero rate whose scaled counters match the raw
 * ones.  Seed from the corpus: the sFlow files listed in
 * ../shared/testdata/captures/INDEX.tsv (raw payloads as they are).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode/decoder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static ng_decoder *d;
	static ng_flow_batch out;
	static ng_counter_batch ctr;
	if (!d)
		d = ng_decoder_new(NULL);
	/* make every input an sFlow datagram: version word 5 */
	uint8_t *buf = malloc(size + 4);
	if (!buf)
		return 0;
	const uint8_t v5[4] = {0, 0, 0, 5};
	memcpy(buf, v5, 4);
	memcpy(buf + 4, data, size);
	ng_datagram dg = {.data = buf, .len = size + 4, .time_received = 1700000000000ULL};
	dg.exporter[10] = dg.exporter[11] = 0xff;
	dg.exporter[15] = (uint8_t)size;
	for (int pass = 0; pass < 2; pass++) {
		ng_flow_batch_clear(&out);
		size_t n = ng_decode(d, &dg, &out);
		if (n != out.n)
			abort();
		for (size_t i = 0; i < out.n; i++) {
			const ng_flow *f = &out.flows[i];
			if (f->flow_version != 0x50 || !f->sampling_rate ||
			    f->packets != (uint64_t)f->sampling_rate * f->packets_raw ||
			    f->bytes != f->bytes_raw * f->sampling_rate)
				abort();
		}
	}
	ctr.n = 0;
	ng_decoder_take_counters(d, &ctr);
	free(buf);
	/* keep the decoder's state bounded across a long run */
	static unsigned runs;
	if (++runs % 10000 == 0) {
		ng_decoder_free(d);
		d = NULL;
	}
	return 0;
}
