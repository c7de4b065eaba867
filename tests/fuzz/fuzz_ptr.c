/*
 * fuzz_ptr.c — libFuzzer target for the DNS answer parser of host names
 * (query/ptr.c, ng_ptr_parse: RFC 1035 §4.1 messages, names with
 * compression pointers).  The input is one DNS message, as res_nquery
 * hands it over.  Checks that the parse never reads past the input
 * (ASan, an exact-size copy), ends (compression loops are bounded), and
 * that a name it returns is NUL-terminated within the buffer, non-empty,
 * at most 253 characters, without a trailing dot, of letters, digits,
 * '-', '_', '.' and '?' only.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "query/ptr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);
	if (!p)
		return 0;
	memcpy(p, data, size);
	char name[NG_PTR_NAME_MAX];
	memset(name, 'x', sizeof name);
	uint32_t ttl = 0;
	int rc = ng_ptr_parse(p, size, name, sizeof name, &ttl);
	if (rc < -1 || rc > 1)
		abort();
	if (rc == 1) {
		size_t n = strnlen(name, sizeof name);
		if (n == 0 || n == sizeof name || n > 253 || name[n - 1] == '.' ||
		    ttl > 0x7fffffffu)
			abort();
		for (size_t i = 0; i < n; i++) {
			char c = name[i];
			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			      (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
			      c == '?'))
				abort();
		}
	}
	free(p);
	return 0;
}
