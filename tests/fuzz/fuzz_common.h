/*
 * fuzz_common.h — shared checks of the NetFlow/IPFIX fuzz targets.
 */
#ifndef NG_FUZZ_COMMON_H
#define NG_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode/decoder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Invariants every decoded record keeps, whatever the input. */
static inline void ng_fuzz_check(const ng_flow_batch *b, size_t n, size_t before)
{
	if (b->n - before != n)
		abort();
	for (size_t i = before; i < b->n; i++) {
		const ng_flow *f = &b->flows[i];
		if (!f->sampling_rate || f->sampling_source >= NG_SAMPLING_SOURCE_COUNT)
			abort();
		if (f->sampling_rate == 1 &&
		    (f->bytes != f->bytes_raw || f->packets != f->packets_raw))
			abort();
		if (f->ip_version != 0 && f->ip_version != 4 && f->ip_version != 6)
			abort();
	}
}

/* Decodes `size` bytes (with the first two replaced by `version` when
 * non-zero) as a datagram from 192.0.2.<src>. */
static inline size_t ng_fuzz_decode(ng_decoder *d, const uint8_t *data, size_t size,
                                    uint16_t version, uint8_t src, uint64_t now, ng_flow_batch *out)
{
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (version && size >= 2) {
		buf[0] = (uint8_t)(version >> 8);
		buf[1] = (uint8_t)version;
	}
	ng_datagram dg = {.data = buf, .len = size, .time_received = now};
	dg.exporter[10] = dg.exporter[11] = 0xff;
	dg.exporter[12] = 192, dg.exporter[14] = 2, dg.exporter[15] = src;
	size_t before = out->n;
	size_t n = ng_decode(d, &dg, out);
	ng_fuzz_check(out, n, before);
	free(buf);
	return n;
}

#endif
