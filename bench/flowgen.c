/*
 * flowgen.c — a day of NetFlow v9 from many exporters, for bench/query.
 *
 * Sends N IPv4 flow records (RFC 3954, 30 records a packet) whose times
 * span a simulated day, from K exporters, to one or more collectors on
 * 127.0.0.1 (each packet goes to every --port), at a fixed real rate; and
 * writes the same records, with the absolute times a collector computes
 * from them, as TSV for ClickHouse (--tsv).  At the end it prints
 *
 *   sent records=N packets=P template_packets=T seconds=S rate=R
 *        send_errors=E sim_start=EPOCH sim_end=EPOCH
 *
 * Why it is built this way:
 * - The record model is nfgen's (bench/nfgen.c: Zipf-chosen /24s and
 *   hosts, Zipf-chosen server ports, log-normal packet counts), widened
 *   for queries: 10 % of flows go to a uniformly random port (scans, P2P),
 *   a tail of protocols (GRE, ESP, OSPF, SCTP, 6in4) behind TCP/UDP/ICMP,
 *   every /24 belongs to an AS (outside: Zipf over 3000 ASes; inside: 8
 *   private site ASes), and the exporters carry Zipf-unequal shares.
 * - Simulated clock: packet i carries sim time t_i; the time advances by
 *   30 / (base * d(t)) per packet where d(t) = 1 + 0.5 sin(...) is a
 *   diurnal load curve (peak at 15:00 UTC) and base = N / span, so the
 *   records cover [start, start + span) in a day-shaped density while the
 *   real send rate stays constant.
 * - Each exporter k (source address 127.0.1.(k+1), source ID k+1) booted
 *   at a time of its own; its header carries unix_secs = floor(t) and
 *   sysUptime = floor(t) * 1000 - boot, so a collector's boot time
 *   (unix_secs * 1000 - sysUptime) is exact and FIRST/LAST_SWITCHED map to
 *   the same absolute milliseconds in every collector and in the TSV.
 * - Pacing as in nfgen: every millisecond (absolute deadlines) it sends
 *   what is due.
 *
 * TSV columns (UTC): time (YYYY-MM-DD hh:mm:ss of the flow start),
 * start_ms (0-999), duration_ms, exporter, src, dst, nexthop (IPv4 as
 * unsigned integers), in_if, out_if, packets, bytes, sport, dport, flags,
 * proto, tos, src_as, dst_as, src_mask, dst_mask.
 *
 * Only loopback is a target: the destination address is fixed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RECS_PER_PKT 30
#define TEMPLATE_ID 256
#define MAX_PORTS 4
#define MAX_EXPORTERS 250

/* The template: (IANA NetFlow v9 field type, length in bytes), as nfgen. */
static const uint16_t tmpl[][2] = {
    {8, 4},  /* IPV4_SRC_ADDR */
    {12, 4}, /* IPV4_DST_ADDR */
    {15, 4}, /* IPV4_NEXT_HOP */
    {10, 2}, /* INPUT_SNMP */
    {14, 2}, /* OUTPUT_SNMP */
    {2, 4},  /* IN_PKTS */
    {1, 4},  /* IN_BYTES */
    {22, 4}, /* FIRST_SWITCHED */
    {21, 4}, /* LAST_SWITCHED */
    {7, 2},  /* L4_SRC_PORT */
    {11, 2}, /* L4_DST_PORT */
    {6, 1},  /* TCP_FLAGS */
    {4, 1},  /* PROTOCOL */
    {5, 1},  /* SRC_TOS */
    {16, 2}, /* SRC_AS */
    {17, 2}, /* DST_AS */
    {9, 1},  /* SRC_MASK */
    {13, 1}, /* DST_MASK */
};
#define NFIELDS (sizeof tmpl / sizeof tmpl[0])
#define REC_LEN 45
#define HDR_LEN 20
#define SET_LEN (4 + RECS_PER_PKT * REC_LEN)
#define SET_PAD ((4 - SET_LEN % 4) % 4) /* RFC 3954 §5.3: pad to 32 bits */
#define PKT_LEN (HDR_LEN + SET_LEN + SET_PAD)

struct opts {
	int ports[MAX_PORTS];
	int nports;
	double rate; /* real records per second */
	uint64_t records;
	unsigned exporters;
	unsigned tmpl_every;
	int64_t start; /* simulated epoch seconds */
	double span;   /* simulated seconds */
	uint64_t seed;
	const char *tsv;
};

/* ---- deterministic randomness (as nfgen) ----------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void) /* xorshift64* */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static double unif(void) /* (0, 1) */
{
	return ((rnd() >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void) /* Box-Muller */
{
	return sqrt(-2.0 * log(unif())) * cos(2.0 * M_PI * unif());
}

struct zipf {
	unsigned n;
	double *cdf;
};

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p) {
		perror("flowgen: malloc");
		exit(1);
	}
	return p;
}

static void zipf_init(struct zipf *z, unsigned n, double s)
{
	z->n = n;
	z->cdf = xmalloc(n * sizeof *z->cdf);
	double sum = 0;
	for (unsigned i = 0; i < n; i++)
		z->cdf[i] = (sum += 1.0 / pow(i + 1, s));
	for (unsigned i = 0; i < n; i++)
		z->cdf[i] /= sum;
}

static unsigned zipf_draw(const struct zipf *z)
{
	double u = unif();
	unsigned lo = 0, hi = z->n - 1;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (z->cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- the record model ----------------------------------------------- */

static const uint16_t tcp_ports[] = {443, 80,  22, 25,   993,  8080, 3389, 445, 143, 8443,
                                     587, 110, 21, 3306, 5432, 6443, 853,  465, 995, 5222};
static const uint16_t udp_ports[] = {53,   443,  123, 161,  500, 4500, 1194,  51820, 514,  67,
                                     3478, 5353, 137, 1900, 69,  162,  11211, 4789,  2055, 6343};

enum { NETS_IN = 1024, NETS_OUT = 8192, ASES_OUT = 3000, SITES = 8 };

struct shape {
	struct zipf src_net, dst_net, host, port, as_out, exporter;
	uint32_t nets_in[NETS_IN], nets_out[NETS_OUT];
	uint16_t as_in[NETS_IN], as_out_of[NETS_OUT], as_numbers[ASES_OUT];
};

static void shape_init(struct shape *s, unsigned exporters)
{
	zipf_init(&s->src_net, NETS_IN, 1.05);
	zipf_init(&s->dst_net, NETS_OUT, 1.1);
	zipf_init(&s->host, 254, 0.9);
	zipf_init(&s->port, 20, 1.2);
	zipf_init(&s->as_out, ASES_OUT, 1.0);
	zipf_init(&s->exporter, exporters, 0.8);
	for (unsigned i = 0; i < ASES_OUT; i++) /* public 16-bit AS numbers */
		s->as_numbers[i] = (uint16_t)(1 + rnd() % 63000);
	for (unsigned i = 0; i < NETS_IN; i++) { /* inside: 10.0.0.0/8, 8 sites */
		s->nets_in[i] = 0x0a000000u | (uint32_t)(rnd() & 0xffff) << 8;
		s->as_in[i] = (uint16_t)(64512 + i % SITES);
	}
	for (unsigned i = 0; i < NETS_OUT; i++) { /* outside: public-looking */
		uint32_t a = (uint32_t)(1 + rnd() % 222) << 24 | (uint32_t)(rnd() & 0xffff) << 8;
		if ((a >> 24) == 10 || (a >> 24) == 127)
			a ^= 0x40000000u;
		s->nets_out[i] = a;
		s->as_out_of[i] = s->as_numbers[zipf_draw(&s->as_out)];
	}
}

struct rec {
	uint32_t src, dst, nexthop, pkts, bytes;
	uint32_t dur, ago; /* ms: duration, end before export */
	uint16_t in_if, out_if, sport, dport, src_as, dst_as;
	uint8_t flags, proto, tos, src_mask, dst_mask;
};

static uint8_t draw_proto(void)
{
	double u = unif();
	return u < 0.78    ? 6
	       : u < 0.95  ? 17
	       : u < 0.98  ? 1
	       : u < 0.99  ? 47
	       : u < 0.997 ? 50
	       : u < 0.998 ? 89
	       : u < 0.999 ? 132
	                   : 41;
}

static void draw_record(struct rec *r, struct shape *s)
{
	unsigned ni = zipf_draw(&s->src_net), no = zipf_draw(&s->dst_net);
	uint32_t in = s->nets_in[ni] | (1 + zipf_draw(&s->host));
	uint32_t out = s->nets_out[no] | (1 + zipf_draw(&s->host));
	uint8_t proto = draw_proto();
	uint16_t sport = 0, dport = 0;
	uint8_t flags = 0;
	if (proto == 1) { /* ICMP: type*256+code in the dst port, by convention */
		dport = unif() < 0.5 ? 0x0800 : unif() < 0.5 ? 0x0000 : 0x0303;
	} else if (proto == 6 || proto == 17 || proto == 132) {
		sport = 32768 + rnd() % 28232; /* Linux ephemeral range */
		unsigned pk = zipf_draw(&s->port);
		if (unif() < 0.10) /* scans, P2P: any port */
			dport = (uint16_t)(1 + rnd() % 65535);
		else
			dport = proto == 17 ? udp_ports[pk] : tcp_ports[pk];
		if (proto == 6)
			flags = 0x1b;
	}
	double lp = 1.2 + 1.6 * normal(); /* log-normal packet count */
	uint32_t pkts = lp < 0 ? 1 : lp > 16 ? 8886110 : (uint32_t)exp(lp);
	if (pkts < 1)
		pkts = 1;
	if (proto == 6 && pkts <= 2)
		flags = unif() < 0.5 ? 0x02 : 0x14;
	unsigned avg = proto == 1 ? 84 : 60 + rnd() % 1400;
	uint64_t bytes = (uint64_t)pkts * avg;
	bool reverse = unif() < 0.45; /* server-to-client half of a conversation */
	*r = (struct rec){
	    .src = reverse ? out : in,
	    .dst = reverse ? in : out,
	    .nexthop = 0x0a000001u,
	    .pkts = pkts,
	    .bytes = bytes > 0xffffffffu ? 0xffffffffu : (uint32_t)bytes,
	    .dur = pkts == 1 ? 0 : (uint32_t)(1000 * fmin(60.0, pkts * 0.05 * unif() + unif())),
	    .ago = rnd() % 2000,
	    .in_if = reverse ? 2 : 1 + rnd() % 8,
	    .out_if = reverse ? 1 + rnd() % 8 : 2,
	    .sport = reverse ? dport : sport,
	    .dport = reverse ? sport : dport,
	    .src_as = reverse ? s->as_out_of[no] : s->as_in[ni],
	    .dst_as = reverse ? s->as_in[ni] : s->as_out_of[no],
	    .flags = flags,
	    .proto = proto,
	    .tos = unif() < 0.9 ? 0 : 0xb8,
	    .src_mask = 24,
	    .dst_mask = 24,
	};
}

/* ---- packets -------------------------------------------------------- */

static uint8_t *put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
	return p + 2;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
	return p + 4;
}

/* RFC 3954 §5.1 packet header. */
static uint8_t *put_header(uint8_t *p, uint16_t count, uint32_t uptime, uint32_t secs, uint32_t seq,
                           uint32_t source)
{
	p = put16(p, 9);
	p = put16(p, count);
	p = put32(p, uptime);
	p = put32(p, secs);
	p = put32(p, seq);
	return put32(p, source);
}

/* A template packet (header + template flowset, RFC 3954 §5.2). */
static size_t build_template(uint8_t *buf, uint32_t uptime, uint32_t secs, uint32_t seq,
                             uint32_t source)
{
	uint8_t *p = put_header(buf, 1, uptime, secs, seq, source);
	p = put16(p, 0);
	p = put16(p, 4 + 4 + 4 * NFIELDS);
	p = put16(p, TEMPLATE_ID);
	p = put16(p, NFIELDS);
	for (size_t i = 0; i < NFIELDS; i++) {
		p = put16(p, tmpl[i][0]);
		p = put16(p, tmpl[i][1]);
	}
	return p - buf;
}

/* Record r at sysUptime-relative times (ms since the exporter's boot). */
static void put_record(uint8_t *p, const struct rec *r, uint32_t first, uint32_t last)
{
	p = put32(p, r->src);
	p = put32(p, r->dst);
	p = put32(p, r->nexthop);
	p = put16(p, r->in_if);
	p = put16(p, r->out_if);
	p = put32(p, r->pkts);
	p = put32(p, r->bytes);
	p = put32(p, first);
	p = put32(p, last);
	p = put16(p, r->sport);
	p = put16(p, r->dport);
	*p++ = r->flags;
	*p++ = r->proto;
	*p++ = r->tos;
	p = put16(p, r->src_as);
	p = put16(p, r->dst_as);
	*p++ = r->src_mask;
	*p++ = r->dst_mask;
}

/* ---- TSV ------------------------------------------------------------ */

static char *utoa(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do
		tmp[n++] = '0' + v % 10;
	while (v /= 10);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* One TSV line; `start_ms` absolute epoch milliseconds of the flow start. */
static void tsv_line(FILE *f, const struct rec *r, int64_t start_ms, uint32_t exporter)
{
	static int64_t cached_sec = -1;
	static char cached[24];
	int64_t sec = start_ms / 1000;
	if (sec != cached_sec) {
		time_t t = (time_t)sec;
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(cached, sizeof cached, "%Y-%m-%d %H:%M:%S", &tm);
		cached_sec = sec;
	}
	char line[256], *p = line;
	size_t n = strlen(cached);
	memcpy(p, cached, n);
	p += n;
	const uint64_t v[] = {start_ms % 1000, r->dur,    exporter,    r->src,     r->dst,
	                      r->nexthop,      r->in_if,  r->out_if,   r->pkts,    r->bytes,
	                      r->sport,        r->dport,  r->flags,    r->proto,   r->tos,
	                      r->src_as,       r->dst_as, r->src_mask, r->dst_mask};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		*p++ = '\t';
		p = utoa(p, v[i]);
	}
	*p++ = '\n';
	fwrite(line, 1, p - line, f);
}

/* ---- main ----------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr,
	        "usage: flowgen --records N --rate RECORDS_PER_S [--port PORT]... (at most %d)\n"
	        "               [--exporters K (16)] [--start EPOCH (1795910400 =\n"
	        "               2026-11-29T00:00:00Z)] [--hours H (24)]\n"
	        "               [--template-every PACKETS (100)] [--seed N] [--tsv FILE]\n"
	        "Sends NetFlow v9 (30 IPv4 records a packet) from 127.0.1.(k+1) to\n"
	        "127.0.0.1:PORT for every PORT; writes the records as TSV to FILE.\n",
	        MAX_PORTS);
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){
	    .exporters = 16, .tmpl_every = 100, .start = 1795910400, .span = 86400, .seed = 1};
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		const char *k = argv[i], *v = argv[++i];
		if (!strcmp(k, "--port") && o->nports < MAX_PORTS)
			o->ports[o->nports++] = atoi(v);
		else if (!strcmp(k, "--rate"))
			o->rate = atof(v);
		else if (!strcmp(k, "--records"))
			o->records = strtoull(v, NULL, 10);
		else if (!strcmp(k, "--exporters"))
			o->exporters = atoi(v);
		else if (!strcmp(k, "--start"))
			o->start = strtoll(v, NULL, 10);
		else if (!strcmp(k, "--hours"))
			o->span = atof(v) * 3600;
		else if (!strcmp(k, "--template-every"))
			o->tmpl_every = atoi(v);
		else if (!strcmp(k, "--seed"))
			o->seed = strtoull(v, NULL, 10);
		else if (!strcmp(k, "--tsv"))
			o->tsv = v;
		else
			usage();
	}
	for (int i = 0; i < o->nports; i++)
		if (o->ports[i] <= 0 || o->ports[i] > 65535)
			usage();
	if (o->rate <= 0 || !o->records || o->exporters < 1 || o->exporters > MAX_EXPORTERS ||
	    o->tmpl_every < 1 || o->span <= 0)
		usage();
}

struct exporter {
	int fd;
	uint32_t addr;   /* 127.0.1.(k+1) */
	int64_t boot_ms; /* epoch ms of its boot */
	uint32_t seq;
	unsigned since_tmpl;
};

static void open_exporter(struct exporter *e, unsigned k, int64_t start)
{
	e->addr = 0x7f000100u | (k + 1);
	e->boot_ms = (start - 86400 - (int64_t)(rnd() % (30 * 86400))) * 1000;
	e->seq = 0;
	e->since_tmpl = UINT32_MAX / 2; /* a template before its first data */
	e->fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (e->fd < 0) {
		perror("flowgen: socket");
		exit(1);
	}
	int buf = 4 << 20;
	setsockopt(e->fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(e->addr)};
	if (bind(e->fd, (struct sockaddr *)&a, sizeof a) < 0) {
		perror("flowgen: bind 127.0.1.x");
		exit(1);
	}
}

static uint64_t send_all(const struct opts *o, const struct exporter *e, const uint8_t *p,
                         size_t len)
{
	uint64_t errors = 0;
	for (int i = 0; i < o->nports; i++) {
		struct sockaddr_in to = {.sin_family = AF_INET,
		                         .sin_port = htons(o->ports[i]),
		                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		while (sendto(e->fd, p, len, 0, (struct sockaddr *)&to, sizeof to) < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS || errno == EAGAIN) { /* a full queue: retry soon */
				usleep(100);
				continue;
			}
			errors++;
			break;
		}
	}
	return errors;
}

int main(int argc, char **argv)
{
	struct opts o;
	parse(argc, argv, &o);
	rng_state = o.seed * 0x9e3779b97f4a7c15ULL + 1;
	struct shape *s = xmalloc(sizeof *s);
	shape_init(s, o.exporters);
	struct exporter *ex = xmalloc(o.exporters * sizeof *ex);
	for (unsigned k = 0; k < o.exporters; k++)
		open_exporter(&ex[k], k, o.start);
	FILE *tsv = NULL;
	if (o.tsv) {
		tsv = fopen(o.tsv, "w");
		if (!tsv) {
			perror(o.tsv);
			return 1;
		}
		setvbuf(tsv, NULL, _IOFBF, 1 << 20);
	}

	uint64_t want_pkts = (o.records + RECS_PER_PKT - 1) / RECS_PER_PKT;
	double base = o.records / o.span; /* mean simulated records per second */
	double pps = o.rate / RECS_PER_PKT;
	double sim = 2.0; /* simulated seconds since start (>= the largest 'ago') */
	uint64_t sent = 0, recs = 0, tsent = 0, errors = 0;
	uint8_t pkt[PKT_LEN], tpkt[128];
	struct rec r[RECS_PER_PKT];

	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	double t0 = now_s();
	while (sent < want_pkts) {
		deadline.tv_nsec += 1000000;
		if (deadline.tv_nsec >= 1000000000) {
			deadline.tv_nsec -= 1000000000;
			deadline.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR)
			;
		uint64_t due = (uint64_t)((now_s() - t0) * pps);
		if (due > want_pkts)
			due = want_pkts;
		for (; sent < due; sent++) {
			struct exporter *e = &ex[zipf_draw(&s->exporter)];
			int64_t now_sec = o.start + (int64_t)sim;
			uint32_t uptime = (uint32_t)(now_sec * 1000 - e->boot_ms);
			if (e->since_tmpl >= o.tmpl_every) {
				size_t tl = build_template(tpkt, uptime, (uint32_t)now_sec,
				                           e->seq++, e - ex + 1);
				errors += send_all(&o, e, tpkt, tl);
				e->since_tmpl = 0;
				tsent++;
			}
			e->since_tmpl++;
			unsigned n = RECS_PER_PKT;
			if (o.records - recs < n)
				n = (unsigned)(o.records - recs);
			/* sim ms of this packet's "now": flows end before it */
			int64_t now_ms = (o.start * 1000 + (int64_t)(sim * 1000));
			uint8_t *p =
			    put_header(pkt, n, uptime, (uint32_t)now_sec, e->seq++, e - ex + 1);
			p = put16(p, TEMPLATE_ID);
			size_t set = 4 + n * REC_LEN, pad = (4 - set % 4) % 4;
			p = put16(p, (uint16_t)(set + pad));
			for (unsigned i = 0; i < n; i++) {
				draw_record(&r[i], s);
				int64_t last = now_ms - r[i].ago, first = last - r[i].dur;
				put_record(p + i * REC_LEN, &r[i], (uint32_t)(first - e->boot_ms),
				           (uint32_t)(last - e->boot_ms));
				if (tsv)
					tsv_line(tsv, &r[i], first, e->addr);
			}
			memset(p + n * REC_LEN, 0, pad);
			errors += send_all(&o, e, pkt, HDR_LEN + set + pad);
			recs += n;
			/* diurnal density: peak at 15:00 UTC, trough at 03:00 */
			double tod = fmod((double)(now_sec % 86400) / 86400.0, 1.0);
			double d = 1.0 + 0.5 * sin(2 * M_PI * (tod - 0.375));
			sim += RECS_PER_PKT / (base * d);
			if (sim > o.span - 1)
				sim = o.span - 1;
		}
	}
	double secs = now_s() - t0;
	if (tsv && fclose(tsv) != 0) {
		perror(o.tsv);
		return 1;
	}
	printf("sent records=%llu packets=%llu template_packets=%llu seconds=%.3f rate=%.0f "
	       "send_errors=%llu sim_start=%lld sim_end=%lld\n",
	       (unsigned long long)recs, (unsigned long long)sent, (unsigned long long)tsent, secs,
	       recs / secs, (unsigned long long)errors, (long long)o.start,
	       (long long)(o.start + (int64_t)sim + 1));
	return 0;
}
