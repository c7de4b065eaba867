/*
 * test_enrich_classify.c — classification rules (docs/configuration.md
 * "Classification"), read by libyaml from a file as an operator writes it
 * and matched by the C library's POSIX regex: a table of interface
 * descriptions in the styles operators use ("Transit: Cogent [174]",
 * "IX: DE-CIX", "Customer: acme", ...) and what each rule set must say of
 * them; the exporters' attributes; the configured sampling rates
 * (default and override, the longest prefix); the same answers through
 * the enricher (records, their fields, copied from the cache: one
 * evaluation per interface however many records; the description a flow
 * carries, SNMP's ifAlias or options data's, before the configured one);
 * refused rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/addr.h"
#include "core/config.h"
#include "core/strtab.h"
#include "enrich/classify.h"
#include "enrich/enrich.h"

static const char rules_yaml[] =
    "enrich:\n"
    "  services: false\n"
    "  exporters:\n"
    "    - address: 192.0.2.1\n"
    "      name: edge1-fra\n"
    "      interfaces:\n"
    "        - {index: 1, name: et-0/0/1, description: \"Transit: Cogent [174]\"}\n"
    "        - {index: 2, name: et-0/0/2, description: \"IX: DE-CIX\"}\n"
    "        - {index: 3, name: ae3, description: \"Customer: acme\"}\n"
    "        - {index: 6, name: irb.10, description: core uplink}\n"
    "  classify:\n"
    "    - match: {exporter_name: '^edge[0-9]+-([a-z]+)$'}\n"
    "      set: {group: edge, role: border, site: '\\1'}\n"
    "    - match: {exporter: 192.0.2.0/24}\n"
    "      set: {region: eu, tenant: lab, site: unknown}\n"
    "    - match: {interface_description: '^Transit: ([^[]*[^[ ]) *\\[([0-9]+)\\]'}\n"
    "      set: {boundary: external, connectivity: transit, provider: '\\1'}\n"
    "    - match: {interface_description: '^IX: (.+)$'}\n"
    "      set: {boundary: external, connectivity: ix, provider: '\\1'}\n"
    "    - match: {interface_description: '^PNI: ([^[]*[^[ ])'}\n"
    "      set: {boundary: external, connectivity: pni, provider: '\\1'}\n"
    "    - match: {interface_description: '^(Peering|PEERING): ([^[(]*[^[( ])'}\n"
    "      set: {boundary: external, connectivity: peering, provider: '\\2'}\n"
    "    - match: {interface_description: '^Customer: (.+)$'}\n"
    "      set: {boundary: external, connectivity: customer, provider: '\\1'}\n"
    "    - match: {exporter: 198.51.100.0/24, interface_name: '^(xe|et)-'}\n"
    "      set: {connectivity: backbone}\n"
    "    - match: {interface_name: '.'}\n"
    "      set: {boundary: internal}\n"
    "  sampling:\n"
    "    - {exporter: 192.0.2.0/24, rate: 1000}\n"
    "    - {exporter: 192.0.2.9, rate: 10, override: true}\n";

static char path[64];

static int load(const char *yaml, ng_config *c, char *err, size_t errlen)
{
	snprintf(path, sizeof path, "/tmp/test_classify.XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
	close(fd);
	int rc = ng_config_load(path, c, err, errlen);
	unlink(path);
	return rc;
}

static ng_classifier *classifier(ng_config *c)
{
	char err[512] = "";
	if (load(rules_yaml, c, err, sizeof err) < 0)
		fail_msg("%s", err);
	ng_classifier *k = ng_classifier_new(c, err, sizeof err);
	if (!k)
		fail_msg("%s", err);
	return k;
}

static const char *s(uint32_t id)
{
	return ng_str(id);
}

/* The descriptions, names and exporters, and what the rules give. */
static const struct {
	const char *exporter, *exp_name, *if_name, *desc;
	const char *boundary, *connectivity, *provider;
} cases[] = {
    {"192.0.2.1", "edge1-fra", "et-0/0/1", "Transit: Cogent [174]", "external", "transit",
     "Cogent"},
    {"192.0.2.1", "edge1-fra", "et-0/0/7", "Transit: Arelion Sweden AB [1299]", "external",
     "transit", "Arelion Sweden AB"},
    {"192.0.2.1", "edge1-fra", "et-0/0/8", "Transit: Lumen[3356]", "external", "transit", "Lumen"},
    {"192.0.2.1", "edge1-fra", "et-0/0/2", "IX: DE-CIX", "external", "ix", "DE-CIX"},
    {"192.0.2.1", "edge1-fra", "et-0/0/3", "IX: AMS-IX Amsterdam", "external", "ix",
     "AMS-IX Amsterdam"},
    {"192.0.2.1", "edge1-fra", "ae3", "Customer: acme", "external", "customer", "acme"},
    {"192.0.2.1", "edge1-fra", "et-0/0/4", "PNI: Google [15169]", "external", "pni", "Google"},
    {"192.0.2.1", "edge1-fra", "xe-0/1/0", "Peering: HE (AS6939)", "external", "peering", "HE"},
    {"192.0.2.1", "edge1-fra", "xe-0/1/1", "PEERING: Netflix [2906]", "external", "peering",
     "Netflix"},
    /* case matters: an operator's "transit:" in lower case is no rule's */
    {"192.0.2.1", "edge1-fra", "et-0/0/5", "transit: cogent [174]", "internal", "", ""},
    {"192.0.2.1", "edge1-fra", "irb.10", "core uplink", "internal", "", ""},
    /* no name at all: not even "internal" (the last rule wants a name) */
    {"192.0.2.1", "edge1-fra", "", "", "", "", ""},
    /* a rule of one exporter prefix only; the earlier description rule
     * sets connectivity first */
    {"198.51.100.7", "core-1", "et-1/0/0", "backbone to fra", "internal", "backbone", ""},
    {"198.51.100.7", "core-1", "et-1/0/1", "Transit: Cogent [174]", "external", "transit",
     "Cogent"},
    {"203.0.113.5", NULL, "et-1/0/0", "", "internal", "", ""},
};

static void test_interfaces(void **state)
{
	(void)state;
	ng_config c;
	ng_classifier *k = classifier(&c);
	assert_true(ng_classifier_has_if(k));
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t a[16];
		assert_true(ng_addr_parse(cases[i].exporter, a));
		ng_class_if o;
		ng_classify_interface(k, a, cases[i].exp_name, cases[i].if_name, cases[i].desc, &o);
		print_message("%s %s \"%s\" -> %s / %s / %s\n", cases[i].exporter, cases[i].if_name,
		              cases[i].desc, s(o.attr[0]), s(o.attr[1]), s(o.attr[2]));
		assert_string_equal(s(o.attr[NG_CLASS_BOUNDARY - NG_CLASS_FIRST_IF]),
		                    cases[i].boundary);
		assert_string_equal(s(o.attr[NG_CLASS_CONNECTIVITY - NG_CLASS_FIRST_IF]),
		                    cases[i].connectivity);
		assert_string_equal(s(o.attr[NG_CLASS_PROVIDER - NG_CLASS_FIRST_IF]),
		                    cases[i].provider);
	}
	ng_classifier_free(k);
	ng_config_free(&c);
}

static void test_exporters_and_sampling(void **state)
{
	(void)state;
	ng_config c;
	ng_classifier *k = classifier(&c);
	uint8_t a[16];
	ng_class_exp o;
	assert_true(ng_addr_parse("192.0.2.1", a));
	ng_classify_exporter(k, a, "edge1-fra", &o);
	/* site: the first rule's capture, not the second rule's "unknown" */
	assert_string_equal(s(o.attr[NG_CLASS_GROUP]), "edge");
	assert_string_equal(s(o.attr[NG_CLASS_ROLE]), "border");
	assert_string_equal(s(o.attr[NG_CLASS_SITE]), "fra");
	assert_string_equal(s(o.attr[NG_CLASS_REGION]), "eu");
	assert_string_equal(s(o.attr[NG_CLASS_TENANT]), "lab");
	assert_int_equal(o.rate, 1000);
	assert_false(o.override);
	ng_classify_exporter(k, a, "core-2", &o); /* the name rule does not match */
	assert_string_equal(s(o.attr[NG_CLASS_GROUP]), "");
	assert_string_equal(s(o.attr[NG_CLASS_SITE]), "unknown");
	assert_true(ng_addr_parse("192.0.2.9", a)); /* the longer prefix wins */
	ng_classify_exporter(k, a, NULL, &o);
	assert_int_equal(o.rate, 10);
	assert_true(o.override);
	assert_true(ng_addr_parse("2001:db8::1", a));
	ng_classify_exporter(k, a, NULL, &o);
	assert_int_equal(o.rate, 0);
	assert_string_equal(s(o.attr[NG_CLASS_REGION]), "");
	ng_classifier_free(k);
	ng_config_free(&c);
}

/* The enricher: records of the configured exporter carry the answers;
 * each (exporter, interface, names) is evaluated once. */
static void test_records(void **state)
{
	(void)state;
	ng_config c;
	char err[512] = "";
	if (load(rules_yaml, &c, err, sizeof err) < 0)
		fail_msg("%s", err);
	ng_enricher *e = ng_enricher_build(&c, err, sizeof err);
	if (!e)
		fail_msg("%s", err);
	enum { N = 3000 };
	ng_flow *f = calloc(N, sizeof *f);
	assert_non_null(f);
	for (size_t i = 0; i < N; i++) {
		assert_true(ng_addr_parse(i % 3 == 2 ? "192.0.2.9" : "192.0.2.1", f[i].exporter));
		assert_true(ng_addr_parse("203.0.113.1", f[i].src_addr));
		assert_true(ng_addr_parse("198.51.100.1", f[i].dst_addr));
		f[i].in_if = i % 3 == 1 ? 2 : 1;
		f[i].out_if = 3;
		f[i].bytes_raw = f[i].bytes = 100;
		f[i].packets_raw = f[i].packets = 2;
		f[i].sampling_rate = i % 3 == 2 ? 50 : 1;
		f[i].sampling_source = i % 3 == 2 ? NG_SAMPLING_RECORD : NG_SAMPLING_NONE;
		if (i % 3 == 2) { /* not configured: a name and a description on the
			           * flow, as SNMP (ifAlias) or options data give them */
			f[i].in_if_name = ng_intern_cstr("et-9/0/0");
			f[i].in_if_desc = ng_intern_cstr("IX: AMS-IX");
		}
	}
	ng_enricher_apply(e, f, N);
	for (size_t i = 0; i < N; i++) {
		const ng_flow *r = &f[i];
		if (i % 3 == 2) { /* 192.0.2.9: not configured: no names, rate overridden */
			assert_string_equal(s(r->exporter_name), "");
			assert_string_equal(s(r->exporter_region), "eu");
			assert_string_equal(s(r->in_if_provider), "AMS-IX");
			assert_string_equal(s(r->in_if_connectivity), "ix");
			assert_string_equal(s(r->out_if_provider), ""); /* index 3: no name here */
			assert_int_equal(r->sampling_rate, 10);
			assert_int_equal(r->sampling_source, NG_SAMPLING_CONFIG);
			assert_int_equal(r->bytes, 1000);
			assert_int_equal(r->packets, 20);
			continue;
		}
		assert_string_equal(s(r->exporter_name), "edge1-fra");
		assert_string_equal(s(r->exporter_site), "fra");
		assert_string_equal(s(r->exporter_group), "edge");
		assert_string_equal(s(r->in_if_connectivity), i % 3 == 1 ? "ix" : "transit");
		assert_string_equal(s(r->in_if_provider), i % 3 == 1 ? "DE-CIX" : "Cogent");
		assert_string_equal(s(r->in_if_boundary), "external");
		assert_string_equal(s(r->out_if_connectivity), "customer");
		assert_string_equal(s(r->out_if_provider), "acme");
		/* a rate for exporters that do not say: 1000, from the configuration */
		assert_int_equal(r->sampling_rate, 1000);
		assert_int_equal(r->sampling_source, NG_SAMPLING_CONFIG);
		assert_int_equal(r->bytes, 100000);
		assert_int_equal(r->packets, 2000);
	}
	free(f);
	ng_enricher_free(e);
	ng_config_free(&c);
}

/* The cache: the same answers, one evaluation per key. */
static void test_cache(void **state)
{
	(void)state;
	ng_config c;
	ng_classifier *k = classifier(&c);
	uint8_t a[16];
	assert_true(ng_addr_parse("192.0.2.1", a));
	uint32_t en = ng_intern_cstr("edge1-fra"), n1 = ng_intern_cstr("et-0/0/1"),
	         d1 = ng_intern_cstr("Transit: Cogent [174]"), n2 = ng_intern_cstr("et-0/0/2"),
	         d2 = ng_intern_cstr("IX: DE-CIX");
	for (int i = 0; i < 1000; i++) {
		const ng_class_if *o = ng_classify_if_cached(k, a, en, 1, n1, d1);
		assert_string_equal(s(o->attr[2]), "Cogent");
		o = ng_classify_if_cached(k, a, en, 2, n2, d2);
		assert_string_equal(s(o->attr[2]), "DE-CIX");
		o = ng_classify_if_cached(k, a, en, 5 + (uint32_t)(i % 7), n2, d2);
		assert_string_equal(s(o->attr[1]), "ix");
	}
	/* a renamed interface is evaluated again */
	const ng_class_if *o = ng_classify_if_cached(k, a, en, 1, n1, d2);
	assert_string_equal(s(o->attr[2]), "DE-CIX");
	uint64_t evals, resets;
	ng_classifier_stats(k, &evals, &resets);
	assert_int_equal(evals, 2 + 7 + 1);
	assert_int_equal(resets, 0);
	ng_classifier_free(k);
	ng_config_free(&c);
}

static void test_refused(void **state)
{
	(void)state;
	static const struct {
		const char *yaml, *msg;
	} bad[] = {
	    {"enrich:\n  classify:\n    - match: {interface_description: '^(Transit'}\n"
	     "      set: {provider: x}\n",
	     "not a POSIX extended regular expression"},
	    {"enrich:\n  classify:\n    - match: {interface_name: x}\n      set: {site: x}\n",
	     "belong to the exporter"},
	    {"enrich:\n  classify:\n    - match: {exporter: 10.0.0.0/33}\n      set: {site: x}\n",
	     "not an address nor ADDRESS/LENGTH"},
	    {"enrich:\n  classify:\n    - match: {interface_name: x}\n", "needs set:"},
	    {"enrich:\n  classify:\n    - set: {colour: red}\n", "unknown key 'colour'"},
	    {"enrich:\n  sampling:\n    - {exporter: 10.0.0.1, rate: 0}\n", "rate: give packets"},
	    {"enrich:\n  sampling:\n    - {rate: 100}\n", "needs an exporter and a rate"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ng_config c;
		char err[512] = "";
		assert_int_equal(load(bad[i].yaml, &c, err, sizeof err), -1);
		print_message("%s\n", err);
		assert_non_null(strstr(err, bad[i].msg));
		assert_non_null(strstr(err, ":3:") ? err : strstr(err, ":4:"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_interfaces), cmocka_unit_test(test_exporters_and_sampling),
	    cmocka_unit_test(test_records),    cmocka_unit_test(test_cache),
	    cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
