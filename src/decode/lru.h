/*
 * lru.h — the intrusive list that orders the decoder's state by last use
 * (not a public API).
 *
 * Everything a sender can make the decoder hold — exporters, observation
 * domains, templates, held data sets — is capped (decoder.h, struct
 * ng_decoder_limits), and when a cap is reached the least recently seen
 * entry goes.  Each such entry embeds one `struct ng_lru` per list it is
 * on; a list is a circular doubly-linked ring through a head node, most
 * recently used next to the head (head->next) and least recently used
 * before it (head->prev).  So:
 *
 *   touch    (a datagram, a data set used it)      O(1): unlink, push front
 *   evict    (a cap is reached)                    O(1): the head's prev
 *   iterate  (reports, the state file)             front to back: newest first
 *
 * A touch of the entry already at the front is one compare, which is what
 * a steady exporter costs per datagram: the receive thread owns the whole
 * decoder, so no lock is ever taken.  The embedding struct is found from
 * its node with ng_lru_entry (container_of).
 */
#ifndef NG_DECODE_LRU_H
#define NG_DECODE_LRU_H

#include <stdbool.h>
#include <stddef.h>

struct ng_lru {
	struct ng_lru *prev, *next;
};

/* The struct of type T whose member `member` is the node `n`. */
#define ng_lru_entry(n, T, member) ((T *)(void *)((char *)(n)-offsetof(T, member)))

/* Makes `h` an empty list (a head points at itself). */
static inline void ng_lru_init(struct ng_lru *h)
{
	h->prev = h->next = h;
}

static inline bool ng_lru_empty(const struct ng_lru *h)
{
	return h->next == h;
}

/* Takes node `n` out of its list; `n` must be on one. */
static inline void ng_lru_unlink(struct ng_lru *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

/* Puts `n` (on no list) first in `h`: the most recently used. */
static inline void ng_lru_push_front(struct ng_lru *h, struct ng_lru *n)
{
	n->next = h->next;
	n->prev = h;
	h->next->prev = n;
	h->next = n;
}

/* Puts `n` (on no list) last in `h`: the next to be evicted.  Loading a
 * state file saved newest first appends, so the order survives. */
static inline void ng_lru_push_back(struct ng_lru *h, struct ng_lru *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

/* Marks `n` (on list `h`) as just used: moves it to the front unless it
 * is there already (the common case: one compare). */
static inline void ng_lru_touch(struct ng_lru *h, struct ng_lru *n)
{
	if (h->next != n) {
		n->prev->next = n->next;
		n->next->prev = n->prev;
		ng_lru_push_front(h, n);
	}
}

/* The least recently used node of `h`, or NULL when it is empty. */
static inline struct ng_lru *ng_lru_oldest(const struct ng_lru *h)
{
	return h->prev == h ? NULL : h->prev;
}

#endif
