/*
 * reasm.h — IPFIX messages out of a byte stream (TCP, SCTP).
 *
 * Over TCP, IPFIX Messages follow one another with no other framing:
 * each begins with its Message Header, whose Length field counts the
 * whole message, header included (RFC 7011 §3.1, §10.4.1).  SCTP carries
 * one message per SCTP message (§10.2.2), read here the same way.  A
 * reassembler takes the bytes of one connection in pieces of any size
 * and gives back whole messages.
 *
 * Bounds: one message at a time, at most 65535 bytes (the Length field's
 * range), held in a buffer that grows to the longest message seen.  A
 * header that is not IPFIX (version 10) or whose Length is below the 16
 * header bytes means the stream has lost its framing for good: there is
 * no way to find the next message, so the caller closes the connection.
 *
 * Use: read at most *want bytes into ng_reasm_dst(r, &want), then tell
 * ng_reasm_got how many came.  Not thread-safe; one per connection.
 */
#ifndef NG_REASM_H
#define NG_REASM_H

#include <stddef.h>
#include <stdint.h>

#define NG_REASM_HEADER 16 /* RFC 7011 §3.1 Message Header */

typedef struct ng_reasm {
	uint8_t hdr[NG_REASM_HEADER]; /* the header, until it is whole */
	uint8_t *msg;                 /* the message being read (malloc'ed), or NULL */
	size_t cap;                   /* bytes allocated at msg, <= 65535 */
	size_t have;                  /* bytes of the current message read so far */
	size_t need;                  /* its length: 16 until the header is whole */
} ng_reasm;

enum ng_reasm_rc {
	NG_REASM_MORE = 0,    /* the message is not whole yet */
	NG_REASM_MESSAGE = 1, /* *msg, *len: a whole message */
	NG_REASM_BAD = -1,    /* not IPFIX, or Length < 16: framing lost */
	NG_REASM_NOMEM = -2,  /* no memory for the message buffer */
};

/* An empty reassembler (owns nothing yet). */
void ng_reasm_init(ng_reasm *r);

/* Frees the buffer; r is empty again. */
void ng_reasm_free(ng_reasm *r);

/* Where the next bytes of the stream go, and how many at most (*want,
 * never 0): never past the end of the current message, so one read
 * never takes bytes of two messages. */
uint8_t *ng_reasm_dst(ng_reasm *r, size_t *want);

/* `n` bytes (<= the last *want) were written at the last ng_reasm_dst.
 * Returns NG_REASM_MESSAGE with the message in *msg (`*len` bytes, owned
 * by r, valid until the next ng_reasm_got) when it is now whole,
 * NG_REASM_MORE, or an error (see the enum); after an error r may only
 * be freed. */
int ng_reasm_got(ng_reasm *r, size_t n, const uint8_t **msg, size_t *len);

/* True when part of a message has been read (a close now cuts it). */
static inline int ng_reasm_partial(const ng_reasm *r)
{
	return r->have != 0;
}

#endif
