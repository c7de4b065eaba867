/*
 * test_decode_restart.c — exporter restarts (decode/restart.c): the
 * templates learnt before a restart never decode the data sent after it.
 *
 * Public descriptions of the problem these packets are shaped after:
 *   - RFC 3954 §5.2: a changed template's ID "SHOULD NOT be reused until
 *     the NetFlow process or Exporter restarts" — so after one it may be;
 *     quoted in netsampler/goflow2#42, which suggests a collector "keep
 *     track of sysUpTime header and discard all records if [it] has been
 *     changed".
 *   - vmware/go-ipfix#383: an exporter (Antrea) that keeps its template
 *     ID when it adds fields; decoding the new records "using an old
 *     template ... can actually cause a panic".
 *   - aabc/ipt-netflow#180: records of a new format sent before the new
 *     template (UDP loses the template), reported as invalid data.
 *   - sonic-net/sonic-buildimage#7445: an sFlow agent's SysUptime starts
 *     again from 0 when the sflow service restarts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/hash.h"
#include "test_restart_packets.h"

#define T0 1700000000u     /* UNIX seconds of the first datagram */
#define UP0 864000000u     /* sysUpTime then: 10 days */
#define NOW0 1700000000000 /* collector clock then, ms */

/* The source ID v9() sends with; IPFIX uses observation domain 70 (so the
 * two protocols keep their own marks). */
static uint32_t v9_source = 7;

/* Decodes rp_v9's datagram (source ID v9_source) received at `now`. */
static size_t v9(ng_decoder *d, uint32_t up, uint32_t secs, uint32_t seq, char tpl, char data,
                 uint64_t now, ng_flow_batch *b)
{
	struct tb t;
	rp_v9(&t, up, secs, seq, v9_source, tpl, data);
	return tb_decode(d, &t, now, b);
}

/* Decodes rp_ipfix's message (domain 70) received at `now`. */
static size_t ipfix(ng_decoder *d, uint32_t secs, uint32_t seq, char tpl, char data, uint64_t now,
                    ng_flow_batch *b)
{
	struct tb t;
	rp_ipfix(&t, secs, seq, 70, tpl, data);
	return tb_decode(d, &t, now, b);
}

/* A v9 exporter up 10 days sends template 256 (layout A) and data.  It
 * restarts (sysUpTime back to 1 s, sequence 0) and defines 256 anew as
 * layout B, but its first datagram after the restart carries only data
 * (the template datagram was lost, or comes after, as in
 * aabc/ipt-netflow#180).  The data must wait and be decoded with B. */
static void test_v9_restart_holds_until_new_template(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	assert_int_equal(v9(d, UP0, T0, 5000, 'A', 'A', NOW0, &b), 1);
	assert_flow_a(&b.flows[0]);
	assert_int_equal(v9(d, UP0 + 1000, T0 + 1, 5001, 0, 'A', NOW0 + 1000, &b), 1);
	/* restart: 2 min later, uptime 1 s, sequence 0, data of layout B */
	assert_int_equal(v9(d, 1000, T0 + 121, 0, 0, 'B', NOW0 + 121000, &b), 0);
	ng_exporter_stats s = th_totals(d);
	assert_int_equal(s.restarts, 1);
	assert_int_equal(s.template_misses, 1);
	assert_int_equal(s.records, 2);
	/* the new template comes: the held set is decoded with it */
	assert_int_equal(v9(d, 1500, T0 + 121, 1, 'B', 0, NOW0 + 121500, &b), 1);
	assert_int_equal(b.n, 3);
	assert_flow_b(&b.flows[2]);
	s = th_totals(d);
	assert_int_equal(s.held, 1);
	assert_int_equal(s.restarts, 1);
	assert_int_equal(s.lost, 0); /* the new sequence is not a gap of 2^32 - 5002 */
	ng_restart_info last;
	assert_int_equal(ng_decoder_restarts(d, &last), 1);
	assert_int_equal(last.domain, 7);
	assert_int_equal(last.version, 9);
	assert_string_equal(th_addr(last.exporter), "192.0.2.1");
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* The same in IPFIX: the sequence counts data records (RFC 7011 §3.1) and
 * starts again at 0 while the export time moves on. */
static void test_ipfix_restart_holds_until_new_template(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	assert_int_equal(ipfix(d, T0, 2000000, 'A', 'A', NOW0, &b), 1);
	assert_int_equal(ipfix(d, T0 + 1, 2000001, 0, 'A', NOW0 + 1000, &b), 1);
	assert_flow_a(&b.flows[1]);
	assert_int_equal(ipfix(d, T0 + 60, 0, 0, 'B', NOW0 + 60000, &b), 0);
	assert_int_equal(th_totals(d).restarts, 1);
	assert_int_equal(ipfix(d, T0 + 61, 1, 'B', 0, NOW0 + 61000, &b), 1);
	assert_int_equal(b.n, 3);
	assert_flow_b(&b.flows[2]);
	ng_exporter_stats s = th_totals(d);
	assert_int_equal(s.held, 1);
	assert_int_equal(s.restarts, 1);
	assert_int_equal(s.lost, 0);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* After a restart, a template announced again with the same fields
 * resumes at once; data held before it came is decoded by it. */
static void test_unchanged_template_resumes(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	assert_int_equal(v9(d, UP0, T0, 5000, 'A', 'A', NOW0, &b), 1);
	/* restart; the first datagram announces A again, then data: at once */
	assert_int_equal(v9(d, 2000, T0 + 90, 0, 'A', 'A', NOW0 + 90000, &b), 1);
	assert_flow_a(&b.flows[1]);
	assert_int_equal(th_totals(d).restarts, 1);
	assert_int_equal(th_totals(d).template_misses, 0);
	assert_int_equal(v9(d, 92000, T0 + 180, 1, 0, 'A', NOW0 + 180000, &b), 1);
	/* another restart, data first this time: held, then A unchanged */
	assert_int_equal(v9(d, 500, T0 + 200, 0, 0, 'A', NOW0 + 200000, &b), 0);
	assert_int_equal(v9(d, 600, T0 + 200, 1, 'A', 0, NOW0 + 200100, &b), 1);
	assert_int_equal(v9(d, 700, T0 + 200, 2, 0, 'A', NOW0 + 200200, &b), 1);
	assert_int_equal(b.n, 5);
	assert_flow_a(&b.flows[3]);
	assert_flow_a(&b.flows[4]);
	ng_exporter_stats s = th_totals(d);
	assert_int_equal(s.restarts, 2);
	assert_int_equal(s.template_misses, 1);
	assert_int_equal(s.held, 1);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* What UDP and counters do without a restart: reordered and late
 * datagrams, sequence numbers and sysUpTime wrapping at 2^32, two export
 * processes behind one address with their own source IDs and clocks. */
static void test_no_false_restarts(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	/* v9 reordered: 5002 before 5001, which is 20 ms older */
	v9(d, UP0, T0, 5000, 'A', 'A', NOW0, &b);
	v9(d, UP0 + 40, T0, 5002, 0, 'A', NOW0 + 40, &b);
	v9(d, UP0 + 20, T0, 5001, 0, 'A', NOW0 + 45, &b);
	/* late by 50 datagrams and 3 s (a queue somewhere): same second
	 * rule, 50 < RS_V9_BACK_SAME */
	v9(d, UP0 + 3000, T0 + 3, 5100, 0, 'A', NOW0 + 3000, &b);
	v9(d, UP0 + 1, T0 + 3, 5050, 0, 'A', NOW0 + 3100, &b);
	/* sequence wraps (source ID 10, which had sent 2^32 - 2) */
	v9_source = 10;
	v9(d, UP0 + 4000, T0 + 4, 0xfffffffeu, 'A', 'A', NOW0 + 4000, &b);
	v9(d, UP0 + 4100, T0 + 4, 0xffffffffu, 0, 'A', NOW0 + 4100, &b);
	v9(d, UP0 + 4200, T0 + 4, 0, 0, 'A', NOW0 + 4200, &b);
	v9(d, UP0 + 4300, T0 + 4, 1, 0, 'A', NOW0 + 4300, &b);
	assert_int_equal(th_totals(d).restarts, 0);
	assert_int_equal(b.n, 9);
	/* sysUpTime wraps after 49.7 days, on an exporter (source ID 9)
	 * whose sequence stays 0, so only the uptime can tell */
	v9_source = 9;
	v9(d, 0xfffff000u, T0 + 10, 0, 'A', 'A', NOW0 + 10000, &b);
	v9(d, 0x00000800u, T0 + 16, 0, 0, 'A', NOW0 + 16000, &b);
	assert_int_equal(th_totals(d).restarts, 0);
	/* a second export process on the same address, source ID 8, with
	 * its own uptime and sequence, between datagrams of source ID 7 */
	v9_source = 8;
	v9(d, 5000, T0 + 20, 3, 'A', 'A', NOW0 + 20000, &b);
	v9_source = 7;
	v9(d, UP0 + 20000, T0 + 20, 5101, 0, 'A', NOW0 + 20100, &b);
	v9_source = 8;
	v9(d, 5100, T0 + 20, 4, 0, 'A', NOW0 + 20200, &b);
	v9_source = 7;
	assert_int_equal(th_totals(d).restarts, 0);
	/* IPFIX: a message late by 500 records in the same second, then
	 * the sequence wrapping */
	ipfix(d, T0, 0xfffff000u, 'A', 'A', NOW0, &b);
	ipfix(d, T0 + 1, 0xfffff258u, 0, 'A', NOW0 + 1000, &b);
	ipfix(d, T0 + 1, 0xfffff064u, 0, 'A', NOW0 + 1010, &b);
	ipfix(d, T0 + 2, 0x10, 0, 'A', NOW0 + 2000, &b);
	ipfix(d, T0 + 3, 0x20, 0, 'A', NOW0 + 3000, &b);
	/* an old message replayed with an earlier export time: late */
	ipfix(d, T0 - 100, 10, 0, 'A', NOW0 + 3100, &b);
	ng_exporter_stats s = th_totals(d);
	assert_int_equal(s.restarts, 0);
	assert_int_equal(s.template_misses, 0);
	assert_int_equal(b.n, 9 + 2 + 3 + 6);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* rp_ipfix's message from 192.0.2.1 port `port`, received at `now`. */
static size_t ipfix_from(ng_decoder *d, uint16_t port, uint32_t secs, uint32_t seq, char tpl,
                         char data, uint64_t now, ng_flow_batch *b)
{
	struct tb t;
	rp_ipfix(&t, secs, seq, 70, tpl, data);
	ng_datagram dg = {.data = t.b, .len = t.n, .exporter_port = port, .time_received = now};
	static const uint8_t ex[4] = {192, 0, 2, 1};
	ng_addr_from_v4(dg.exporter, ex);
	return ng_decode(d, &dg, b);
}

/* phaag/nfdump#159: several export processes behind one address with the
 * same observation domain and template IDs, told apart only by their UDP
 * source ports.  The first turn of the second process looks like a
 * restart (counted once, its data held); the first process then goes on
 * from its own port: two processes, the held data decodes, and the turns
 * that follow are not restarts. */
static void test_two_processes_one_domain(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	assert_int_equal(ipfix_from(d, 40001, T0, 1000000, 'A', 'A', NOW0, &b), 1);
	assert_int_equal(ipfix_from(d, 40002, T0 + 1, 5000, 0, 'A', NOW0 + 1000, &b), 0);
	assert_int_equal(th_totals(d).restarts, 1);
	/* process 1 again, from its port, its sequence on: 2 records, its
	 * own and the one held */
	assert_int_equal(ipfix_from(d, 40001, T0 + 1, 1000001, 0, 'A', NOW0 + 1100, &b), 2);
	for (uint32_t i = 1; i <= 10; i++) {
		assert_int_equal(
		    ipfix_from(d, 40002, T0 + 1 + i, 5000 + i, 0, 'A', NOW0 + 1100 + i * 1000, &b),
		    1);
		assert_int_equal(ipfix_from(d, 40001, T0 + 1 + i, 1000001 + i, 0, 'A',
		                            NOW0 + 1200 + i * 1000, &b),
		                 1);
	}
	ng_exporter_stats s = th_totals(d);
	assert_int_equal(s.restarts, 1);
	assert_int_equal(s.held, 1);
	assert_int_equal(s.template_misses, 1);
	assert_int_equal(b.n, 23);
	for (size_t i = 0; i < b.n; i++)
		assert_flow_a(&b.flows[i]);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* A state file saved by a collector that saw template A and one datagram,
 * loaded into a new decoder (as `nagare collect` does at start). */
static ng_decoder *saved_and_loaded(const char *path)
{
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	assert_int_equal(v9(d, UP0, T0, 5000, 'A', 'A', NOW0, &b), 1);
	assert_int_equal(ipfix(d, T0, 2000000, 'A', 'A', NOW0, &b), 1);
	assert_int_equal(ng_decoder_save(d, path), 0);
	ng_decoder_free(d);
	ng_flow_batch_free(&b);
	ng_decoder *e = ng_decoder_new(NULL);
	assert_int_equal(ng_decoder_load(e, path), 0);
	return e;
}

/* Collector restart alone: 5 min later, the exporter's sequence went on
 * and its uptime too: the saved templates decode the first data at once. */
static void test_state_load_continuing_decodes_at_once(void **state)
{
	(void)state;
	char path[64];
	snprintf(path, sizeof path, "/tmp/ng-test-restart-%d", (int)getpid());
	ng_decoder *d = saved_and_loaded(path);
	ng_flow_batch b = {0};
	assert_int_equal(v9(d, UP0 + 300000, T0 + 300, 5301, 0, 'A', NOW0 + 300000, &b), 1);
	assert_flow_a(&b.flows[0]);
	assert_int_equal(ipfix(d, T0 + 300, 2090000, 0, 'A', NOW0 + 300000, &b), 1);
	assert_flow_a(&b.flows[1]);
	ng_exporter_stats s = th_totals(d);
	assert_int_equal(s.restarts, 0);
	assert_int_equal(s.template_misses, 0);
	unlink(path);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* The exporters restarted while the collector was down: their first data
 * (layout B) must not be decoded with the saved layout A. */
static void test_state_load_restarted_holds(void **state)
{
	(void)state;
	char path[64];
	snprintf(path, sizeof path, "/tmp/ng-test-restart-%d", (int)getpid());
	ng_decoder *d = saved_and_loaded(path);
	ng_flow_batch b = {0};
	assert_int_equal(v9(d, 30000, T0 + 300, 12, 0, 'B', NOW0 + 300000, &b), 0);
	assert_int_equal(ipfix(d, T0 + 300, 400, 0, 'B', NOW0 + 300000, &b), 0);
	assert_int_equal(th_totals(d).restarts, 2);
	assert_int_equal(v9(d, 30100, T0 + 300, 13, 'B', 0, NOW0 + 300100, &b), 1);
	assert_int_equal(ipfix(d, T0 + 301, 401, 'B', 0, NOW0 + 301000, &b), 1);
	assert_int_equal(b.n, 2);
	assert_flow_b(&b.flows[0]);
	assert_flow_b(&b.flows[1]);
	ng_exporter_stats s = th_totals(d);
	assert_int_equal(s.restarts, 2);
	assert_int_equal(s.held, 2);
	unlink(path);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* A state file of format 1 (before restart marks): template A of
 * 192.0.2.1 source ID 7, no domain entries.  Its templates are trusted:
 * the first datagram decodes at once whatever its header says; restarts
 * are told from the second datagram on. */
static void test_state_format1_trusted(void **state)
{
	(void)state;
	struct tb t = {.n = 0};
	tb_bytes(&t, "NGDS", 4);
	tb_u32(&t, 1);
	tb_u32(&t, 1); /* templates */
	static const uint8_t ex[16] = {[10] = 0xff, [11] = 0xff, 192, 0, 2, 1};
	tb_bytes(&t, ex, 16);
	tb_u32(&t, 7);
	tb_u8(&t, 9);
	tb_u8(&t, 0);
	tb_u16(&t, 256);
	tb_u16(&t, 0);
	tb_u16(&t, 4);
	for (int i = 0; i < 4; i++) {
		tb_u16(&t, LAYOUT_A[i][0]);
		tb_u16(&t, LAYOUT_A[i][1]);
		tb_u32(&t, 0);
	}
	tb_u32(&t, 0); /* domains */
	tb_u64(&t, ng_fnv1a64(NG_FNV64_INIT, t.b, t.n));
	char path[64];
	snprintf(path, sizeof path, "/tmp/ng-test-restart1-%d", (int)getpid());
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(t.b, 1, t.n, f), t.n);
	fclose(f);
	ng_decoder *d = ng_decoder_new(NULL);
	assert_int_equal(ng_decoder_load(d, path), 0);
	unlink(path);
	ng_flow_batch b = {0};
	assert_int_equal(v9(d, 1000, T0, 0, 0, 'A', NOW0, &b), 1);
	assert_flow_a(&b.flows[0]);
	assert_int_equal(v9(d, 61000, T0 + 60, 60, 0, 'A', NOW0 + 60000, &b), 1);
	assert_int_equal(th_totals(d).restarts, 0);
	assert_int_equal(v9(d, 500, T0 + 90, 0, 0, 'A', NOW0 + 90000, &b), 0);
	assert_int_equal(th_totals(d).restarts, 1);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* The restart marks come last in the state image: data that only moves
 * them leaves the bytes before them (what the collector compares to tell
 * whether to write the file again) as they were; a new template does
 * not. */
static void test_state_marks_not_a_change(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	uint8_t *img[3];
	size_t len[3];
	assert_int_equal(v9(d, UP0, T0, 5000, 'A', 'A', NOW0, &b), 1);
	assert_int_equal(ng_decoder_save_mem(d, &img[0], &len[0]), 0);
	assert_int_equal(v9(d, UP0 + 1000, T0 + 1, 5001, 0, 'A', NOW0 + 1000, &b), 1);
	assert_int_equal(ng_decoder_save_mem(d, &img[1], &len[1]), 0);
	v9_source = 8;
	assert_int_equal(v9(d, UP0, T0 + 1, 10, 'A', 0, NOW0 + 1000, &b), 0);
	v9_source = 7;
	assert_int_equal(ng_decoder_save_mem(d, &img[2], &len[2]), 0);
	size_t s0 = ng_decoder_state_stable_len(img[0], len[0]);
	size_t s1 = ng_decoder_state_stable_len(img[1], len[1]);
	assert_true(s0 < len[0]);
	assert_int_equal(len[0], len[1]);
	assert_memory_not_equal(img[0], img[1], len[0]); /* the marks moved */
	assert_int_equal(s0, s1);
	assert_memory_equal(img[0], img[1], s0);
	size_t s2 = ng_decoder_state_stable_len(img[2], len[2]);
	assert_true(s2 > s1); /* a template of source ID 8 */
	for (int i = 0; i < 3; i++)
		free(img[i]);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* sFlow v5 datagram header (sflow.org "sFlow Version 5": version, agent
 * address type 1, agent, sub_agent_id, sequence_number, uptime,
 * num_samples 0). */
static size_t sflow(ng_decoder *d, uint32_t seq, uint32_t uptime, uint64_t now)
{
	struct tb t = {.n = 0};
	tb_u32(&t, 5);
	tb_u32(&t, 1);
	tb_v4(&t, 192, 0, 2, 1);
	tb_u32(&t, 3);
	tb_u32(&t, seq);
	tb_u32(&t, uptime);
	tb_u32(&t, 0);
	ng_flow_batch b = {0};
	size_t n = tb_decode(d, &t, now, &b);
	ng_flow_batch_free(&b);
	return n;
}

/* sonic-buildimage#7445: the agent's uptime starts again when the sflow
 * service restarts; the datagram sequence too.  Counted once; the
 * sequence resynchronises (no loss counted for the jump). */
static void test_sflow_agent_restart_counted(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	sflow(d, 100, 3600000, NOW0);
	sflow(d, 101, 3601000, NOW0 + 1000);
	sflow(d, 1, 900, NOW0 + 30000);
	sflow(d, 2, 1900, NOW0 + 31000);
	ng_exporter_stats s = th_totals(d);
	assert_int_equal(s.restarts, 1);
	assert_int_equal(s.lost, 0);
	assert_int_equal(s.packets, 4);
	ng_decoder_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v9_restart_holds_until_new_template),
	    cmocka_unit_test(test_ipfix_restart_holds_until_new_template),
	    cmocka_unit_test(test_unchanged_template_resumes),
	    cmocka_unit_test(test_no_false_restarts),
	    cmocka_unit_test(test_two_processes_one_domain),
	    cmocka_unit_test(test_state_load_continuing_decodes_at_once),
	    cmocka_unit_test(test_state_load_restarted_holds),
	    cmocka_unit_test(test_state_format1_trusted),
	    cmocka_unit_test(test_state_marks_not_a_change),
	    cmocka_unit_test(test_sflow_agent_restart_counted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
