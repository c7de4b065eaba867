/*
 * test_decode_plausible.c — values that cannot be right (issue 18 part 2,
 * src/decode/plausible.h): a byte-swapped or implausible sampling rate,
 * counters below the smallest header, times after the export or before
 * the exporter's boot.  Each is built from bytes shaped as the exporter
 * sends them and checked for the values stored, the anomaly flag and the
 * per-exporter counter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_decode_helpers.h"

#define EXPORT_S 1700000000u
#define EXPORT_MS 1700000000000ULL
#define DAY_MS 86400000ULL

/* samplingInterval 1000 as RouterOS puts it in the record: little-endian
 * E8 03 00 00, which read in network order is 0xE8030000. */
#define MIKROTIK_1000_RAW 3892510720u

static void tb_le32(struct tb *t, uint32_t v)
{
	tb_u8(t, (uint8_t)v), tb_u8(t, (uint8_t)(v >> 8));
	tb_u8(t, (uint8_t)(v >> 16)), tb_u8(t, (uint8_t)(v >> 24));
}

/*
 * MikroTik RouterOS sends samplingInterval (IE 34) in the data record, not
 * in options data, and in little-endian order:
 *   goflow2 issue 113 "SAMPLING_INTERVAL not used when included in the
 *     data template" (https://github.com/netsampler/goflow2/issues/113):
 *     "MikroTik devices seem to send the sampling interval in" little
 *     endian; goflow2 pull 130 added an `endian: little` mapping for it;
 *   akvorado issue 417 "Mikrotik (routerOS) send sample rate in little
 *     endian" (https://github.com/akvorado/akvorado/issues/417), confirmed
 *     by the reporter;
 *   fastnetmon issue 985 "Mikrotik RouterOS v6.49.6 encodes sampling rate
 *     using wrong byte order (endian-less) in Netflow v9"
 *     (https://github.com/pavel-odintsov/fastnetmon/issues/985).
 * The IPFIX record: addresses, ports, protocol, octets, packets, start and
 * end in ms, IE 34 (4 bytes).  On main before plausible.h the rate was
 * taken as 3 892 510 720 and the bytes multiplied by it.
 */
static void test_mikrotik_ipfix_le_rate(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs f[] = {{8, 4, 0},   {12, 4, 0}, {7, 2, 0}, {11, 2, 0},
	                                 {4, 1, 0},   {1, 4, 0},  {2, 4, 0}, {152, 8, 0},
	                                 {153, 8, 0}, {34, 4, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 0);
	tb_tpl(&t, 256, 0, f, 10);
	size_t s = tb_set(&t, 256);
	tb_v4(&t, 192, 168, 88, 10), tb_v4(&t, 198, 51, 100, 7);
	tb_u16(&t, 51000), tb_u16(&t, 443), tb_u8(&t, 6);
	tb_u32(&t, 1500), tb_u32(&t, 3);
	tb_u64(&t, EXPORT_MS - 20000), tb_u64(&t, EXPORT_MS - 1000);
	tb_le32(&t, 1000);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 1);
	const ng_flow *r = &b.flows[0];
	assert_int_equal(r->sampling_rate, 1000);
	assert_int_equal(r->sampling_source, NG_SAMPLING_RECORD);
	assert_int_equal(r->bytes_raw, 1500);
	assert_int_equal(r->bytes, 1500000);
	assert_int_equal(r->packets, 3000);
	assert_int_equal(r->sampling_raw, MIKROTIK_1000_RAW);
	assert_int_equal(r->anomalies, NG_ANOMALY_SAMPLING);
	ng_exporter_stats st = th_totals(d);
	assert_int_equal(st.sampling_fixed, 1);
	assert_int_equal(st.sampling_rejected, 0);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* The same in NetFlow v9, as RouterOS v6.49.6 sent it (fastnetmon issue
 * 985): FIRST/LAST_SWITCHED relative to sysUptime, IE 34 little-endian. */
static void test_mikrotik_v9_le_rate(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs f[] = {{8, 4, 0}, {12, 4, 0}, {1, 4, 0},  {2, 4, 0},
	                                 {4, 1, 0}, {22, 4, 0}, {21, 4, 0}, {34, 4, 0}};
	tb_v9(&t, 2, 600000, EXPORT_S, 1, 0);
	tb_v9_tpl(&t, 256, f, 8);
	size_t s = tb_set(&t, 256);
	tb_v4(&t, 192, 168, 88, 10), tb_v4(&t, 198, 51, 100, 7);
	tb_u32(&t, 4000), tb_u32(&t, 10), tb_u8(&t, 17);
	tb_u32(&t, 590000), tb_u32(&t, 599000);
	tb_le32(&t, 1000);
	tb_set_end(&t, s);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 1);
	const ng_flow *r = &b.flows[0];
	assert_int_equal(r->sampling_rate, 1000);
	assert_int_equal(r->bytes, 4000000);
	assert_int_equal(r->packets, 10000);
	assert_int_equal(r->flow_start, EXPORT_MS - 10000);
	assert_int_equal(r->sampling_raw, MIKROTIK_1000_RAW);
	assert_int_equal(r->anomalies, NG_ANOMALY_SAMPLING);
	assert_int_equal(th_totals(d).sampling_fixed, 1);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* A rate past 2^24 - 1 that no byte swap explains (0x12345678: its low 16
 * bits are not zero) is not applied: the record is scaled by the options
 * data's rate when the domain has one, else taken as unsampled.  A sound
 * rate and a 16-bit little-endian one (1000 as E8 03 = 59 395, which
 * cannot be told from a real rate) are taken as sent. */
static void test_rate_rejected(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs f[] = {{8, 4, 0}, {1, 4, 0}, {2, 4, 0}, {34, 4, 0}};
	static const struct tb_fs f16[] = {{8, 4, 0}, {1, 4, 0}, {2, 4, 0}, {34, 2, 0}};
	static const struct tb_fs opt[] = {{149, 4, 0}, {34, 4, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 7);
	tb_tpl(&t, 256, 0, f, 4);
	tb_tpl(&t, 257, 0, f16, 4);
	size_t s = tb_set(&t, 256);
	tb_v4(&t, 10, 0, 0, 1), tb_u32(&t, 1000), tb_u32(&t, 2), tb_u32(&t, 0x12345678);
	tb_v4(&t, 10, 0, 0, 2), tb_u32(&t, 1000), tb_u32(&t, 2), tb_u32(&t, 0xffffff);
	tb_set_end(&t, s);
	s = tb_set(&t, 257);
	tb_v4(&t, 10, 0, 0, 3), tb_u32(&t, 1000), tb_u32(&t, 2), tb_u8(&t, 0xe8), tb_u8(&t, 0x03);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 3);
	assert_int_equal(b.flows[0].sampling_rate, 1);
	assert_int_equal(b.flows[0].sampling_source, NG_SAMPLING_NONE);
	assert_int_equal(b.flows[0].bytes, 1000);
	assert_int_equal(b.flows[0].sampling_raw, 0x12345678);
	assert_int_equal(b.flows[0].anomalies, NG_ANOMALY_SAMPLING);
	assert_int_equal(b.flows[1].sampling_rate, 0xffffff); /* the bound: as sent */
	assert_int_equal(b.flows[1].anomalies, 0);
	assert_int_equal(b.flows[1].sampling_raw, 0);
	assert_int_equal(b.flows[2].sampling_rate, 59395);
	assert_int_equal(b.flows[2].anomalies, 0);
	ng_exporter_stats st = th_totals(d);
	assert_int_equal(st.sampling_rejected, 1);
	assert_int_equal(st.sampling_fixed, 0);

	/* options data giving the domain a rate of 10: the refused record
	 * falls back to it */
	tb_ipfix(&t, EXPORT_S, 3, 7);
	tb_tpl(&t, 258, 1, opt, 2);
	s = tb_set(&t, 258);
	tb_u32(&t, 7), tb_u32(&t, 10);
	tb_set_end(&t, s);
	s = tb_set(&t, 256);
	tb_v4(&t, 10, 0, 0, 4), tb_u32(&t, 1000), tb_u32(&t, 2), tb_u32(&t, 0x12345678);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	b.n = 0;
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 1);
	assert_int_equal(b.flows[0].sampling_rate, 10);
	assert_int_equal(b.flows[0].sampling_source, NG_SAMPLING_OPTIONS);
	assert_int_equal(b.flows[0].bytes, 10000);
	assert_int_equal(b.flows[0].anomalies, NG_ANOMALY_SAMPLING);
	assert_int_equal(th_totals(d).sampling_rejected, 2);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* A byte-swapped rate in options data (selector 5, IE 34 little-endian
 * 1000) is stored corrected and counted once; the records that use it are
 * scaled by 1000 and not flagged.  A refused one is not stored. */
static void test_options_rate_swapped(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs opt[] = {{302, 4, 0}, {34, 4, 0}};
	static const struct tb_fs f[] = {{8, 4, 0}, {1, 4, 0}, {2, 4, 0}, {302, 4, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 300, 1, opt, 2);
	tb_tpl(&t, 301, 0, f, 4);
	size_t s = tb_set(&t, 300);
	tb_u32(&t, 5), tb_le32(&t, 1000);
	tb_u32(&t, 6), tb_u32(&t, 0x12345678);
	tb_set_end(&t, s);
	s = tb_set(&t, 301);
	tb_v4(&t, 10, 0, 0, 1), tb_u32(&t, 100), tb_u32(&t, 1), tb_u32(&t, 5);
	tb_v4(&t, 10, 0, 0, 2), tb_u32(&t, 100), tb_u32(&t, 1), tb_u32(&t, 6);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 2);
	assert_int_equal(b.flows[0].sampling_rate, 1000);
	assert_int_equal(b.flows[0].sampling_source, NG_SAMPLING_OPTIONS);
	assert_int_equal(b.flows[0].bytes, 100000);
	assert_int_equal(b.flows[0].anomalies, 0);
	/* selector 6's rate was refused: it has none */
	assert_int_equal(b.flows[1].sampling_rate, 1);
	assert_int_equal(b.flows[1].sampling_source, NG_SAMPLING_NONE);
	ng_exporter_stats st = th_totals(d);
	assert_int_equal(st.sampling_fixed, 1);
	assert_int_equal(st.sampling_rejected, 1);
	assert_int_equal(st.options_records, 2);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* A rate that is a multiple of 256 sent little-endian (512 as 00 02 00 00
 * = 131 072) cannot be told from a real rate of 131 072 (akvorado issue
 * 417): taken as sent, unflagged, until the domain has sent an
 * unambiguously swapped rate (1000 as 3 892 510 720); then swapped. */
static void test_rate_ambiguous(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs f[] = {{8, 4, 0}, {1, 4, 0}, {2, 4, 0}, {34, 4, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 0);
	tb_tpl(&t, 256, 0, f, 4);
	size_t s = tb_set(&t, 256);
	tb_v4(&t, 10, 0, 0, 1), tb_u32(&t, 1000), tb_u32(&t, 2), tb_le32(&t, 512);
	tb_v4(&t, 10, 0, 0, 2), tb_u32(&t, 1000), tb_u32(&t, 2), tb_le32(&t, 1000);
	tb_v4(&t, 10, 0, 0, 3), tb_u32(&t, 1000), tb_u32(&t, 2), tb_le32(&t, 512);
	tb_v4(&t, 10, 0, 0, 4), tb_u32(&t, 1000), tb_u32(&t, 2), tb_u32(&t, 100000);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 4);
	assert_int_equal(b.flows[0].sampling_rate, 131072);
	assert_int_equal(b.flows[0].anomalies, 0);
	assert_int_equal(b.flows[1].sampling_rate, 1000);
	assert_int_equal(b.flows[2].sampling_rate, 512);
	assert_int_equal(b.flows[2].sampling_raw, 131072);
	assert_int_equal(b.flows[2].anomalies, NG_ANOMALY_SAMPLING);
	assert_int_equal(b.flows[3].sampling_rate, 100000); /* not a multiple of 65 536 */
	assert_int_equal(b.flows[3].anomalies, 0);
	assert_int_equal(th_totals(d).sampling_fixed, 2);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* Counters that cannot be: bytes with 0 packets, fewer bytes than packets
 * x 20 (IPv4) or x 40 (IPv6).  Stored as sent, flagged and counted; the
 * sound ones and a record without a packet counter (as Cisco NSEL sends)
 * are not flagged. */
static void test_counters_implausible(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs f4[] = {{8, 4, 0}, {1, 4, 0}, {2, 4, 0}};
	static const struct tb_fs f6[] = {{27, 16, 0}, {1, 4, 0}, {2, 4, 0}};
	static const struct tb_fs fnopkt[] = {{8, 4, 0}, {231, 4, 0}};
	static const uint8_t a6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 256, 0, f4, 3);
	tb_tpl(&t, 257, 0, f6, 3);
	tb_tpl(&t, 258, 0, fnopkt, 2);
	size_t s = tb_set(&t, 256);
	tb_v4(&t, 10, 0, 0, 1), tb_u32(&t, 100), tb_u32(&t, 0); /* packets 0 */
	tb_v4(&t, 10, 0, 0, 2), tb_u32(&t, 39), tb_u32(&t, 2);  /* 39 < 2 x 20 */
	tb_v4(&t, 10, 0, 0, 3), tb_u32(&t, 40), tb_u32(&t, 2);  /* sound */
	tb_v4(&t, 10, 0, 0, 4), tb_u32(&t, 0), tb_u32(&t, 0);   /* empty: sound */
	tb_set_end(&t, s);
	s = tb_set(&t, 257);
	tb_bytes(&t, a6, 16), tb_u32(&t, 79), tb_u32(&t, 2); /* 79 < 2 x 40 */
	tb_bytes(&t, a6, 16), tb_u32(&t, 80), tb_u32(&t, 2); /* sound */
	tb_set_end(&t, s);
	s = tb_set(&t, 258);
	tb_v4(&t, 10, 0, 0, 5), tb_u32(&t, 10); /* NSEL: no packet counter */
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 7);
	static const uint16_t want[7] = {
	    NG_ANOMALY_COUNTERS, NG_ANOMALY_COUNTERS, 0, 0, NG_ANOMALY_COUNTERS, 0, 0};
	for (int i = 0; i < 7; i++)
		assert_int_equal(b.flows[i].anomalies, want[i]);
	assert_int_equal(b.flows[0].bytes, 100); /* stored as sent */
	assert_int_equal(b.flows[0].packets, 0);
	assert_int_equal(b.flows[1].bytes, 39);
	ng_exporter_stats st = th_totals(d);
	assert_int_equal(st.packets_zero, 1);
	assert_int_equal(st.bytes_below_headers, 2);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* Times: an end two days after the export time is flagged
 * (time_after_export), one hour after is not; a NetFlow v9 start two days
 * before the boot the header implies is flagged (time_before_boot), a
 * flow that began 10 minutes before sysUptime wrapped is not.  Times are
 * stored as decoded. */
static void test_times_implausible(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs f[] = {{8, 4, 0}, {1, 4, 0}, {2, 4, 0}, {152, 8, 0}, {153, 8, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 256, 0, f, 5);
	size_t s = tb_set(&t, 256);
	tb_v4(&t, 10, 0, 0, 1), tb_u32(&t, 100), tb_u32(&t, 1);
	tb_u64(&t, EXPORT_MS - 1000), tb_u64(&t, EXPORT_MS + 2 * DAY_MS);
	tb_v4(&t, 10, 0, 0, 2), tb_u32(&t, 100), tb_u32(&t, 1);
	tb_u64(&t, EXPORT_MS - 1000), tb_u64(&t, EXPORT_MS + 3600000);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 2);
	assert_int_equal(b.flows[0].anomalies, NG_ANOMALY_EXPORT_TIME);
	assert_int_equal(b.flows[0].flow_end, EXPORT_MS + 2 * DAY_MS);
	assert_int_equal(b.flows[1].anomalies, 0);
	assert_int_equal(th_totals(d).time_after_export, 1);

	/* v9: sysUptime 1 hour */
	static const struct tb_fs f9[] = {{8, 4, 0}, {1, 4, 0}, {2, 4, 0}, {22, 4, 0}, {21, 4, 0}};
	const uint32_t up = 3600000;
	tb_v9(&t, 2, up, EXPORT_S, 1, 9);
	tb_v9_tpl(&t, 256, f9, 5);
	s = tb_set(&t, 256);
	/* FIRST_SWITCHED 2 days before boot: sysUptime - (uptime + 2 days) mod 2^32 */
	tb_v4(&t, 10, 0, 0, 3), tb_u32(&t, 100), tb_u32(&t, 1);
	tb_u32(&t, (uint32_t)(0 - 2 * DAY_MS)), tb_u32(&t, up - 1000);
	/* 10 minutes before the 2^32 ms wrap */
	tb_v4(&t, 10, 0, 0, 4), tb_u32(&t, 100), tb_u32(&t, 1);
	tb_u32(&t, (uint32_t)(0 - 600000u)), tb_u32(&t, up - 1000);
	tb_set_end(&t, s);
	b.n = 0;
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 2);
	assert_int_equal(b.flows[0].anomalies, NG_ANOMALY_EXPORT_TIME);
	assert_int_equal(b.flows[0].flow_start, EXPORT_MS - up - 2 * DAY_MS);
	assert_int_equal(b.flows[1].anomalies, 0);
	assert_int_equal(b.flows[1].flow_start, EXPORT_MS - up - 600000);
	ng_exporter_stats st = th_totals(d);
	assert_int_equal(st.time_before_boot, 1);
	assert_int_equal(st.time_after_export, 1);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mikrotik_ipfix_le_rate),
	    cmocka_unit_test(test_mikrotik_v9_le_rate),
	    cmocka_unit_test(test_rate_rejected),
	    cmocka_unit_test(test_options_rate_swapped),
	    cmocka_unit_test(test_rate_ambiguous),
	    cmocka_unit_test(test_counters_implausible),
	    cmocka_unit_test(test_times_implausible),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
