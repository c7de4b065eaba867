/*
 * json.h — JSON strings: the one escaper of nagare.
 *
 * Every JSON nagare writes (NDJSON flows, `query --format json`, the HTTP
 * API, exporters.json) quotes its strings here, so a string prints the same
 * way everywhere.  The strings come from outside (interface names from an
 * exporter's options data, AS and city names from a database, filter text
 * from a browser), so the output must be valid JSON whatever the bytes:
 *
 *   - `"` and `\` are escaped; \b \f \n \r \t by their short forms, the other
 *     control characters (U+0000..U+001F, RFC 8259 §7) and DEL (0x7f) as
 *     \u00XX;
 *   - well-formed UTF-8 (RFC 3629 §3: no overlong forms, no surrogates
 *     U+D800..U+DFFF, nothing above U+10FFFF) is copied as it is;
 *   - each byte of anything else is written as \ufffd (U+FFFD REPLACEMENT
 *     CHARACTER), so the document stays parseable and a byte is never
 *     silently reinterpreted as another character.
 *
 * An input byte becomes at most 6 output bytes.
 */
#ifndef NG_JSON_CORE_H
#define NG_JSON_CORE_H

#include <stddef.h>
#include <stdio.h>

/* Bytes ng_json_quote needs for `len` input bytes: two quotes, at most six
 * bytes per input byte, and a NUL. */
#define NG_JSON_QUOTED_MAX(len) (3 + 6 * (size_t)(len))

/* Writes the `len` bytes at `s` as a quoted JSON string into `out`, which
 * holds at least NG_JSON_QUOTED_MAX(len) bytes, and a NUL after it.
 * Returns the length written without the NUL. */
size_t ng_json_quote(char *out, const char *s, size_t len);

/* Writes the NUL-terminated `s` as a quoted JSON string to `f`.  Returns 0,
 * or -1 when the stream reports a write error. */
int ng_json_put_str(FILE *f, const char *s);

#endif
