/*
 * sfgen.c — an sFlow v5 load generator for bench/ingest-sflow.
 *
 * Sends sFlow v5 datagrams (sflow.org "sFlow Version 5") to 127.0.0.1:PORT
 * at a fixed rate of flow samples per second, --per samples a datagram
 * (default 6: a typical switch datagram of ~1.4 kB), for a duration, then
 * prints what it sent:
 *
 *   sent samples=N datagrams=D seconds=S rate=R send_errors=E cpu=C
 *
 * Each sample is a compact flow_sample (sampling rate 1000, input and
 * output ifIndex, source_id = input) with two records, as switches send
 * them: a sampled header (128 bytes of an Ethernet/802.1Q/IPv4/TCP or UDP
 * frame) and an extended switch record.  Every --counter-every datagrams a
 * counters_sample (generic interface counters) goes in as well.
 *
 * As in nfgen.c: a pool of datagrams is built before the clock starts;
 * at send time only the datagram sequence number, the sample sequence
 * numbers (one counter per source_id, as sFlow v5 numbers them) and the
 * uptime are patched; pacing sends the datagrams due every millisecond with
 * sendmmsg.  Only loopback is a target.
 *
 * --decode PASSES sends nothing: it runs nagare's decoder (ng_decode) over
 * the pool PASSES times in this process and prints its CPU time per
 * sample, the cost of the sFlow path alone (issue 5: ≲ 200 ns a sample).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "decode/decoder.h"

#define BATCH 64
#define HDR_LEN 128
#define SAMPLE_LEN (32 + 8 + 16 + HDR_LEN + 8 + 16) /* flow_sample body */
#define MAX_PER 16

struct dgram {
	uint8_t b[MAX_PER * (SAMPLE_LEN + 8) + 256];
	size_t n;
	size_t seq_off;                 /* datagram sequence_number */
	size_t sample_seq_off[MAX_PER]; /* each flow sample's sequence_number */
	uint32_t sample_src[MAX_PER];   /* its source_id (ifIndex 1..48) */
	unsigned nsamples;
};

static uint64_t rng = 88172645463325252ULL;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

static void put32(struct dgram *d, uint32_t v)
{
	d->b[d->n++] = (uint8_t)(v >> 24);
	d->b[d->n++] = (uint8_t)(v >> 16);
	d->b[d->n++] = (uint8_t)(v >> 8);
	d->b[d->n++] = (uint8_t)v;
}

static void set32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A 128-byte sampled header: Ethernet, 802.1Q, IPv4, TCP or UDP. */
static void frame(uint8_t *f, uint32_t *frame_len)
{
	memset(f, 0, HDR_LEN);
	for (int i = 0; i < 12; i++)
		f[i] = (uint8_t)rnd();
	f[12] = 0x81, f[14] = 0, f[15] = (uint8_t)(1 + rnd() % 200);
	f[16] = 0x08, f[17] = 0x00;
	uint8_t *ip = f + 18;
	uint16_t len = (uint16_t)(40 + rnd() % 1460);
	ip[0] = 0x45, ip[2] = (uint8_t)(len >> 8), ip[3] = (uint8_t)len, ip[8] = 64;
	ip[9] = rnd() % 4 ? 6 : 17;
	/* a few thousand /24s on each side */
	ip[12] = 10, ip[13] = (uint8_t)(rnd() % 16), ip[14] = (uint8_t)rnd(),
	ip[15] = (uint8_t)rnd();
	ip[16] = 172, ip[17] = (uint8_t)(16 + rnd() % 16), ip[18] = (uint8_t)rnd(),
	ip[19] = (uint8_t)rnd();
	uint8_t *l4 = ip + 20;
	static const uint16_t svc[] = {443, 80, 53, 22, 123, 25, 993, 8080};
	uint16_t sp = (uint16_t)(32768 + rnd() % 28000), dp = svc[rnd() % 8];
	l4[0] = (uint8_t)(sp >> 8), l4[1] = (uint8_t)sp, l4[2] = (uint8_t)(dp >> 8),
	l4[3] = (uint8_t)dp;
	if (ip[9] == 6)
		l4[12] = 0x50, l4[13] = 0x10;
	*frame_len = (uint32_t)len + 18 + 4;
}

static void build(struct dgram *d, unsigned per, bool counters)
{
	d->n = 0;
	put32(d, 5);
	put32(d, 1);
	put32(d, 0x7f000001); /* agent 127.0.0.1 */
	put32(d, 0);          /* sub-agent */
	d->seq_off = d->n;
	put32(d, 0);
	put32(d, 0); /* uptime */
	put32(d, per + (counters ? 1 : 0));
	d->nsamples = per;
	for (unsigned i = 0; i < per; i++) {
		uint32_t in = 1 + rnd() % 48, out = 1 + rnd() % 48, flen;
		uint8_t f[HDR_LEN];
		frame(f, &flen);
		put32(d, 1); /* flow_sample */
		put32(d, SAMPLE_LEN);
		d->sample_seq_off[i] = d->n;
		d->sample_src[i] = in;
		put32(d, 0);
		put32(d, in); /* source_id 0:in */
		put32(d, 1000);
		put32(d, 0); /* pool */
		put32(d, 0); /* drops */
		put32(d, in);
		put32(d, out);
		put32(d, 2);
		put32(d, 1); /* sampled_header */
		put32(d, 16 + HDR_LEN);
		put32(d, 1);
		put32(d, flen);
		put32(d, 4);
		put32(d, HDR_LEN);
		memcpy(d->b + d->n, f, HDR_LEN);
		d->n += HDR_LEN;
		put32(d, 1001); /* extended_switch */
		put32(d, 16);
		put32(d, f[15]);
		put32(d, 0);
		put32(d, f[15]);
		put32(d, 0);
	}
	if (counters) {
		put32(d, 2);
		put32(d, 12 + 8 + 88);
		put32(d, 0);
		put32(d, 1);
		put32(d, 1);
		put32(d, 1);
		put32(d, 88);
		put32(d, 1);
		for (int w = 1; w < 22; w++)
			put32(d, w == 2 ? 0 : w == 3 ? 1000000000 : (uint32_t)rnd() % 100000);
	}
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int port = 6343;
	double rate = 100000, seconds = 10;
	unsigned per = 6, counter_every = 50, pool = 4096, decode_only = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--port"))
			port = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--rate"))
			rate = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--per"))
			per = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--decode"))
			decode_only = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--counter-every"))
			counter_every = (unsigned)atoi(argv[i + 1]);
		else {
			fprintf(stderr,
			        "usage: sfgen [--port P] [--rate SAMPLES/S] [--seconds S] [--per N]"
			        " [--counter-every N] [--decode PASSES]\n");
			return 2;
		}
	}
	if (per < 1 || per > MAX_PER || rate <= 0)
		return 2;
	struct dgram *dg = calloc(pool, sizeof *dg);
	if (!dg)
		return 1;
	for (unsigned i = 0; i < pool; i++)
		build(&dg[i], per, counter_every && i % counter_every == 0);

	if (decode_only) {
		/* --decode N: no socket; N passes of nagare's decoder over the
		 * pool in this process, CPU time per sample: the sFlow path
		 * alone (decode into a reused batch), without receive or store */
		ng_decoder *dec = ng_decoder_new(NULL);
		ng_flow_batch out = {0};
		ng_counter_batch ctr = {0};
		uint64_t dseq2 = 0, recs = 0;
		uint32_t sseq2[49] = {0};
		struct timespec a, b;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
		for (unsigned pass = 0; pass < decode_only; pass++) {
			for (unsigned i = 0; i < pool; i++) {
				struct dgram *d = &dg[i];
				set32(d->b + d->seq_off, (uint32_t)++dseq2);
				for (unsigned s2 = 0; s2 < d->nsamples; s2++)
					set32(d->b + d->sample_seq_off[s2],
					      ++sseq2[d->sample_src[s2]]);
				ng_datagram x = {.data = d->b, .len = d->n, .time_received = 1};
				x.exporter[10] = x.exporter[11] = 0xff, x.exporter[12] = 127,
				x.exporter[15] = 1;
				recs += ng_decode(dec, &x, &out);
				if (out.n >= 4096)
					ng_flow_batch_clear(&out);
				ctr.n = 0;
				ng_decoder_take_counters(dec, &ctr);
			}
		}
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
		double sec = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
		printf("decoded samples=%llu cpu=%.3f ns_per_sample=%.1f\n",
		       (unsigned long long)recs, sec, recs ? sec * 1e9 / (double)recs : 0.0);
		ng_flow_batch_free(&out);
		ng_counter_batch_free(&ctr);
		ng_decoder_free(dec);
		free(dg);
		return 0;
	}
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof to)) {
		perror("sfgen: socket");
		return 1;
	}
	struct mmsghdr msg[BATCH];
	struct iovec iov[BATCH];
	memset(msg, 0, sizeof msg);
	uint64_t sent_dg = 0, errors = 0, dseq = 0;
	uint32_t sseq[49] = {0}; /* per source_id (sFlow v5: sequence per source) */
	double dg_rate = rate / per, t0 = now_s();
	uint64_t total = (uint64_t)(dg_rate * seconds);
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (sent_dg < total) {
		double el = now_s() - t0;
		uint64_t due = (uint64_t)(el * dg_rate) + 1;
		if (due > total)
			due = total;
		while (sent_dg < due) {
			unsigned k = 0;
			for (; k < BATCH && sent_dg + k < due; k++) {
				struct dgram *d = &dg[(sent_dg + k) % pool];
				set32(d->b + d->seq_off, (uint32_t)++dseq);
				set32(d->b + d->seq_off + 4, (uint32_t)(el * 1000));
				for (unsigned s = 0; s < d->nsamples; s++)
					set32(d->b + d->sample_seq_off[s],
					      ++sseq[d->sample_src[s]]);
				iov[k].iov_base = d->b;
				iov[k].iov_len = d->n;
				msg[k].msg_hdr.msg_iov = &iov[k];
				msg[k].msg_hdr.msg_iovlen = 1;
			}
			int r = sendmmsg(fd, msg, k, 0);
			if (r < 0) {
				errors += k;
				r = (int)k;
			}
			sent_dg += (unsigned)r;
		}
		next.tv_nsec += 1000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	double el = now_s() - t0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	             (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	printf(
	    "sent samples=%llu datagrams=%llu seconds=%.3f rate=%.0f send_errors=%llu cpu=%.3f\n",
	    (unsigned long long)(sent_dg * per), (unsigned long long)sent_dg, el,
	    (double)(sent_dg * per) / el, (unsigned long long)errors, cpu);
	free(dg);
	close(fd);
	return 0;
}
