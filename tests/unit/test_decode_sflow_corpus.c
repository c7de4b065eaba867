/*
 * test_decode_sflow_corpus.c — every sFlow v5 file of
 * ../shared/testdata/captures (INDEX.tsv protocol "sFlow v5") through the
 * capture reader and the decoder: flow and counter sample counts equal
 * tshark's, and field values of several files equal tshark's dissection.
 *
 * Raw payload files (.dat/.bin/.dump) were wrapped for tshark with
 *   od -Ax -tx1 -v F | text2pcap -u 1000,6343 - F.pcap
 * and the sample counts taken with
 *   tshark -r F.pcap -d udp.port==6343,sflow -T fields -e sflow_245.sampletype
 * (types 1, 3 = flow samples, 2, 4 = counter samples, 5 = discarded
 * packet).  tshark does not dissect type 5 (it prints "Unknown sample
 * format"): the discard values come from the file's bytes read against
 * sflow.org "sFlow Dropped Packet Notification Structures" (xxd shown).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/addr.h"
#include "decode/decoder.h"
#include "net/capture.h"

struct run {
	ng_decoder *d;
	ng_flow_batch flows; /* every record */
	ng_counter_batch ctr;
	size_t sflow_records; /* records with flow_version 0x50 */
	size_t discards;
};

static int on_dg(const ng_datagram *dg, void *arg)
{
	struct run *r = arg;
	ng_decode(r->d, dg, &r->flows);
	ng_decoder_take_counters(r->d, &r->ctr);
	return 0;
}

/* Decodes captures/rel into *r (fresh decoder).  Returns false (and skips
 * the test) when the test data is absent. */
static bool run_file(const char *rel, struct run *r)
{
	const char *td = getenv("NG_TESTDATA");
	if (!td)
		return false;
	char path[1024], err[256];
	snprintf(path, sizeof path, "%s/captures/%s", td, rel);
	memset(r, 0, sizeof *r);
	r->d = ng_decoder_new(NULL);
	assert_non_null(r->d);
	int rc = ng_capture_read(path, on_dg, r, NULL, err, sizeof err);
	if (rc != 0)
		fail_msg("%s: %s", rel, err);
	for (size_t i = 0; i < r->flows.n; i++) {
		if (r->flows.flows[i].flow_version != 0x50)
			continue;
		r->sflow_records++;
		if (r->flows.flows[i].sample_kind == NG_SAMPLE_DISCARD)
			r->discards++;
	}
	return true;
}

static void run_free(struct run *r)
{
	ng_flow_batch_free(&r->flows);
	ng_counter_batch_free(&r->ctr);
	ng_decoder_free(r->d);
}

#define SKIP_WITHOUT_DATA()                                                                        \
	do {                                                                                       \
		if (!getenv("NG_TESTDATA")) {                                                      \
			print_message("NG_TESTDATA not set: shared test data absent, skipped\n");  \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

static const char *addr(const uint8_t a[16])
{
	static char buf[4][NG_ADDR_STRLEN];
	static int i;
	i = (i + 1) & 3;
	return ng_addr_format(a, buf[i]);
}

/* ---- counts against tshark ---- */

static const struct {
	const char *file;
	unsigned flows;    /* tshark sample types 1 + 3 + 5 */
	unsigned counters; /* tshark sample types 2 + 4 */
} corpus[] = {
    {"Cistern-sflow_dump/counter_sample.dump", 0, 1},
    {"Cistern-sflow_dump/event_discarded_packet.dump", 1, 0},
    {"Cistern-sflow_dump/flow_sample.dump", 1, 0},
    {"Cistern-sflow_dump/flow_sample_3.dump", 3, 0},
    {"Cistern-sflow_dump/flow_samples_2.dump", 2, 0},
    {"Cistern-sflow_dump/host_sample.dump", 0, 1},
    {"akvorado/data-1140.pcap", 5, 0},
    {"akvorado/data-discard-interface.pcap", 1, 0},
    {"akvorado/data-encap-vxlan.pcap", 1, 0},
    {"akvorado/data-icmpv4.pcap", 1, 0},
    {"akvorado/data-icmpv6.pcap", 1, 0},
    {"akvorado/data-local-interface.pcap", 1, 0},
    {"akvorado/data-multiple-interfaces.pcap", 1, 0},
    {"akvorado/data-qinq.pcap", 1, 0},
    {"akvorado/data-sflow-expanded-sample.pcap", 1, 0},
    {"akvorado/data-sflow-ipv4-data.pcap", 1, 0},
    {"akvorado/data-sflow-raw-ipv4.pcap", 2, 0},
    {"logstash-codec-sflow_dat/sflow_1_counters_sample.dat", 0, 1},
    {"logstash-codec-sflow_dat/sflow_counters_sample.dat", 0, 12},
    {"logstash-codec-sflow_dat/sflow_flow_sample.dat", 1, 0},
    {"logstash-codec-sflow_dat/sflow_flow_sample_eth_vlan.dat", 1, 0},
    {"logstash-codec-sflow_dat/sflow_with_lag_counters.dat", 5, 2},
    {"nDPI/sflow.pcap", 1, 8},
    {"sflow-parser/sflow.pcap", 1, 0},
    {"tcpdump/sflow-print-v6.pcap", 13, 48},
    {"tcpdump/sflow_expanded.pcap", 1, 0},
    {"tcpdump/sflow_multiple_counter_30_pdus.pcap", 0, 144},
    {"tcpdump/sflow_print-segv.pcap", 0, 0},
    {"telegraf_bin/sflow_issue_15375__sflow_drop_1036.bin", 1, 0},
    {"telegraf_bin/sflow_issue_15918__message.bin", 6, 1},
    {"telegraf_bin/sflow_issue_18876__message.bin", 0, 1},
    {"telegraf_bin/sflow_v5_example__sflow_v5.bin", 0, 1},
};

static void test_corpus_counts(void **state)
{
	(void)state;
	SKIP_WITHOUT_DATA();
	unsigned bad = 0;
	print_message("%-58s %9s %9s\n", "file", "flows", "counters");
	for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
		struct run r;
		run_file(corpus[i].file, &r);
		bool ok = r.sflow_records == corpus[i].flows && r.ctr.n == corpus[i].counters;
		print_message("%-58s %4zu/%-4u %4zu/%-4u %s\n", corpus[i].file, r.sflow_records,
		              corpus[i].flows, r.ctr.n, corpus[i].counters, ok ? "" : "MISMATCH");
		bad += !ok;
		/* every record is internally consistent */
		for (size_t j = 0; j < r.flows.n; j++) {
			const ng_flow *f = &r.flows.flows[j];
			if (f->flow_version != 0x50)
				continue;
			assert_int_equal(f->sampling_source, NG_SAMPLING_SFLOW);
			assert_int_equal(f->packets, (uint64_t)f->sampling_rate);
			assert_int_equal(f->bytes, f->bytes_raw * f->sampling_rate);
			assert_int_equal(f->flow_start, f->time_received);
		}
		run_free(&r);
	}
	assert_int_equal(bad, 0);
}

/* ---- exact values ---- */

/* tshark -r akvorado/data-1140.pcap -d udp.port==6343,sflow -V
 *   Agent address: 172.16.0.3, Sub-agent ID: 0, 5 flow samples
 *   sample 2: rate 1024, index 25, input 49001, output 25, Incoming VLAN
 *   4294967295 (none), Outgoing 100, Frame Length 439, IPv4 104.26.8.24 →
 *   45.90.161.46 Total Length 421, TCP 443 → 56876 Flags 0x018, AS Router
 *   39421, AS Source 13335, AS Destinations 0, Next hop 45.90.161.46,
 *   masks 20 / 27
 *   sample 4: input 28, output 49001, AS Sequence (3 entries) 203698,
 *   6762, 26615 (tshark goes on to print the 5 communities as ASes),
 *   next hop 31.14.69.110, masks 27 / 17, Total Length 40, Frame Length 64
 * tshark -r akvorado/data-1140.pcap -d udp.port==6343,sflow -T fields \
 *   -e sflow.flow_sample.index -e sflow.flow_sample.input_interface
 *   → 28,25,27,28,28  27,49001,27,28,27 */
static void test_akvorado_1140(void **state)
{
	(void)state;
	SKIP_WITHOUT_DATA();
	struct run r;
	run_file("akvorado/data-1140.pcap", &r);
	assert_int_equal(r.sflow_records, 5);
	const ng_flow *f = &r.flows.flows[1];
	assert_string_equal(addr(f->agent_addr), "172.16.0.3");
	assert_int_equal(f->observation_domain, 0);
	assert_int_equal(f->sampling_rate, 1024);
	assert_int_equal(f->in_if, 49001);
	assert_int_equal(f->out_if, 25);
	assert_int_equal(f->direction, NG_DIR_EGRESS); /* index 25 = output */
	assert_int_equal(f->src_vlan, 0);
	assert_int_equal(f->dst_vlan, 100);
	assert_string_equal(addr(f->src_addr), "104.26.8.24");
	assert_string_equal(addr(f->dst_addr), "45.90.161.46");
	assert_int_equal(f->protocol, 6);
	assert_int_equal(f->src_port, 443);
	assert_int_equal(f->dst_port, 56876);
	assert_int_equal(f->tcp_flags, 0x18);
	assert_int_equal(f->bytes_raw, 421);
	assert_int_equal(f->bytes, 421 * 1024);
	assert_int_equal(f->packets, 1024);
	assert_int_equal(f->l2_bytes, 439 * 1024);
	assert_int_equal(f->src_as, 13335);
	assert_int_equal(f->dst_as, 39421); /* empty path: the router's own AS */
	assert_string_equal(addr(f->next_hop), "45.90.161.46");
	assert_int_equal(f->src_mask, 20);
	assert_int_equal(f->dst_mask, 27);

	f = &r.flows.flows[3];
	assert_int_equal(f->in_if, 28);
	assert_int_equal(f->out_if, 49001);
	assert_int_equal(f->direction, NG_DIR_INGRESS); /* index 28 = input */
	assert_int_equal(f->dst_as, 26615);
	assert_string_equal(addr(f->next_hop), "31.14.69.110");
	assert_int_equal(f->src_mask, 27);
	assert_int_equal(f->dst_mask, 17);
	assert_int_equal(f->bytes_raw, 40);
	assert_int_equal(f->l2_bytes, 64 * 1024);

	/* sample 1: IPv6, Payload Length 1460 → 1500 IP bytes */
	f = &r.flows.flows[0];
	assert_int_equal(f->ip_version, 6);
	assert_string_equal(addr(f->src_addr), "2a0c:8880:2:0:185:21:130:38");
	assert_int_equal(f->bytes_raw, 1500);
	assert_int_equal(f->src_port, 46026);
	assert_int_equal(f->dst_port, 22);
	assert_int_equal(f->src_vlan, 100);
	run_free(&r);
}

/* tshark -r akvorado/data-qinq.pcap -d udp.port==6343,sflow -V
 *   Agent 172.17.128.58, Sub-agent ID 100, expanded flow sample, Source ID
 *   index 369098852, rate 4096, input 369098852, output 369098851, Frame
 *   Length 106, 802.1Q ID 1062 then 802.1Q ID 1493, IPv4 49.49.49.2 →
 *   49.49.49.109 Total Length 80, TCP 32017 → 443 */
static void test_akvorado_qinq(void **state)
{
	(void)state;
	SKIP_WITHOUT_DATA();
	struct run r;
	run_file("akvorado/data-qinq.pcap", &r);
	assert_int_equal(r.sflow_records, 1);
	const ng_flow *f = &r.flows.flows[0];
	assert_string_equal(addr(f->agent_addr), "172.17.128.58");
	assert_int_equal(f->observation_domain, 100);
	assert_int_equal(f->sampling_rate, 4096);
	assert_int_equal(f->in_if, 369098852);
	assert_int_equal(f->out_if, 369098851);
	assert_int_equal(f->direction, NG_DIR_INGRESS);
	assert_int_equal(f->src_vlan, 1062); /* outer tag */
	assert_string_equal(addr(f->src_addr), "49.49.49.2");
	assert_string_equal(addr(f->dst_addr), "49.49.49.109");
	assert_int_equal(f->src_port, 32017);
	assert_int_equal(f->dst_port, 443);
	assert_int_equal(f->bytes_raw, 80);
	assert_int_equal(f->l2_bytes, 106 * 4096);
	run_free(&r);
}

/* tshark -r akvorado/data-{discard,multiple,local}-interface.pcap
 *   -d udp.port==6343,sflow -V: Index 28, Input 27, Output interface
 *   0x40000001 "packet discarded (1)" value Host Unreachable (1);
 *   0x80000007 "multiple interfaces (2)" value 7; 0x3fffffff ifindex
 *   1073741823 (the device itself). */
static void test_akvorado_interface_formats(void **state)
{
	(void)state;
	SKIP_WITHOUT_DATA();
	struct run r;
	run_file("akvorado/data-discard-interface.pcap", &r);
	const ng_flow *f = &r.flows.flows[0];
	assert_int_equal(f->in_if, 27);
	assert_int_equal(f->out_if, 0);
	assert_int_equal(f->sample_kind, NG_SAMPLE_DISCARD);
	assert_int_equal(f->discard_reason, 1);
	assert_int_equal(f->direction, NG_DIR_UNKNOWN);
	run_free(&r);

	run_file("akvorado/data-multiple-interfaces.pcap", &r);
	f = &r.flows.flows[0];
	assert_int_equal(f->in_if, 27);
	assert_int_equal(f->out_if, 0);
	assert_int_equal(f->sample_kind, NG_SAMPLE_FLOW);
	run_free(&r);

	run_file("akvorado/data-local-interface.pcap", &r);
	f = &r.flows.flows[0];
	assert_int_equal(f->in_if, 27);
	assert_int_equal(f->out_if, 0x3fffffff);
	assert_int_equal(f->sample_kind, NG_SAMPLE_FLOW);
	run_free(&r);
}

/* tshark -r akvorado/data-encap-vxlan.pcap -d udp.port==6343,sflow -T fields
 *   -e sflow_245.agent -e sflow.flow_sample.sampling_rate
 *   -e sflow.flow_sample.input_interface -e sflow_245.header.frame_length
 *   -e ip.src -e ip.dst -e ip.len -e udp.srcport -e udp.dstport -e ipv6.src
 *   -e ipv6.dst -e ipv6.nxt -e icmpv6.type
 * → 127.0.0.1 1 1073741823 172 (transport) 192.168.108.40,192.168.108.40
 *   192.168.108.40,192.168.15.14 272,154 40939,45833 6343,4789
 *   2001:db8:4::1 2001:db8:4::3 58 128 */
static void test_akvorado_vxlan(void **state)
{
	(void)state;
	SKIP_WITHOUT_DATA();
	struct run r;
	run_file("akvorado/data-encap-vxlan.pcap", &r);
	const ng_flow *f = &r.flows.flows[0];
	assert_string_equal(addr(f->agent_addr), "127.0.0.1");
	assert_string_equal(addr(f->exporter), "192.168.108.40"); /* datagram source */
	assert_int_equal(f->sampling_rate, 1);
	assert_int_equal(f->in_if, 0x3fffffff);
	assert_string_equal(addr(f->src_addr), "192.168.108.40");
	assert_string_equal(addr(f->dst_addr), "192.168.15.14");
	assert_int_equal(f->bytes_raw, 154);
	assert_int_equal(f->l2_bytes, 172);
	assert_int_equal(f->protocol, 17);
	assert_int_equal(f->src_port, 45833);
	assert_int_equal(f->dst_port, 4789);
	assert_string_equal(addr(f->inner_src_addr), "2001:db8:4::1");
	assert_string_equal(addr(f->inner_dst_addr), "2001:db8:4::3");
	assert_int_equal(f->inner_protocol, 58);
	run_free(&r);
}

/* tshark -r akvorado/data-icmpv6.pcap -d udp.port==6343,sflow -T fields
 *   -e sflow_245.agent -e ipv6.src -e ipv6.dst -e ipv6.plen -e icmpv6.type
 *   -e icmpv6.code -e sflow_245.header.frame_length
 * → 127.0.0.1 fe80::d05b:45ff:feee:5ecf 2001:db8:: 32 135 0 90 */
static void test_akvorado_icmpv6(void **state)
{
	(void)state;
	SKIP_WITHOUT_DATA();
	struct run r;
	run_file("akvorado/data-icmpv6.pcap", &r);
	const ng_flow *f = &r.flows.flows[0];
	assert_string_equal(addr(f->src_addr), "fe80::d05b:45ff:feee:5ecf");
	assert_string_equal(addr(f->dst_addr), "2001:db8::");
	assert_int_equal(f->protocol, 58);
	assert_int_equal(f->icmp_type, 135);
	assert_int_equal(f->icmp_code, 0);
	assert_int_equal(f->bytes_raw, 72);
	assert_int_equal(f->l2_bytes, 90);
	run_free(&r);
}

/* tshark -r nDPI/sflow.pcap -d udp.port==6343,sflow -T fields -e frame.number
 *   -e sflow_245.agent -e sflow_245.sub_agent_id -e sflow_245.ifindex
 *   -e sflow_245.ifspeed -e sflow_245.ifinoct -e sflow_245.ifoutoct
 *   -e sflow_245.ifinpkt -e sflow_245.ifouterr -e sflow_245.ifoper_status
 * → 1 172.21.35.17 1 1036 100000000 25963724 5455297 39811 0 1
 *   2 172.21.35.17 1 1043 100000000 50956132 102590282 15759 0 1 */
static void test_ndpi_counters(void **state)
{
	(void)state;
	SKIP_WITHOUT_DATA();
	struct run r;
	run_file("nDPI/sflow.pcap", &r);
	assert_int_equal(r.ctr.n, 8);
	const ng_counter_sample *c = &r.ctr.s[0];
	assert_string_equal(addr(c->agent), "172.21.35.17");
	assert_int_equal(c->sub_agent, 1);
	assert_true(c->parts & NG_CTR_IF);
	assert_int_equal(c->if_index, 1036);
	assert_int_equal(c->if_speed, 100000000);
	assert_int_equal(c->in_octets, 25963724);
	assert_int_equal(c->out_octets, 5455297);
	assert_int_equal(c->in_ucast, 39811);
	assert_int_equal(c->out_errors, 0);
	assert_int_equal((c->if_status >> 1) & 1, 1); /* oper status up */
	c = &r.ctr.s[1];
	assert_int_equal(c->if_index, 1043);
	assert_int_equal(c->in_octets, 50956132);
	assert_int_equal(c->out_octets, 102590282);
	assert_int_equal(c->in_ucast, 15759);
	run_free(&r);
}

/* IPv6 agent and transport.
 * tshark -r tcpdump/sflow-print-v6.pcap -d udp.port==6343,sflow -T fields
 *   -e frame.number -e ipv6.src -e sflow_245.agent -e sflow_245.sequence_number
 *   -e sflow_245.ifindex -e sflow_245.ifinoct -e sflow_245.ifoutoct
 * → 1 30::1:1:1 30::1:1:1 109 23001 0 9717
 * tshark ... -e sflow.flow_sample.sampling_rate -e sflow.flow_sample.input_interface
 *   -e ip.src -e ip.dst -e ip.len  (frame 4) → 1 7001 10.10.10.2 50.1.1.2 46 */
static void test_tcpdump_v6_agent(void **state)
{
	(void)state;
	SKIP_WITHOUT_DATA();
	struct run r;
	run_file("tcpdump/sflow-print-v6.pcap", &r);
	assert_int_equal(r.ctr.n, 48);
	const ng_counter_sample *c = &r.ctr.s[0];
	assert_string_equal(addr(c->agent), "30::1:1:1");
	assert_string_equal(addr(c->exporter), "30::1:1:1");
	assert_int_equal(c->if_index, 23001);
	assert_int_equal(c->in_octets, 0);
	assert_int_equal(c->out_octets, 9717);
	const ng_flow *f = &r.flows.flows[0];
	assert_string_equal(addr(f->agent_addr), "30::1:1:1");
	assert_int_equal(f->sampling_rate, 1);
	assert_int_equal(f->in_if, 7001);
	assert_string_equal(addr(f->src_addr), "10.10.10.2");
	assert_string_equal(addr(f->dst_addr), "50.1.1.2");
	assert_int_equal(f->bytes_raw, 46);
	run_free(&r);
}

/* tshark does not dissect sample type 5; the bytes (xxd):
 *   0000 0005 0000 0001 c0a8 77b8 0001 86a0   version 5, IPv4 agent
 *   0000 0003 0000 307e 0000 0001 0000 0005   192.168.119.184, sub-agent
 *   0000 002c 0000 0002 0000 0000 0000 0001   100000, seq 3, uptime 12414,
 *   0000 0100 0000 0001 0000 0002 0000 0001   1 sample: 0:5 len 44, seq 2,
 *   0000 0001 0000 040c 0000 0004 0000 002a   source 0:1, drops 256,
 *   input 1, output 2, reason 1, 1 record (0:1036, 4 bytes). */
static void test_telegraf_discard(void **state)
{
	(void)state;
	SKIP_WITHOUT_DATA();
	struct run r;
	run_file("telegraf_bin/sflow_issue_15375__sflow_drop_1036.bin", &r);
	assert_int_equal(r.discards, 1);
	const ng_flow *f = &r.flows.flows[0];
	assert_string_equal(addr(f->agent_addr), "192.168.119.184");
	assert_int_equal(f->observation_domain, 100000);
	assert_int_equal(f->sample_kind, NG_SAMPLE_DISCARD);
	assert_int_equal(f->discard_reason, 1);
	assert_int_equal(f->in_if, 1);
	assert_int_equal(f->out_if, 2);
	assert_int_equal(f->packets, 1);
	run_free(&r);
}

/* tshark -r tcpdump/sflow_print-segv.pcap -d udp.port==6343,sflow: one
 * malformed packet.  Decoded: a counted error, no record, no crash. */
static void stat_sum(const ng_exporter_stats *s, void *arg)
{
	uint64_t *n = arg;
	for (int i = 0; i < NG_DERR_COUNT; i++)
		*n += s->errors[i];
}

static void test_malformed_counted(void **state)
{
	(void)state;
	SKIP_WITHOUT_DATA();
	struct run r;
	run_file("tcpdump/sflow_print-segv.pcap", &r);
	uint64_t errs = 0;
	ng_decoder_foreach_stats(r.d, stat_sum, &errs);
	assert_true(errs >= 1);
	assert_int_equal(r.sflow_records, 0);
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_corpus_counts),
	    cmocka_unit_test(test_akvorado_1140),
	    cmocka_unit_test(test_akvorado_qinq),
	    cmocka_unit_test(test_akvorado_interface_formats),
	    cmocka_unit_test(test_akvorado_vxlan),
	    cmocka_unit_test(test_akvorado_icmpv6),
	    cmocka_unit_test(test_ndpi_counters),
	    cmocka_unit_test(test_tcpdump_v6_agent),
	    cmocka_unit_test(test_telegraf_discard),
	    cmocka_unit_test(test_malformed_counted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
