/*
 * addr.h — 16-byte addresses, IPv4 stored IPv4-mapped (RFC 4291 §2.5.5.2).
 */
#ifndef NG_ADDR_H
#define NG_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NG_ADDR_STRLEN 46 /* INET6_ADDRSTRLEN */

/* Writes ::ffff:a.b.c.d for the 4 network-order bytes at `v4`. */
void ng_addr_from_v4(uint8_t out[16], const uint8_t v4[4]);

/* True when `a` is IPv4-mapped. */
bool ng_addr_is_v4(const uint8_t a[16]);

/* Formats `a` as text: dotted quad for IPv4-mapped, RFC 5952 otherwise.
 * `buf` must hold NG_ADDR_STRLEN bytes; returns `buf`. */
char *ng_addr_format(const uint8_t a[16], char *buf);

/* Parses an IPv4 or IPv6 address.  Returns false when `s` is not one. */
bool ng_addr_parse(const char *s, uint8_t out[16]);

/* Parses "ADDR/LEN" (or a bare address, full length).  `*prefix_len` is
 * in the 128-bit space (IPv4 /24 → 120).  Host bits are cleared.
 * Returns false on a malformed string or a length out of range. */
bool ng_prefix_parse(const char *s, uint8_t net[16], unsigned *prefix_len);

/* True when `a` lies in net/prefix_len (128-bit space). */
bool ng_addr_in_prefix(const uint8_t a[16], const uint8_t net[16], unsigned prefix_len);

/* Formats 6 MAC bytes as "aa:bb:cc:dd:ee:ff" into buf[18]. */
char *ng_mac_format(const uint8_t m[6], char *buf);

#endif
