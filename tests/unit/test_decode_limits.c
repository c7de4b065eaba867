/*
 * test_decode_limits.c — the decoder's bounds (core/limits.h, decode/lru.h):
 * exporters, domains (per exporter and in all), templates (per domain and
 * in all, by count and by memory) and held data sets (per exporter and in
 * all) are capped; the least recently seen entry is evicted, every
 * eviction is counted exactly (NG_LIMIT_COUNTERS, and the domain's own
 * templates_evicted / held_dropped), the counters of evicted domains stay
 * in the totals (the others row), and the template state file is written
 * most recently used first so a reload under lower limits keeps the good
 * templates.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "decode/lru.h"
#include "test_decode_helpers.h"

#define EXPORT_S 1700000000u

/* Decodes t's bytes as a datagram from 10.A.B.C at `now` ms. */
static size_t from(ng_decoder *d, const struct tb *t, uint32_t src, uint64_t now,
                   ng_flow_batch *out)
{
	ng_datagram dg = {.data = t->b, .len = t->n, .exporter_port = 2055, .time_received = now};
	uint8_t a[4] = {10, (uint8_t)(src >> 16), (uint8_t)(src >> 8), (uint8_t)src};
	ng_addr_from_v4(dg.exporter, a);
	return ng_decode(d, &dg, out);
}

/* A NetFlow v5 datagram with one record. */
static void v5(struct tb *t, uint32_t seq)
{
	t->n = 0;
	tb_u16(t, 5), tb_u16(t, 1);
	tb_u32(t, 1000), tb_u32(t, EXPORT_S), tb_u32(t, 0), tb_u32(t, seq);
	tb_u32(t, 0);
	tb_v4(t, 192, 0, 2, 1), tb_v4(t, 198, 51, 100, 1), tb_v4(t, 0, 0, 0, 0);
	tb_u16(t, 1), tb_u16(t, 2), tb_u32(t, 3), tb_u32(t, 300);
	tb_u32(t, 900), tb_u32(t, 950), tb_u16(t, 1234), tb_u16(t, 80);
	tb_u8(t, 0), tb_u8(t, 0x10), tb_u8(t, 6), tb_u8(t, 0);
	tb_u16(t, 0), tb_u16(t, 0), tb_u8(t, 24), tb_u8(t, 24), tb_u16(t, 0);
}

/* An IPFIX message of `domain` with template `tid` of `nf` fields: IE 8
 * sourceIPv4Address and then nf - 1 one-byte skipped fields (IE 210
 * paddingOctets). */
static void tpl_msg(struct tb *t, uint32_t domain, uint16_t tid, uint16_t nf)
{
	tb_ipfix(t, EXPORT_S, 0, domain);
	size_t s = tb_set(t, 2);
	tb_u16(t, tid), tb_u16(t, nf);
	tb_u16(t, 8), tb_u16(t, 4);
	for (uint16_t i = 1; i < nf; i++)
		tb_u16(t, 210), tb_u16(t, 1);
	tb_set_end(t, s);
	tb_ipfix_end(t);
}

/* An IPFIX message of `domain` with one data record of template `tid`
 * (as tpl_msg made it). */
static void data_msg(struct tb *t, uint32_t domain, uint16_t tid, uint16_t nf)
{
	tb_ipfix(t, EXPORT_S, 0, domain);
	size_t s = tb_set(t, tid);
	tb_v4(t, 192, 0, 2, 9);
	for (uint16_t i = 1; i < nf; i++)
		tb_u8(t, 0);
	tb_set_end(t, s);
	tb_ipfix_end(t);
}

static ng_decoder *with(ng_limits l)
{
	ng_decoder_config c = {.limits = l};
	ng_decoder *d = ng_decoder_new(&c);
	assert_non_null(d);
	return d;
}

static ng_limit_stats lim(const ng_decoder *d)
{
	ng_limit_stats l;
	ng_decoder_limit_stats(d, &l);
	return l;
}

struct rows {
	size_t n, others;
	uint64_t packets;
	ng_exporter_stats o;
};

static void on_row(const ng_exporter_stats *s, void *arg)
{
	struct rows *r = arg;
	r->n++;
	r->packets += s->packets;
	if (ng_exporter_is_others(s)) {
		r->others++;
		r->o = *s;
	}
}

static struct rows rows(const ng_decoder *d)
{
	struct rows r = {0};
	ng_decoder_foreach_stats(d, on_row, &r);
	return r;
}

/* The list itself: push, touch, oldest, unlink. */
static void test_lru_list(void **state)
{
	(void)state;
	struct ng_lru h, a, b, c;
	ng_lru_init(&h);
	assert_true(ng_lru_empty(&h));
	assert_null(ng_lru_oldest(&h));
	ng_lru_push_front(&h, &a);
	ng_lru_push_front(&h, &b);
	ng_lru_push_back(&h, &c); /* c, a, b from oldest */
	assert_ptr_equal(ng_lru_oldest(&h), &c);
	ng_lru_touch(&h, &c);
	assert_ptr_equal(ng_lru_oldest(&h), &a);
	assert_ptr_equal(h.next, &c);
	ng_lru_touch(&h, &c); /* at the front already */
	assert_ptr_equal(h.next, &c);
	ng_lru_unlink(&a);
	assert_ptr_equal(ng_lru_oldest(&h), &b);
	ng_lru_unlink(&b);
	ng_lru_unlink(&c);
	assert_true(ng_lru_empty(&h));
}

/* limits.exporters 3: 10 sources, the good one (0) sending between each:
 * 7 evicted, the least recently seen each time; the good one never; its
 * counters and the evicted ones' add up to every datagram. */
static void test_exporters_evicted(void **state)
{
	(void)state;
	ng_decoder *d = with((ng_limits){.exporters = 3});
	ng_flow_batch b = {0};
	struct tb t;
	for (uint32_t i = 1; i <= 10; i++) {
		v5(&t, i);
		from(d, &t, 0, i, &b);
		from(d, &t, i, i, &b);
	}
	ng_limit_stats l = lim(d);
	assert_int_equal(l.exporters_evicted, 8); /* 11 sources, 3 held */
	assert_int_equal(l.domains_evicted, 8);
	assert_int_equal(l.exporters, 3);
	assert_int_equal(l.domains, 3);
	assert_int_equal(th_totals(d).packets, 20);
	struct rows r = rows(d);
	assert_int_equal(r.n, 4); /* 3 held + others */
	assert_int_equal(r.others, 1);
	assert_int_equal(r.o.packets, 8);
	assert_int_equal(r.packets, 20);
	/* the good source is held: its sequence tracking went on (no loss) */
	assert_int_equal(th_totals(d).lost, 0);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* limits.domains_per_exporter 4: 20 domains from one source evict only
 * that source's own domains; another exporter's domain stays.  Then
 * limits.domains (6 in all) evicts the least recently seen of all. */
static void test_domains_evicted(void **state)
{
	(void)state;
	ng_decoder *d = with((ng_limits){.domains_per_exporter = 4, .domains = 6});
	ng_flow_batch b = {0};
	struct tb t;
	tpl_msg(&t, 7, 256, 2);
	from(d, &t, 1, 1, &b); /* the good exporter, domain 7, a template */
	for (uint32_t dom = 100; dom < 120; dom++) {
		tpl_msg(&t, dom, 256, 2);
		from(d, &t, 2, 2, &b);
	}
	ng_limit_stats l = lim(d);
	assert_int_equal(l.domains_evicted, 16);
	assert_int_equal(l.templates_evicted, 16); /* each took its template */
	assert_int_equal(l.domains, 5);
	assert_int_equal(l.templates, 5);
	data_msg(&t, 7, 256, 2);
	assert_int_equal(from(d, &t, 1, 3, &b), 1);
	/* a third exporter with 2 domains: the 6-domain cap evicts the least
	 * recently seen of all: source 2's oldest (domain 116), not domain 7 */
	tpl_msg(&t, 1, 256, 2);
	from(d, &t, 3, 4, &b);
	tpl_msg(&t, 2, 256, 2);
	from(d, &t, 3, 4, &b);
	l = lim(d);
	assert_int_equal(l.domains_evicted, 17);
	assert_int_equal(l.domains, 6);
	data_msg(&t, 7, 256, 2);
	assert_int_equal(from(d, &t, 1, 5, &b), 1);
	assert_int_equal(th_totals(d).packets, 1 + 20 + 2 + 2);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* A template flood from one domain: limits.template_bytes_per_domain bounds
 * its memory, evicting its own least recently used; the template the data
 * keeps using survives; another domain's template is never touched; the
 * counts add up: every template accepted is either held or evicted. */
static void test_template_flood(void **state)
{
	(void)state;
	ng_decoder *d = with((ng_limits){.template_bytes_per_domain = 32 << 10});
	ng_flow_batch b = {0};
	static struct tb t;
	tpl_msg(&t, 1, 256, 20);
	from(d, &t, 1, 1, &b); /* the good one */
	tpl_msg(&t, 5, 256, 20);
	from(d, &t, 2, 1, &b);
	unsigned sent = 1;
	for (uint16_t tid = 257; tid < 257 + 1000; tid++) {
		tpl_msg(&t, 5, tid, 200);
		from(d, &t, 2, 2, &b);
		sent++;
		if (tid % 5 == 0) { /* domain 5's own template 256 stays in use */
			data_msg(&t, 5, 256, 20);
			assert_int_equal(from(d, &t, 2, 2, &b), 1);
		}
	}
	ng_limit_stats l = lim(d);
	assert_true(l.templates_evicted > 900);
	assert_int_equal(l.templates_evicted + l.templates, sent + 1);
	assert_true(l.template_bytes <= (32 << 10) + 4096); /* domain 5 + the good one */
	data_msg(&t, 1, 256, 20);
	assert_int_equal(from(d, &t, 1, 3, &b), 1);
	data_msg(&t, 5, 256, 20);
	assert_int_equal(from(d, &t, 2, 3, &b), 1);
	data_msg(&t, 5, 257, 200);
	assert_int_equal(from(d, &t, 2, 3, &b), 0); /* the oldest of the flood: gone */
	assert_int_equal(th_totals(d).templates_evicted, l.templates_evicted);
	/* one template bigger than the domain's whole allowance: refused */
	tpl_msg(&t, 6, 300, 2000);
	from(d, &t, 3, 4, &b);
	assert_int_equal(th_errors(d, NG_DERR_TEMPLATE_LIMIT), 1);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* limits.templates 4 over two domains: the least recently used of all
 * goes, whichever domain it is in. */
static void test_templates_global(void **state)
{
	(void)state;
	ng_decoder *d = with((ng_limits){.templates = 4});
	ng_flow_batch b = {0};
	struct tb t;
	for (uint16_t tid = 256; tid < 260; tid++) {
		tpl_msg(&t, 1, tid, 2);
		from(d, &t, 1, 1, &b);
	}
	data_msg(&t, 1, 256, 2);
	assert_int_equal(from(d, &t, 1, 2, &b), 1); /* 256 used: 257 is the oldest */
	tpl_msg(&t, 9, 256, 2);
	from(d, &t, 2, 3, &b);
	assert_int_equal(lim(d).templates_evicted, 1);
	data_msg(&t, 1, 257, 2);
	assert_int_equal(from(d, &t, 1, 4, &b), 0);
	data_msg(&t, 1, 256, 2);
	assert_int_equal(from(d, &t, 1, 4, &b), 1);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* Held data sets: 1 KiB sets from 30 sources, limits.held_bytes 10 KiB in
 * all: the oldest go first, counted (held_evicted in all, held_dropped for
 * the exporter that lost them); the newest are decoded when their
 * template comes. */
static void test_held_global(void **state)
{
	(void)state;
	ng_decoder *d = with((ng_limits){.held_bytes = 10 << 10});
	ng_flow_batch b = {0};
	static struct tb t;
	const uint16_t nf = 1021; /* a 1024-byte record: IE 8 (4) + 1020 */
	for (uint32_t src = 1; src <= 30; src++) {
		data_msg(&t, 1, 256, nf);
		from(d, &t, src, 10, &b);
	}
	ng_limit_stats l = lim(d);
	assert_int_equal(l.held_evicted, 20);
	assert_int_equal(l.held_bytes, 10 * 1024);
	assert_int_equal(th_errors(d, NG_DERR_HELD_DROPPED), 20);
	assert_int_equal(th_totals(d).template_misses, 30);
	tpl_msg(&t, 1, 256, nf);
	assert_int_equal(from(d, &t, 30, 11, &b), 1); /* the newest: still held */
	tpl_msg(&t, 1, 256, nf);
	assert_int_equal(from(d, &t, 1, 11, &b), 0); /* the oldest: dropped */
	assert_int_equal(lim(d).held_bytes, 9 * 1024);
	/* age: the rest go after held_max_age (60 s) */
	ng_decoder_expire(d, 10 + 60001);
	assert_int_equal(lim(d).held_bytes, 0);
	assert_int_equal(th_errors(d, NG_DERR_HELD_DROPPED), 29);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* An evicted domain takes its held sets with it, counted. */
static void test_domain_takes_held(void **state)
{
	(void)state;
	ng_decoder *d = with((ng_limits){.domains_per_exporter = 1});
	ng_flow_batch b = {0};
	struct tb t;
	data_msg(&t, 1, 256, 2);
	from(d, &t, 1, 1, &b);
	data_msg(&t, 2, 256, 2);
	from(d, &t, 1, 2, &b); /* evicts domain 1 and its held set */
	ng_limit_stats l = lim(d);
	assert_int_equal(l.domains_evicted, 1);
	assert_int_equal(l.held_bytes, 5); /* the one record of domain 2 */
	assert_int_equal(th_errors(d, NG_DERR_HELD_DROPPED), 1);
	assert_int_equal(th_totals(d).template_misses, 2);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

static char path[64];

/* The state file lists templates most recently used first: reloaded under
 * limits.templates 3, the three used last are kept (the rest counted as
 * templates_evicted), and they keep their order (the next eviction takes
 * the oldest of them). */
static void test_state_recent_first(void **state)
{
	(void)state;
	snprintf(path, sizeof path, "/tmp/ng-decode-limits-%d", (int)getpid());
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	for (uint16_t tid = 256; tid < 266; tid++) {
		tpl_msg(&t, 1, tid, 2);
		from(d, &t, 1, 1, &b);
	}
	/* used last: 258, then 260, then 256 (the newest) */
	const uint16_t used[] = {258, 260, 256};
	for (int i = 0; i < 3; i++) {
		data_msg(&t, 1, used[i], 2);
		assert_int_equal(from(d, &t, 1, 2, &b), 1);
	}
	assert_int_equal(ng_decoder_save(d, path), 0);
	ng_decoder_free(d);

	d = with((ng_limits){.templates = 3});
	assert_int_equal(ng_decoder_load(d, path), 0);
	unlink(path);
	ng_limit_stats l = lim(d);
	assert_int_equal(l.templates, 3);
	assert_int_equal(l.templates_evicted, 7);
	data_msg(&t, 1, 259, 2);
	assert_int_equal(from(d, &t, 1, 3, &b), 0); /* not kept (now held) */
	/* a new template evicts the oldest kept: 258 */
	tpl_msg(&t, 1, 300, 2);
	from(d, &t, 1, 3, &b);
	data_msg(&t, 1, 258, 2);
	assert_int_equal(from(d, &t, 1, 4, &b), 0);
	data_msg(&t, 1, 260, 2);
	assert_int_equal(from(d, &t, 1, 4, &b), 1);
	data_msg(&t, 1, 256, 2);
	assert_int_equal(from(d, &t, 1, 4, &b), 1);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lru_list),          cmocka_unit_test(test_exporters_evicted),
	    cmocka_unit_test(test_domains_evicted),   cmocka_unit_test(test_template_flood),
	    cmocka_unit_test(test_templates_global),  cmocka_unit_test(test_held_global),
	    cmocka_unit_test(test_domain_takes_held), cmocka_unit_test(test_state_recent_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
