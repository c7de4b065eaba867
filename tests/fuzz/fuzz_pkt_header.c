/*
 * fuzz_pkt_header.c — libFuzzer target for the sampled packet header
 * parser (pkt_header.c).  The first byte picks where the header starts
 * (Ethernet, IPv4, IPv6); the rest is the header.  Checks that the parse
 * never reads past the input (ASan) and that what it reports is
 * consistent: transport fields only with an IP header, versions 0/4/6.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode/pkt_header.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const enum ng_pkt_start starts[3] = {NG_PKT_ETHERNET, NG_PKT_IPV4, NG_PKT_IPV6};
	enum ng_pkt_start st = starts[data[0] % 3];
	/* an exact-size copy so ASan sees any read past the end */
	size_t n = size - 1;
	uint8_t *p = malloc(n ? n : 1);
	if (!p)
		return 0;
	memcpy(p, data + 1, n);
	ng_pkt_info pi;
	enum ng_pkt_status s = ng_pkt_parse(p, n, st, &pi);
	if (s > NG_PKT_BAD)
		abort();
	if (pi.ip.version != 0 && pi.ip.version != 4 && pi.ip.version != 6)
		abort();
	if (pi.ip.has_l4 && !pi.ip.version)
		abort();
	if (pi.inner.version && !pi.tunnel)
		abort();
	free(p);
	return 0;
}
