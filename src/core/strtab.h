/*
 * strtab.h — the process-wide table of interned strings.
 *
 * String-valued flow fields (country codes, city and AS names, service,
 * network, exporter and interface names: field type NG_FT_STR) hold a
 * uint32 ID into this table, so the flow record stays fixed-width and a
 * string is compared, hashed and grouped as an integer.  ID 0 is the empty
 * string ("not known").
 *
 * Enrichment tables intern all their strings when they are built, so the
 * ingest path only copies IDs; the store writes a per-segment dictionary
 * and a reader interns it back.  Interning takes a mutex; ng_str() is
 * lock-free: strings live in chunks that never move and are never freed
 * before exit, and an ID is published only after its string is written.
 */
#ifndef NG_STRTAB_H
#define NG_STRTAB_H

#include <stddef.h>
#include <stdint.h>

/* Longest string kept, in bytes; longer input is cut at a UTF-8 boundary. */
#define NG_STR_MAX 255

/* Returns the ID of `s` (the first `len` bytes; no NUL needed), interning
 * it when new.  Returns 0 for an empty string, and 0 when out of memory or
 * past 2^24 distinct strings (counted by ng_strtab_overflows). */
uint32_t ng_intern(const char *s, size_t len);

/* As ng_intern for a NUL-terminated string. */
uint32_t ng_intern_cstr(const char *s);

/* Returns the ID of `s` when already interned, else UINT32_MAX.  Does not
 * add it: for filters that compare against a literal. */
uint32_t ng_str_lookup(const char *s, size_t len);

/* The NUL-terminated string of `id` ("" for 0 or an unknown ID).  The
 * pointer stays valid until the process exits. */
const char *ng_str(uint32_t id);

/* Length of the string of `id`, 0 to NG_STR_MAX bytes (0 for 0 or an
 * unknown ID).  One byte read from a dense array: cheap for many IDs. */
size_t ng_str_len(uint32_t id);

/* Hint: the bytes of `id` are read soon (ng_str); fetches them into the
 * cache without waiting.  No effect for 0 or an unknown ID. */
void ng_str_prefetch(uint32_t id);

/* Number of IDs in use (the next ID to be given out). */
uint32_t ng_strtab_count(void);

/* Strings refused because the table was full or memory ran out. */
uint64_t ng_strtab_overflows(void);

#endif
