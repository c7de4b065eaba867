/*
 * test_decode_lists.c — IPFIX structured data (RFC 6313, issue 18 part 3):
 * basicList (IE 291), subTemplateList (292) and subTemplateMultiList
 * (293), as YAF and Cisco AVC send them.  A record holding one is never
 * lost: a basicList of MPLS label stack sections is decoded into the
 * stack, every other list is skipped by its length and counted
 * (lists_skipped), a malformed one counted as the error list_bad.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_decode_helpers.h"

#define EXPORT_S 1700000000u
#define EXPORT_MS 1700000000000ULL

/* A field of RFC 7011 §7's long form (255, then a 2-byte length) whose
 * length is patched by tb_var_end: returns the offset of the length. */
static size_t tb_var(struct tb *t)
{
	tb_u8(t, 255);
	size_t at = t->n;
	tb_u16(t, 0);
	return at;
}

static void tb_var_end(struct tb *t, size_t at)
{
	tb_patch16(t, at, (uint16_t)(t->n - at - 2));
}

/* basicList header (RFC 6313 §4.5.1): semantic, field ID, element length
 * (an IANA element: no enterprise number). */
static void tb_basic_list(struct tb *t, uint8_t semantic, uint16_t ie, uint16_t elen)
{
	tb_u8(t, semantic), tb_u16(t, ie), tb_u16(t, elen);
}

/*
 * An MPLS label stack as a basicList of mplsTopLabelStackSection (IE 70),
 * the encoding RFC 6313 §6.2 ("basicList ... MPLS label stack")
 * describes, semantic "ordered" (4): three labels, top first.  They are
 * stored as IE 70-72 would be.  On main the list was skipped by its
 * length: the record was kept, its labels lost.
 */
static void test_basic_list_mpls_stack(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs f[] = {{8, 4, 0}, {12, 4, 0}, {291, 0xffff, 0}, {1, 8, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 400, 0, f, 4);
	size_t s = tb_set(&t, 400);
	tb_v4(&t, 10, 0, 0, 1), tb_v4(&t, 10, 0, 0, 2);
	size_t v = tb_var(&t);
	tb_basic_list(&t, 4, 70, 3);
	tb_mpls(&t, 24001, 0, 0), tb_mpls(&t, 16005, 5, 0), tb_mpls(&t, 299, 0, 1);
	tb_var_end(&t, v);
	tb_u64(&t, 4500);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 1);
	const ng_flow *r = &b.flows[0];
	assert_int_equal(r->mpls_label, 24001);
	assert_int_equal(r->mpls_label2, 16005);
	assert_int_equal(r->mpls_label3, 299);
	assert_int_equal(r->mpls_label4, 0);
	assert_int_equal(r->mpls_depth, 3);
	assert_int_equal(r->bytes, 4500);
	ng_exporter_stats st = th_totals(d);
	assert_int_equal(st.lists_skipped, 0);
	assert_int_equal(st.errors[NG_DERR_LIST_BAD], 0);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/*
 * What YAF sends with its DPI plugins: records ending in a
 * subTemplateMultiList (IE 293, RFC 6313 §4.5.3) of its enterprise
 * templates (YAF "yafdpi" / "yaf_dpi" docs: the DPI data hangs off the
 * flow record in an STML), here of one HTTP template with a basicList of
 * strings inside; and a Cisco AVC-like record with a subTemplateList
 * (IE 292, §4.5.2) and a basicList of interfaceName strings (IE 82).
 * Each record is kept with every field around its lists; each record
 * with a list skipped counts once in lists_skipped.  A basicList shorter than its own
 * header (3 bytes) is counted as list_bad, its record still stored.
 */
static void test_lists_skipped_records_kept(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs yaf[] = {{152, 8, 0}, {8, 4, 0}, {12, 4, 0},
	                                   {1, 8, 0},   {2, 8, 0}, {293, 0xffff, 0}};
	static const struct tb_fs avc[] = {{8, 4, 0},        {292, 0xffff, 0}, {12, 4, 0},
	                                   {291, 0xffff, 0}, {7, 2, 0},        {1, 4, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 500, 0, yaf, 6);
	tb_tpl(&t, 501, 0, avc, 6);
	size_t s = tb_set(&t, 500);
	tb_u64(&t, EXPORT_MS - 5000);
	tb_v4(&t, 10, 0, 0, 1), tb_v4(&t, 10, 0, 0, 2), tb_u64(&t, 1000), tb_u64(&t, 4);
	size_t v = tb_var(&t);
	tb_u8(&t, 3);                      /* semantic allOf */
	tb_u16(&t, 0xc801), tb_u16(&t, 0); /* template 51201, length patched */
	size_t h = t.n;
	tb_basic_list(&t, 3, 0x8000 | 110, 0xffff); /* enterprise element */
	tb_u32(&t, 6871);                           /* CERT */
	tb_varstr(&t, "GET"), tb_varstr(&t, "/index.html");
	tb_patch16(&t, h - 2, (uint16_t)(t.n - h + 4));
	tb_var_end(&t, v);
	tb_set_end(&t, s);
	s = tb_set(&t, 501);
	tb_v4(&t, 192, 0, 2, 7);
	v = tb_var(&t);
	tb_u8(&t, 3), tb_u16(&t, 600); /* subTemplateList of template 600 */
	tb_u32(&t, 0xdeadbeef), tb_u32(&t, 0x01020304);
	tb_var_end(&t, v);
	tb_v4(&t, 198, 51, 100, 1);
	v = tb_var(&t);
	tb_basic_list(&t, 3, 82, 0xffff);
	tb_varstr(&t, "Gi0/0/1"), tb_varstr(&t, "Gi0/0/2");
	tb_var_end(&t, v);
	tb_u16(&t, 443), tb_u32(&t, 777);
	/* the same, its basicList cut to 3 bytes */
	tb_v4(&t, 192, 0, 2, 8);
	tb_u8(&t, 0);
	tb_v4(&t, 198, 51, 100, 2);
	tb_u8(&t, 3), tb_u8(&t, 3), tb_u16(&t, 82);
	tb_u16(&t, 8443), tb_u32(&t, 888);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 3);
	assert_string_equal(th_addr(b.flows[0].dst_addr), "10.0.0.2");
	assert_int_equal(b.flows[0].bytes, 1000);
	assert_int_equal(b.flows[0].packets, 4);
	assert_int_equal(b.flows[0].flow_start, EXPORT_MS - 5000);
	assert_string_equal(th_addr(b.flows[1].src_addr), "192.0.2.7");
	assert_string_equal(th_addr(b.flows[1].dst_addr), "198.51.100.1");
	assert_int_equal(b.flows[1].src_port, 443);
	assert_int_equal(b.flows[1].bytes, 777);
	assert_string_equal(th_addr(b.flows[2].dst_addr), "198.51.100.2");
	assert_int_equal(b.flows[2].src_port, 8443);
	assert_int_equal(b.flows[2].bytes, 888);
	assert_int_equal(b.flows[2].mpls_depth, 0);
	ng_exporter_stats st = th_totals(d);
	assert_int_equal(st.records, 3);
	assert_int_equal(st.lists_skipped, 3); /* records, not lists */
	assert_int_equal(st.errors[NG_DERR_LIST_BAD], 1);
	assert_int_equal(st.errors[NG_DERR_RECORD_TRUNCATED], 0);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_basic_list_mpls_stack),
	    cmocka_unit_test(test_lists_skipped_records_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
