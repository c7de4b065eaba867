/*
 * test_decode_vendors.c — one record of each vendor's export, decoded by
 * nagare and compared field by field with tshark's dissection of the
 * same packets.
 *
 * How the expected values were made: the files of a row are given to
 * tshark in the same order (pcaps merged with `mergecap -a`; raw payload
 * files wrapped as UDP payloads to port 2055, as tests/corpus/check.py
 * does), with two passes (-2) so data sets that come before their
 * template are dissected too.  The row holds tshark's first data record
 * with an address: SrcAddr, DstAddr, SrcPort, DstPort, Protocol, Octets
 * (or Permanent Octets, IE 85), Packets.  Times: for IPFIX tshark's
 * absolute StartTime/EndTime in ms; for NetFlow v5/v9 tshark shows
 * StartTime/EndTime as sysUpTime offsets, so the expected time is
 * unix_secs*1000 + unix_nsecs/1e6 - (SysUptime - StartTime) in ms, taking
 * the difference signed (32-bit) as RFC 3954 FIRST_SWITCHED allows.
 * Raw payload files carry no capture time, so `time_received` is not
 * checked here.  The tshark command is above each row.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_decode_helpers.h"

struct vexp {
	const char *vendor;
	const char *files[8];
	const char *src, *dst;
	uint16_t sport, dport;
	uint8_t proto;
	uint64_t bytes_raw, packets_raw;
	uint64_t start, end; /* 0: not checked (see the row) */
};

static const struct vexp rows[] = {
    /* Cisco ASR9000 IOS XR (v9, options sampler)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * netflow9_test_cisco_asr9k_opttpl256.dat + netflow9_test_cisco_asr9k_opttpl257.dat +
     * netflow9_test_cisco_asr9k_opttpl334.dat + netflow9_test_cisco_asr9k_tpl260.dat +
     * netflow9_test_cisco_asr9k_tpl266.dat + netflow9_test_cisco_asr9k_data256.dat +
     * netflow9_test_cisco_asr9k_data260.dat as UDP payloads) */
    {"Cisco ASR9000 IOS XR (v9, options sampler)",
     {"logstash-codec-netflow_dat/netflow9_test_cisco_asr9k_opttpl256.dat",
      "logstash-codec-netflow_dat/netflow9_test_cisco_asr9k_opttpl257.dat",
      "logstash-codec-netflow_dat/netflow9_test_cisco_asr9k_opttpl334.dat",
      "logstash-codec-netflow_dat/netflow9_test_cisco_asr9k_tpl260.dat",
      "logstash-codec-netflow_dat/netflow9_test_cisco_asr9k_tpl266.dat",
      "logstash-codec-netflow_dat/netflow9_test_cisco_asr9k_data256.dat",
      "logstash-codec-netflow_dat/netflow9_test_cisco_asr9k_data260.dat"},
     "10.0.9.146",
     "10.0.31.81",
     54017,
     443,
     6,
     40ULL,
     1ULL,
     1481018933940ULL,
     1481018933940ULL},
    /* Fortinet FortiGate FortiOS 5.2.1 (v9)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * netflow9_test_fortigate_fortios_521_tpl.dat + netflow9_test_fortigate_fortios_521_data256.dat
     * + netflow9_test_fortigate_fortios_521_data257.dat as UDP payloads) */
    {"Fortinet FortiGate FortiOS 5.2.1 (v9)",
     {"logstash-codec-netflow_dat/netflow9_test_fortigate_fortios_521_tpl.dat",
      "logstash-codec-netflow_dat/netflow9_test_fortigate_fortios_521_data256.dat",
      "logstash-codec-netflow_dat/netflow9_test_fortigate_fortios_521_data257.dat"},
     "192.168.99.7",
     "31.13.87.36",
     61910,
     443,
     6,
     152ULL,
     3ULL,
     1500957868522ULL,
     1500957877522ULL},
    /* Fortinet FortiGate 300D (v9, data before templates)
     * tshark -2 -r graylog2-server/fgt300d-netflow9.pcap -d udp.port==2056,cflow -V */
    {"Fortinet FortiGate 300D (v9, data before templates)",
     {"graylog2-server/fgt300d-netflow9.pcap"},
     "172.30.1.154",
     "118.175.30.250",
     40486,
     161,
     17,
     301ULL,
     2ULL,
     1532027107420ULL,
     1532027288000ULL},
    /* Palo Alto PAN-OS (v9)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * netflow9_test_paloalto_panos_tpl.dat + netflow9_test_paloalto_panos_data.dat as UDP payloads)
     */
    {"Palo Alto PAN-OS (v9)",
     {"logstash-codec-netflow_dat/netflow9_test_paloalto_panos_tpl.dat",
      "logstash-codec-netflow_dat/netflow9_test_paloalto_panos_data.dat"},
     "23.35.171.27",
     "10.32.91.205",
     80,
     49519,
     6,
     70ULL,
     1ULL,
     1510583971000ULL,
     1510583971000ULL},
    /* Juniper MX80 (v5)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * netflow5_test_juniper_mx80.dat as UDP payloads) */
    {"Juniper MX80 (v5)",
     {"logstash-codec-netflow_dat/netflow5_test_juniper_mx80.dat"},
     "10.0.0.1",
     "192.168.0.2",
     443,
     61608,
     6,
     1500ULL,
     1ULL,
     1469109154936ULL,
     1469109154936ULL},
    /* MikroTik RouterOS 6.39.2 (IPFIX)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED = ipfix_test_mikrotik_tpl.dat
     * + ipfix_test_mikrotik_data258.dat + ipfix_test_mikrotik_data259.dat as UDP payloads) */
    {"MikroTik RouterOS 6.39.2 (IPFIX)",
     {"logstash-codec-netflow_dat/ipfix_test_mikrotik_tpl.dat",
      "logstash-codec-netflow_dat/ipfix_test_mikrotik_data258.dat",
      "logstash-codec-netflow_dat/ipfix_test_mikrotik_data259.dat"},
     "10.10.8.197",
     "192.168.128.17",
     123,
     123,
     17,
     152ULL,
     2ULL,
     0ULL,
     0ULL},
    /* MikroTik (v5)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED = netflow5_test_microtik.dat
     * as UDP payloads) */
    {"MikroTik (v5)",
     {"logstash-codec-netflow_dat/netflow5_test_microtik.dat"},
     "10.0.13.1",
     "192.168.0.98",
     5228,
     52734,
     6,
     104ULL,
     2ULL,
     1469109102144ULL,
     1469109102144ULL},
    /* Ubiquiti EdgeRouter (v9)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * netflow9_test_ubnt_edgerouter_tpl.dat + netflow9_test_ubnt_edgerouter_data1024.dat +
     * netflow9_test_ubnt_edgerouter_data1025.dat as UDP payloads) */
    {"Ubiquiti EdgeRouter (v9)",
     {"logstash-codec-netflow_dat/netflow9_test_ubnt_edgerouter_tpl.dat",
      "logstash-codec-netflow_dat/netflow9_test_ubnt_edgerouter_data1024.dat",
      "logstash-codec-netflow_dat/netflow9_test_ubnt_edgerouter_data1025.dat"},
     "10.1.0.135",
     "10.4.0.251",
     53,
     17232,
     17,
     174ULL,
     2ULL,
     1473524245825ULL,
     1473524245825ULL},
    /* Huawei NetStream (v9)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * netflow9_test_huawei_netstream_tpl.dat + netflow9_test_huawei_netstream_data.dat as UDP
     * payloads) */
    {"Huawei NetStream (v9)",
     {"logstash-codec-netflow_dat/netflow9_test_huawei_netstream_tpl.dat",
      "logstash-codec-netflow_dat/netflow9_test_huawei_netstream_data.dat"},
     "10.108.219.53",
     "10.111.112.204",
     45587,
     2598,
     6,
     200ULL,
     4ULL,
     1517194611940ULL,
     1517194939000ULL},
    /* H3C NetStream, variable-length string (v9)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * netflow9_test_h3c_netstream_varstring_tpl3281.dat +
     * netflow9_test_h3c_netstream_varstring_data3281.dat as UDP payloads) */
    {"H3C NetStream, variable-length string (v9)",
     {"logstash-codec-netflow_dat/netflow9_test_h3c_netstream_varstring_tpl3281.dat",
      "logstash-codec-netflow_dat/netflow9_test_h3c_netstream_varstring_data3281.dat"},
     "20.20.20.20",
     "20.20.255.255",
     137,
     137,
     17,
     702ULL,
     9ULL,
     1531877673274ULL,
     1531877702969ULL},
    /* VMware vSphere Distributed Switch (IPFIX)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * ipfix_test_vmware_vds_tpl.dat + ipfix_test_vmware_vds_data264.dat +
     * ipfix_test_vmware_vds_data266.dat + ipfix_test_vmware_vds_data266_267.dat as UDP payloads) */
    {"VMware vSphere Distributed Switch (IPFIX)",
     {"logstash-codec-netflow_dat/ipfix_test_vmware_vds_tpl.dat",
      "logstash-codec-netflow_dat/ipfix_test_vmware_vds_data264.dat",
      "logstash-codec-netflow_dat/ipfix_test_vmware_vds_data266.dat",
      "logstash-codec-netflow_dat/ipfix_test_vmware_vds_data266_267.dat"},
     "172.18.65.21",
     "172.18.65.211",
     61209,
     5985,
     6,
     100ULL,
     2ULL,
     1482409057000ULL,
     1482409057000ULL},
    /* ntop nProbe (v9): times not checked, tshark prints epoch 0 for its
     * FIRST/LAST_SWITCHED (nagare: header time minus sysUpTime offset)
     * tshark -2 -r graylog2-server/nprobe-netflow9-2.pcap -d udp.port==2055,cflow -V */
    {"ntop nProbe (v9)",
     {"graylog2-server/nprobe-netflow9-2.pcap"},
     "172.17.0.2",
     "192.168.65.1",
     44367,
     53,
     17,
     114ULL,
     2ULL,
     0ULL,
     0ULL},
    /* CERT YAF (IPFIX)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED = ipfix_example__ipfix_0.bin
     * + ipfix_example__ipfix_1.bin + ipfix_example__ipfix_2.bin + ipfix_example__ipfix_3.bin +
     * ipfix_example__ipfix_4.bin + ipfix_example__ipfix_5.bin + ipfix_example__ipfix_6.bin as UDP
     * payloads) */
    {"CERT YAF (IPFIX)",
     {"telegraf_bin/ipfix_example__ipfix_0.bin", "telegraf_bin/ipfix_example__ipfix_1.bin",
      "telegraf_bin/ipfix_example__ipfix_2.bin", "telegraf_bin/ipfix_example__ipfix_3.bin",
      "telegraf_bin/ipfix_example__ipfix_4.bin", "telegraf_bin/ipfix_example__ipfix_5.bin",
      "telegraf_bin/ipfix_example__ipfix_6.bin"},
     "192.168.119.100",
     "44.233.90.52",
     51008,
     443,
     6,
     52ULL,
     1ULL,
     1666345513807ULL,
     1666345513807ULL},
    /* softflowd (v9)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * netflow9_test_softflowd_tpl_data.dat as UDP payloads) */
    {"softflowd (v9)",
     {"logstash-codec-netflow_dat/netflow9_test_softflowd_tpl_data.dat"},
     "172.16.32.100",
     "172.16.32.248",
     123,
     123,
     17,
     76ULL,
     1ULL,
     1444331026140ULL,
     1444331026141ULL},
    /* pmacct pmacctd (v9)
     * tshark -2 -r graylog2-server/pmacctd-netflow9.pcap -d udp.port==2055,cflow -V */
    {"pmacct pmacctd (v9)",
     {"graylog2-server/pmacctd-netflow9.pcap"},
     "172.17.0.2",
     "192.168.65.1",
     0,
     0,
     0,
     114ULL,
     2ULL,
     1501508283209ULL,
     1501508283210ULL},
    /* pmacct pmacctd (v5)
     * tshark -2 -r graylog2-server/pmacctd-netflow5.pcap -d udp.port==2055,cflow -V */
    {"pmacct pmacctd (v5)",
     {"graylog2-server/pmacctd-netflow5.pcap"},
     "172.17.0.2",
     "192.168.65.1",
     55112,
     53,
     17,
     114ULL,
     2ULL,
     1501507354622ULL,
     1501507354623ULL},
    /* Barracuda NG Firewall (IPFIX)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * ipfix_test_barracuda_tpl.dat + ipfix_test_barracuda_data256.dat as UDP payloads) */
    {"Barracuda NG Firewall (IPFIX)",
     {"logstash-codec-netflow_dat/ipfix_test_barracuda_tpl.dat",
      "logstash-codec-netflow_dat/ipfix_test_barracuda_data256.dat"},
     "10.99.130.239",
     "10.99.252.50",
     65105,
     53,
     17,
     0ULL,
     0ULL,
     0ULL,
     0ULL},
    /* Nokia BRAS (IPFIX)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * ipfix_test_nokia_bras_tpl.dat + ipfix_test_nokia_bras_data256.dat as UDP payloads) */
    {"Nokia BRAS (IPFIX)",
     {"logstash-codec-netflow_dat/ipfix_test_nokia_bras_tpl.dat",
      "logstash-codec-netflow_dat/ipfix_test_nokia_bras_data256.dat"},
     "10.0.1.228",
     "10.0.0.34",
     5878,
     80,
     6,
     0ULL,
     0ULL,
     1513236225148ULL,
     0ULL},
    /* Citrix NetScaler (IPFIX)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * ipfix_test_netscaler_tpl.dat + ipfix_test_netscaler_data.dat as UDP payloads) */
    {"Citrix NetScaler (IPFIX)",
     {"logstash-codec-netflow_dat/ipfix_test_netscaler_tpl.dat",
      "logstash-codec-netflow_dat/ipfix_test_netscaler_data.dat"},
     "192.168.0.1",
     "10.0.0.1",
     51053,
     443,
     6,
     40ULL,
     1ULL,
     1478866159000ULL,
     1478866159000ULL},
    /* OpenBSD pflow (IPFIX)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * ipfix_test_openbsd_pflow_tpl.dat + ipfix_test_openbsd_pflow_data.dat as UDP payloads) */
    {"OpenBSD pflow (IPFIX)",
     {"logstash-codec-netflow_dat/ipfix_test_openbsd_pflow_tpl.dat",
      "logstash-codec-netflow_dat/ipfix_test_openbsd_pflow_data.dat"},
     "192.168.0.17",
     "192.168.0.1",
     64020,
     80,
     6,
     373ULL,
     7ULL,
     1469107799000ULL,
     1469107799000ULL},
    /* Procera PacketLogic (IPFIX)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * ipfix_test_procera_tpl52935.dat + ipfix_test_procera_data52935.dat as UDP payloads) */
    {"Procera PacketLogic (IPFIX)",
     {"logstash-codec-netflow_dat/ipfix_test_procera_tpl52935.dat",
      "logstash-codec-netflow_dat/ipfix_test_procera_data52935.dat"},
     "181.214.87.71",
     "138.44.161.14",
     53787,
     47838,
     6,
     0ULL,
     0ULL,
     1523762810000ULL,
     1523762942000ULL},
    /* Cisco 1941/K9 IOS 15.1 (v9)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * netflow9_test_cisco_1941K9.dat as UDP payloads) */
    {"Cisco 1941/K9 IOS 15.1 (v9)",
     {"logstash-codec-netflow_dat/netflow9_test_cisco_1941K9.dat"},
     "192.168.0.111",
     "62.217.193.1",
     37301,
     53,
     17,
     75ULL,
     1ULL,
     0ULL,
     0ULL},
    /* ipt_NETFLOW reduced-size encoding (v9)
     * tshark -2 -r WRAPPED.pcap -d udp.port==2055,cflow -V   (WRAPPED =
     * netflow9_test_iptnetflow_reduced_size_encoding_tpldata260.dat as UDP payloads) */
    {"ipt_NETFLOW reduced-size encoding (v9)",
     {"logstash-codec-netflow_dat/netflow9_test_iptnetflow_reduced_size_encoding_tpldata260.dat"},
     "37.122.1.226",
     "193.151.198.166",
     27622,
     36025,
     6,
     156ULL,
     3ULL,
     1518932805000ULL,
     1518932813996ULL},
    /* Ixia IxFlow (IPFIX, enterprise + varlen)
     * tshark -2 -r graylog2-server/ixflow.pcap -d udp.port==2055,cflow -V */
    {"Ixia IxFlow (IPFIX, enterprise + varlen)",
     {"graylog2-server/ixflow.pcap"},
     "1.2.15.120",
     "1.1.1.100",
     53,
     52666,
     17,
     102ULL,
     1ULL,
     1579196869414ULL,
     1579196869414ULL},
    /* FreeBSD ng_netflow (v5)
     * tshark -2 -r graylog2-server/netgraph-netflow5.pcap -d udp.port==2055,cflow -V */
    {"FreeBSD ng_netflow (v5)",
     {"graylog2-server/netgraph-netflow5.pcap"},
     "202.12.27.33",
     "91.64.55.126",
     53,
     51647,
     17,
     752ULL,
     1ULL,
     1502181080100ULL,
     1502181080100ULL},
    /* unknown router, per-flow sampling options (v9)
     * mergecap -a -w m.pcap akvorado/multiplesamplingrates-template.pcap
     * akvorado/multiplesamplingrates-options-template.pcap
     * akvorado/multiplesamplingrates-options-data.pcap akvorado/multiplesamplingrates-data.pcap;
     * tshark -2 -r m.pcap -d udp.port==2055,cflow -V */
    {"unknown router, per-flow sampling options (v9)",
     {"akvorado/multiplesamplingrates-template.pcap",
      "akvorado/multiplesamplingrates-options-template.pcap",
      "akvorado/multiplesamplingrates-options-data.pcap",
      "akvorado/multiplesamplingrates-data.pcap"},
     "ffff::68",
     "ffff::1a",
     443,
     52616,
     6,
     1348ULL,
     18ULL,
     1701360969980ULL,
     1701360974891ULL},
};

static const ng_flow *find(const ng_flow_batch *b, const struct vexp *v)
{
	const ng_flow *first = NULL;
	for (size_t i = 0; i < b->n; i++) {
		const ng_flow *f = &b->flows[i];
		if (strcmp(th_addr(f->src_addr), v->src) || strcmp(th_addr(f->dst_addr), v->dst) ||
		    f->src_port != v->sport || f->dst_port != v->dport)
			continue;
		if (f->bytes_raw == v->bytes_raw)
			return f;
		if (!first)
			first = f;
	}
	return first;
}

static void test_vendor_records(void **state)
{
	(void)state;
	if (!th_testdata())
		skip();
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct vexp *v = &rows[i];
		print_message("%s\n", v->vendor);
		ng_decoder *d = ng_decoder_new(NULL);
		ng_flow_batch b = {0};
		for (size_t k = 0; k < 8 && v->files[k]; k++)
			assert_true(th_decode_file(d, v->files[k], &b) >= 0);
		const ng_flow *f = find(&b, v);
		assert_non_null(f);
		assert_int_equal(f->protocol, v->proto);
		assert_int_equal(f->bytes_raw, v->bytes_raw);
		assert_int_equal(f->packets_raw, v->packets_raw);
		/* no sampling information in these rows' records or options
		 * that tshark shows: the rate is 1 and counters are as sent */
		if (f->sampling_rate == 1) {
			assert_int_equal(f->bytes, v->bytes_raw);
			assert_int_equal(f->packets, v->packets_raw);
		}
		if (v->start)
			assert_int_equal(f->flow_start, v->start);
		if (v->end)
			assert_int_equal(f->flow_end, v->end);
		assert_int_equal(f->ip_version, strchr(v->src, ':') ? 6 : 4);
		ng_exporter_stats s;
		ng_decoder_totals(d, &s);
		assert_int_equal(s.errors[NG_DERR_SET_OVERRUN], 0);
		assert_int_equal(s.errors[NG_DERR_RECORD_TRUNCATED], 0);
		ng_flow_batch_free(&b);
		ng_decoder_free(d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vendor_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
