/* addr.c — 16-byte addresses (see addr.h). */
#include "core/addr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

void ng_addr_from_v4(uint8_t out[16], const uint8_t v4[4])
{
	memcpy(out, v4_prefix, 12);
	memcpy(out + 12, v4, 4);
}

bool ng_addr_is_v4(const uint8_t a[16])
{
	return memcmp(a, v4_prefix, 12) == 0;
}

char *ng_addr_format(const uint8_t a[16], char *buf)
{
	if (ng_addr_is_v4(a))
		inet_ntop(AF_INET, a + 12, buf, NG_ADDR_STRLEN);
	else
		inet_ntop(AF_INET6, a, buf, NG_ADDR_STRLEN);
	return buf;
}

bool ng_addr_parse(const char *s, uint8_t out[16])
{
	uint8_t v4[4];
	if (inet_pton(AF_INET, s, v4) == 1) {
		ng_addr_from_v4(out, v4);
		return true;
	}
	return inet_pton(AF_INET6, s, out) == 1;
}

static void clear_host_bits(uint8_t a[16], unsigned len)
{
	for (unsigned i = 0; i < 16; i++) {
		unsigned bits = i * 8;
		if (bits >= len)
			a[i] = 0;
		else if (len - bits < 8)
			a[i] &= (uint8_t)(0xff << (8 - (len - bits)));
	}
}

bool ng_prefix_parse(const char *s, uint8_t net[16], unsigned *prefix_len)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	if (alen == 0 || alen >= sizeof buf)
		return false;
	memcpy(buf, s, alen);
	buf[alen] = 0;
	if (!ng_addr_parse(buf, net))
		return false;
	bool v4 = strchr(buf, ':') == NULL;
	unsigned max = v4 ? 32 : 128, len = max;
	if (slash) {
		char *end;
		if (!slash[1])
			return false;
		unsigned long l = strtoul(slash + 1, &end, 10);
		if (*end || l > max)
			return false;
		len = (unsigned)l;
	}
	*prefix_len = v4 ? len + 96 : len;
	clear_host_bits(net, *prefix_len);
	return true;
}

bool ng_addr_in_prefix(const uint8_t a[16], const uint8_t net[16], unsigned len)
{
	unsigned full = len / 8, rest = len % 8;
	if (memcmp(a, net, full))
		return false;
	if (!rest)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a[full] & mask) == net[full];
}

char *ng_mac_format(const uint8_t m[6], char *buf)
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}
