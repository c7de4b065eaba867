/*
 * sflow.h — sFlow v5 decoder entry points (internal to the decode layer;
 * the public API is decoder.h).
 */
#ifndef NG_SFLOW_H
#define NG_SFLOW_H

#include <stddef.h>

#include "decode/decoder.h"

/* Decodes one sFlow v5 datagram (first word 5), appending a flow record
 * per flow sample and discarded-packet event to `out`; counter samples
 * are kept for ng_decoder_take_counters.  Returns the records appended. */
size_t ng_decode_sflow(ng_decoder *d, const ng_datagram *dg, ng_flow_batch *out);

/* Frees the decoder's sFlow state (called by ng_decoder_free). */
void ng_sflow_free(ng_decoder *d);

#endif
