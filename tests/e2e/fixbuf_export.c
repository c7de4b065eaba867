/*
 * fixbuf_export.c — an IPFIX exporter built on Debian's libfixbuf (the
 * library of CERT's YAF and other NetSA probes), the independent peer of
 * tests/e2e/stream.py: nagare's TCP/SCTP reassembly and session-scoped
 * templates meet an implementation it shares no code with.
 *
 *   fixbuf_export tcp|sctp HOST PORT RECORDS [SESSIONS [DOMAIN]]
 *
 * Opens SESSIONS connections at once (default 1), each an fbExporter with
 * its own fbSession (observation domain DOMAIN, default 1), exports the
 * template on each, then RECORDS data records on each, the sessions
 * taking turns one message at a time, and closes them all.  Record r of
 * session s (both from 0):
 *   sourceIPv4Address       10.(s / 256).(s % 256).1
 *   destinationIPv4Address  192.0.2.(r % 200 + 1)
 *   sourceTransportPort     10000 + r % 50000
 *   destinationTransportPort 443
 *   protocolIdentifier      6
 *   octetDeltaCount         1000 + r
 *   packetDeltaCount        1 + r % 10
 *   flowStart/EndMilliseconds  now - 2000 / now - 1000
 * so the totals are known: RECORDS × SESSIONS records, Σ octets =
 * SESSIONS × (1000 RECORDS + RECORDS (RECORDS - 1) / 2).  Prints the
 * totals on success ("sent R records, B octets, P packets"); exits 1 with
 * libfixbuf's message on an error, 2 on a usage error.
 *
 * Built only when pkg-config finds libfixbuf (CMakeLists.txt).
 */
#include <fixbuf/public.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

/* The record as libfixbuf reads it (the internal template, in order;
 * paddingOctets keeps it aligned and is exported as sent). */
struct rec {
	uint64_t start_ms, end_ms, octets, packets;
	uint32_t src, dst;
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t pad[7];
};

static fbInfoElementSpec_t rec_spec[] = {
    {"flowStartMilliseconds", 8, 0},
    {"flowEndMilliseconds", 8, 0},
    {"octetDeltaCount", 8, 0},
    {"packetDeltaCount", 8, 0},
    {"sourceIPv4Address", 4, 0},
    {"destinationIPv4Address", 4, 0},
    {"sourceTransportPort", 2, 0},
    {"destinationTransportPort", 2, 0},
    {"protocolIdentifier", 1, 0},
    {"paddingOctets", 7, 0},
    FB_IESPEC_NULL,
};

struct sess {
	fbSession_t *session;
	fBuf_t *buf;
};

static int fail(const char *what, GError *err)
{
	fprintf(stderr, "fixbuf_export: %s: %s\n", what, err ? err->message : "failed");
	return 1;
}

/* Opens session `s`: exporter, session, template exported. */
static int open_one(struct sess *x, fbInfoModel_t *model, fbConnSpec_t *spec, uint32_t domain)
{
	GError *err = NULL;
	fbExporter_t *exp = fbExporterAllocNet(spec);
	x->session = fbSessionAlloc(model);
	fbSessionSetDomain(x->session, domain); /* templates belong to a domain */
	fbTemplate_t *t = fbTemplateAlloc(model);
	if (!fbTemplateAppendSpecArray(t, rec_spec, UINT32_MAX, &err))
		return fail("template", err);
	uint16_t tid = fbSessionAddTemplate(x->session, TRUE, FB_TID_AUTO, t, &err);
	if (!tid || !fbSessionAddTemplate(x->session, FALSE, tid, t, &err))
		return fail("add template", err);
	x->buf = fBufAllocForExport(x->session, exp);
	if (!fbSessionExportTemplates(x->session, &err))
		return fail("export templates (is nagare listening?)", err);
	if (!fBufSetInternalTemplate(x->buf, tid, &err) ||
	    !fBufSetExportTemplate(x->buf, tid, &err))
		return fail("set template", err);
	return 0;
}

static uint64_t now_ms(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

int main(int argc, char **argv)
{
	if (argc < 5 || (strcmp(argv[1], "tcp") && strcmp(argv[1], "sctp"))) {
		fprintf(stderr,
		        "usage: fixbuf_export tcp|sctp HOST PORT RECORDS [SESSIONS [DOMAIN]]\n");
		return 2;
	}
	long records = atol(argv[4]), nsess = argc > 5 ? atol(argv[5]) : 1;
	uint32_t domain = argc > 6 ? (uint32_t)atol(argv[6]) : 1;
	if (records < 0 || nsess < 1 || nsess > 65536)
		return 2;
	fbConnSpec_t spec = {.transport = strcmp(argv[1], "tcp") ? FB_SCTP : FB_TCP,
	                     .host = argv[2],
	                     .svc = argv[3]};
	fbInfoModel_t *model = fbInfoModelAlloc();
	struct sess *ss = calloc((size_t)nsess, sizeof *ss);
	if (!ss)
		return 1;
	for (long s = 0; s < nsess; s++)
		if (open_one(&ss[s], model, &spec, domain))
			return 1;
	GError *err = NULL;
	uint64_t t = now_ms(), octets = 0, packets = 0;
	/* one record a turn per session, a message every 20 records */
	for (long r = 0; r < records; r++) {
		for (long s = 0; s < nsess; s++) {
			struct rec x = {
			    .start_ms = t - 2000,
			    .end_ms = t - 1000,
			    .octets = 1000 + (uint64_t)r,
			    .packets = 1 + (uint64_t)r % 10,
			    .src =
			        0x0a000001u | (uint32_t)(s / 256) << 16 | (uint32_t)(s % 256) << 8,
			    .dst = 0xc0000200u | (uint32_t)(r % 200 + 1),
			    .sport = (uint16_t)(10000 + r % 50000),
			    .dport = 443,
			    .proto = 6,
			};
			if (!fBufAppend(ss[s].buf, (uint8_t *)&x, sizeof x, &err))
				return fail("append", err);
			if (r % 20 == 19 && !fBufEmit(ss[s].buf, &err))
				return fail("emit", err);
			octets += x.octets;
			packets += x.packets;
		}
	}
	for (long s = 0; s < nsess; s++) {
		if (!fBufEmit(ss[s].buf, &err))
			return fail("emit", err);
		fBufFree(ss[s].buf); /* the session and exporter with it: closes */
	}
	fbInfoModelFree(model);
	free(ss);
	printf("sent %ld records, %llu octets, %llu packets\n", records * nsess,
	       (unsigned long long)octets, (unsigned long long)packets);
	return 0;
}
