/*
 * fuzz_ch_reply.c — what nagare reads of ClickHouse's replies
 * (clickhouse/client.h, clickhouse/schema.h): a version() answer
 * (ng_ch_server_parse), a line of system.parts for retention
 * (ng_ch_partition_line) and an error body cut to a log line
 * (ng_ch_error_text).  Invariants checked, abort on a break: a parsed
 * version's text holds only digits and dots and its features only turn on
 * with a higher version; a partition line taken is one of the three
 * tables (or their _local tables of the cluster layout) and 8 digits;
 * the error text is printable ASCII and fits.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clickhouse/client.h"
#include "clickhouse/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	ng_ch_server sv;
	if (ng_ch_server_parse(s, size, &sv) == 0) {
		for (const char *p = sv.version; *p; p++)
			if (!((*p >= '0' && *p <= '9') || *p == '.'))
				abort();
		if (sv.ttl && !(sv.major > 19 || (sv.major == 19 && sv.minor >= 6)))
			abort();
		if (sv.low_cardinality && !sv.ipv6)
			abort();
	}
	char table[32], part[16];
	if (ng_ch_partition_line(s, size, table, sizeof table, part, sizeof part) == 0) {
		static const char *const ok[] = {"flows",       "flows_1m",       "flows_1h",
		                                 "flows_local", "flows_1m_local", "flows_1h_local"};
		size_t k = 0;
		while (k < sizeof ok / sizeof ok[0] && strcmp(table, ok[k]))
			k++;
		if (k == sizeof ok / sizeof ok[0])
			abort();
		if (strlen(part) != 8 || strspn(part, "0123456789") != 8)
			abort();
	}
	char out[64];
	ng_ch_error_text(s, size, out, sizeof out);
	size_t l = strlen(out);
	if (l >= sizeof out)
		abort();
	for (size_t i = 0; i < l; i++)
		if (out[i] < 0x20 || out[i] > 0x7e)
			abort();
	return 0;
}
