/*
 * nfgen.c — a NetFlow v9 load generator for the ingest benchmark.
 *
 * Sends NetFlow v9 export packets (RFC 3954) to 127.0.0.1:PORT at a fixed
 * rate of flow records per second, 30 IPv4 records per packet, for a fixed
 * duration or record count, then prints what it sent:
 *
 *   sent records=N packets=P template_packets=T seconds=S rate=R
 *        send_errors=E cpu=C
 *
 * Why it is built this way:
 * - All data packets are built before the clock starts (a pool of
 *   --pool records, default 2^20) so sending costs only the kernel's
 *   work.  At send time a packet's header (sysUptime, unix time, sequence)
 *   and its records' FIRST/LAST_SWITCHED are patched (the clock moves),
 *   and the host byte of the addresses is XORed with a per-pass key, so a
 *   long run does not repeat the same flows byte for byte (which would let
 *   a compressor with a long window store them for free).
 * - Records look like real traffic: addresses from a few thousand /24s
 *   chosen by a Zipf law (a few networks carry most flows); or, with
 *   --addrs uniform, source and destination uniformly random public IPv4
 *   addresses (a spoofed-source flood: every address new to a cache), server ports by
 *   a Zipf law over common services, a tcp/udp/icmp mix, log-normal packet
 *   counts, durations of seconds to a minute ending shortly before export.
 * - Several exporters' observation domains (--sources, source IDs 1..K)
 *   share the stream; each has its own sequence counter (RFC 3954 §5.1:
 *   the count of export packets of that source) and gets its template
 *   (in a packet of its own) first and then every --template-every of its
 *   packets.
 * - Pacing: every millisecond (an absolute deadline, clock_nanosleep) the
 *   generator sends the packets due by then with sendmmsg, so the rate is
 *   exact over any window of a few ms and bursts stay small.
 *
 * - Several exporter addresses (--exporters E): source ID k is sent from
 *   127.0.0.(F + (k - 1) mod E) (F: --first-exporter, 1), set per datagram with an IP_PKTINFO
 *   control message (ip(7)), so one sendmmsg batch still mixes them; a
 *   collector with receive workers (nagare collect --workers) spreads
 *   them by address.
 *
 * - SIGTERM or SIGINT stops the sending at the next millisecond tick; the
 *   summary line then counts what was really sent (bench/soak stops it so
 *   right after a kill -9 of the collector).
 * Only loopback is a target: the destination address is fixed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RECS_PER_PKT 30
#define TEMPLATE_ID 256
#define BATCH 64 /* datagrams per sendmmsg */

/* The template: (IANA NetFlow v9 field type, length in bytes). */
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
#define REC_LEN 45 /* sum of the lengths above */
/* Offsets of the fields patched at send time. */
#define OFF_SRC 0
#define OFF_DST 4
#define OFF_FIRST 24
#define OFF_LAST 28

#define HDR_LEN 20
#define SET_LEN (4 + RECS_PER_PKT * REC_LEN)
#define SET_PAD ((4 - SET_LEN % 4) % 4) /* RFC 3954 §5.3: pad to 32 bits */
#define PKT_LEN (HDR_LEN + SET_LEN + SET_PAD)

struct opts {
	int port;
	double rate;      /* records per second */
	double seconds;   /* 0: until --records */
	uint64_t records; /* 0: until --seconds */
	unsigned sources;
	unsigned exporters; /* source addresses 127.0.0.F .. 127.0.0.(F + E - 1) */
	unsigned first;     /* F: --first-exporter (1) */
	unsigned tmpl_every;
	unsigned pool; /* records in the precomputed pool */
	uint64_t seed;
	int sndbuf;
	double mark;  /* >0: print "mark records=N" after this many seconds */
	bool uniform; /* --addrs uniform */
};

/* ---- deterministic randomness -------------------------------------- */

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

/* A Zipf(s) law over 0..n-1, drawn by binary search of its CDF. */
struct zipf {
	unsigned n;
	double *cdf;
};

static void zipf_init(struct zipf *z, unsigned n, double s)
{
	z->n = n;
	z->cdf = malloc(n * sizeof *z->cdf);
	if (!z->cdf) {
		perror("nfgen: malloc");
		exit(1);
	}
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

/* ---- packet building ------------------------------------------------ */

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

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* RFC 3954 §5.1 packet header; count = records (or template records). */
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
static size_t build_template(uint8_t *buf, uint32_t source)
{
	uint8_t *p = put_header(buf, 1, 0, 0, 0, source);
	p = put16(p, 0); /* flowset id 0: templates */
	p = put16(p, 4 + 4 + 4 * NFIELDS);
	p = put16(p, TEMPLATE_ID);
	p = put16(p, NFIELDS);
	for (size_t i = 0; i < NFIELDS; i++) {
		p = put16(p, tmpl[i][0]);
		p = put16(p, tmpl[i][1]);
	}
	return p - buf;
}

/* Common server ports, most used first (the Zipf law follows this order). */
static const uint16_t tcp_ports[] = {443, 80,  22, 25,   993,  8080, 3389, 445, 143, 8443,
                                     587, 110, 21, 3306, 5432, 6443, 853,  465, 995, 5222};
static const uint16_t udp_ports[] = {53,   443,  123, 161,  500, 4500, 1194,  51820, 514,  67,
                                     3478, 5353, 137, 1900, 69,  162,  11211, 4789,  2055, 6343};

struct shape {
	bool uniform;
	struct zipf src_net, dst_net, host, port;
	uint32_t *nets_in, *nets_out; /* /24 network addresses */
};

static void shape_init(struct shape *s)
{
	enum { NETS_IN = 1024, NETS_OUT = 8192 };
	zipf_init(&s->src_net, NETS_IN, 1.05);
	zipf_init(&s->dst_net, NETS_OUT, 1.1);
	zipf_init(&s->host, 254, 0.9);
	zipf_init(&s->port, 20, 1.2);
	s->nets_in = malloc(NETS_IN * sizeof *s->nets_in);
	s->nets_out = malloc(NETS_OUT * sizeof *s->nets_out);
	if (!s->nets_in || !s->nets_out) {
		perror("nfgen: malloc");
		exit(1);
	}
	for (unsigned i = 0; i < NETS_IN; i++) /* inside: 10.0.0.0/8 */
		s->nets_in[i] = 0x0a000000u | (uint32_t)(rnd() & 0xffff) << 8;
	for (unsigned i = 0; i < NETS_OUT; i++) { /* outside: public-looking */
		uint32_t a = (uint32_t)(1 + rnd() % 222) << 24 | (uint32_t)(rnd() & 0xffff) << 8;
		if ((a >> 24) == 10 || (a >> 24) == 127)
			a ^= 0x40000000u;
		s->nets_out[i] = a;
	}
}

/* True when a (host order) is a public unicast IPv4 address: none of the
 * special-purpose blocks of RFC 6890 (this network, private, shared,
 * loopback, link-local, IETF protocol, documentation, benchmarking) nor
 * multicast and reserved (224/3). */
static bool is_public(uint32_t a)
{
	static const uint32_t blk[][2] = {{0x00000000u, 8},  {0x0a000000u, 8},  {0x64400000u, 10},
	                                  {0x7f000000u, 8},  {0xa9fe0000u, 16}, {0xac100000u, 12},
	                                  {0xc0000000u, 24}, {0xc0000200u, 24}, {0xc0a80000u, 16},
	                                  {0xc6120000u, 15}, {0xc6336400u, 24}, {0xcb007100u, 24},
	                                  {0xe0000000u, 3}};
	for (size_t i = 0; i < sizeof blk / sizeof blk[0]; i++)
		if ((a & ~0u << (32 - blk[i][1])) == blk[i][0])
			return false;
	return true;
}

static uint32_t random_public(void)
{
	uint32_t a;
	do
		a = (uint32_t)(rnd() >> 32);
	while (!is_public(a));
	return a;
}

/* Writes one record; first/last are stored as "ms before export" and
 * become absolute sysUptime values at send time. */
static void build_record(uint8_t *r, struct shape *s)
{
	uint32_t in = s->nets_in[zipf_draw(&s->src_net)] | (1 + zipf_draw(&s->host));
	uint32_t out = s->nets_out[zipf_draw(&s->dst_net)] | (1 + zipf_draw(&s->host));
	if (s->uniform) {
		in = random_public();
		out = random_public();
	}
	unsigned pk = zipf_draw(&s->port);
	double u = unif();
	uint8_t proto = u < 0.80 ? 6 : u < 0.97 ? 17 : 1;
	uint16_t sport, dport;
	uint8_t flags = 0;
	if (proto == 1) { /* ICMP: type*256+code in the dst port, by convention */
		sport = 0;
		dport = unif() < 0.5 ? 0x0800 : unif() < 0.5 ? 0x0000 : 0x0303;
	} else {
		sport = 32768 + rnd() % 28232; /* Linux ephemeral range */
		dport = proto == 6 ? tcp_ports[pk] : udp_ports[pk];
		if (proto == 6) /* short flows: scans and resets; long: a full session */
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
	uint32_t dur = pkts == 1 ? 0 : (uint32_t)(1000 * fmin(60.0, pkts * 0.05 * unif() + unif()));
	uint32_t ago = rnd() % 2000; /* the flow ended 0-2 s before export */

	bool reverse = unif() < 0.45; /* server-to-client half of a conversation */
	uint32_t src = reverse ? out : in, dst = reverse ? in : out;
	uint8_t *p = r;
	p = put32(p, src);
	p = put32(p, dst);
	p = put32(p, 0x0a000001u); /* next hop */
	p = put16(p, reverse ? 2 : 1 + rnd() % 8);
	p = put16(p, reverse ? 1 + rnd() % 8 : 2);
	p = put32(p, pkts);
	p = put32(p, bytes > 0xffffffffu ? 0xffffffffu : (uint32_t)bytes);
	p = put32(p, ago + dur); /* FIRST_SWITCHED: ms before export, for now */
	p = put32(p, ago);       /* LAST_SWITCHED */
	p = put16(p, reverse ? dport : sport);
	p = put16(p, reverse ? sport : dport);
	*p++ = flags;
	*p++ = proto;
	*p++ = unif() < 0.9 ? 0 : 0xb8; /* some EF-marked traffic */
	p = put16(p, reverse ? (uint16_t)(out >> 16) : 0);
	p = put16(p, reverse ? 0 : (uint16_t)(out >> 16));
	*p++ = 24;
	*p++ = 24;
}

/* ---- sending -------------------------------------------------------- */

static volatile sig_atomic_t stop_now; /* SIGTERM, SIGINT: end the run */

static void on_stop(int sig)
{
	(void)sig;
	stop_now = 1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Makes a pool packet's records current: FIRST/LAST_SWITCHED become
 * sysUptime values `ago` ms before `uptime`, and the host byte of both
 * addresses is XORed so that pass p carries original ^ key(p) (the packet
 * holds original ^ key(p-1) from its last pass; key(0) = 0). */
static void patch_records(uint8_t *p, const uint32_t *ago, uint32_t uptime, uint64_t pass)
{
	uint8_t key = (uint8_t)(pass * 0x9d);
	uint8_t prev = (uint8_t)((pass ? pass - 1 : 0) * 0x9d);
	uint8_t flip = key ^ prev;
	for (int r = 0; r < RECS_PER_PKT; r++) {
		uint8_t *rec = p + HDR_LEN + 4 + r * REC_LEN;
		put32(rec + OFF_FIRST, uptime - ago[2 * r]);
		put32(rec + OFF_LAST, uptime - ago[2 * r + 1]);
		rec[OFF_SRC + 3] ^= flip;
		rec[OFF_DST + 3] ^= flip;
	}
}

static void usage(void)
{
	fprintf(
	    stderr,
	    "usage: nfgen --port PORT --rate RECORDS_PER_S (--seconds S | --records N)\n"
	    "             [--sources K (4)] [--exporters E (1)] [--template-every PACKETS (100)]\n"
	    "             [--pool RECORDS (1048576)] [--seed N] [--sndbuf BYTES]\n"
	    "             [--mark SECONDS]  (print \"mark records=N\" then, for\n"
	    "                               a benchmark to sample the collector)\n"
	    "             [--addrs zipf|uniform]  (uniform: random public addresses)\n"
	    "             [--first-exporter F (1)]  (exporter addresses from 127.0.0.F)\n"
	    "Sends NetFlow v9, 30 IPv4 records a packet, to 127.0.0.1:PORT.\n");
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){.sources = 4,
	                   .exporters = 1,
	                   .first = 1,
	                   .tmpl_every = 100,
	                   .pool = 1u << 20,
	                   .seed = 1,
	                   .sndbuf = 4 << 20};
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		const char *k = argv[i], *v = argv[++i];
		if (!strcmp(k, "--port"))
			o->port = atoi(v);
		else if (!strcmp(k, "--rate"))
			o->rate = atof(v);
		else if (!strcmp(k, "--seconds"))
			o->seconds = atof(v);
		else if (!strcmp(k, "--records"))
			o->records = strtoull(v, NULL, 10);
		else if (!strcmp(k, "--sources"))
			o->sources = atoi(v);
		else if (!strcmp(k, "--exporters"))
			o->exporters = (unsigned)atoi(v);
		else if (!strcmp(k, "--first-exporter"))
			o->first = (unsigned)atoi(v);
		else if (!strcmp(k, "--template-every"))
			o->tmpl_every = atoi(v);
		else if (!strcmp(k, "--pool"))
			o->pool = atoi(v);
		else if (!strcmp(k, "--seed"))
			o->seed = strtoull(v, NULL, 10);
		else if (!strcmp(k, "--sndbuf"))
			o->sndbuf = atoi(v);
		else if (!strcmp(k, "--mark"))
			o->mark = atof(v);
		else if (!strcmp(k, "--addrs") && (!strcmp(v, "zipf") || !strcmp(v, "uniform")))
			o->uniform = !strcmp(v, "uniform");
		else
			usage();
	}
	if (o->port <= 0 || o->port > 65535 || o->rate <= 0 || (o->seconds <= 0 && !o->records) ||
	    o->sources < 1 || o->exporters < 1 || o->exporters > 250 || o->first < 1 ||
	    o->first + o->exporters > 255 || o->tmpl_every < 1 || o->pool < RECS_PER_PKT * BATCH)
		usage();
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_stop};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	struct opts o;
	parse(argc, argv, &o);
	rng_state = o.seed * 0x9e3779b97f4a7c15ULL + 1;

	/* Build the pool of data packets (headers patched at send time). */
	size_t npkt = o.pool / RECS_PER_PKT;
	uint8_t *pool = calloc(npkt, PKT_LEN);
	uint32_t *ago = malloc(npkt * RECS_PER_PKT * 2 * sizeof *ago);
	if (!pool || !ago) {
		perror("nfgen: malloc");
		return 1;
	}
	struct shape s;
	shape_init(&s);
	s.uniform = o.uniform;
	for (size_t i = 0; i < npkt; i++) {
		uint8_t *p = pool + i * PKT_LEN;
		put_header(p, RECS_PER_PKT, 0, 0, 0, 0);
		put16(p + HDR_LEN, TEMPLATE_ID);
		put16(p + HDR_LEN + 2, SET_LEN + SET_PAD);
		for (int r = 0; r < RECS_PER_PKT; r++) {
			uint8_t *rec = p + HDR_LEN + 4 + r * REC_LEN;
			build_record(rec, &s);
			ago[(i * RECS_PER_PKT + r) * 2] = get32(rec + OFF_FIRST);
			ago[(i * RECS_PER_PKT + r) * 2 + 1] = get32(rec + OFF_LAST);
		}
	}
	uint8_t(*tpkt)[128] = calloc(o.sources, sizeof *tpkt);
	uint32_t *seq = calloc(o.sources, sizeof *seq);
	uint64_t *since_tmpl = calloc(o.sources, sizeof *since_tmpl);
	if (!tpkt || !seq || !since_tmpl) {
		perror("nfgen: malloc");
		return 1;
	}
	size_t tlen = 0;
	for (unsigned k = 0; k < o.sources; k++) {
		tlen = build_template(tpkt[k], k + 1);
		since_tmpl[k] = o.tmpl_every; /* a template before the first data */
	}

	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("nfgen: socket");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &o.sndbuf, sizeof o.sndbuf);
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(o.port)};
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&to, sizeof to) < 0) {
		perror("nfgen: connect");
		return 1;
	}

	uint64_t want_pkts = o.records ? (o.records + RECS_PER_PKT - 1) / RECS_PER_PKT
	                               : (uint64_t)(o.seconds * o.rate / RECS_PER_PKT + 0.5);
	double pps = o.rate / RECS_PER_PKT;
	uint64_t sent = 0, tsent = 0, errors = 0, next = 0, pass = 0;
	uint32_t uptime0 = 86400000u; /* the exporters booted a day ago */
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	union {
		char buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
		struct cmsghdr align;
	} ctl[BATCH];
	memset(msgs, 0, sizeof msgs);
	memset(ctl, 0, sizeof ctl);

	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	double t0 = now_s();
	while (sent < want_pkts && !stop_now) {
		deadline.tv_nsec += 1000000;
		if (deadline.tv_nsec >= 1000000000) {
			deadline.tv_nsec -= 1000000000;
			deadline.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR)
			;
		double el = now_s() - t0;
		if (o.mark > 0 && el >= o.mark) {
			printf("mark records=%llu seconds=%.3f\n",
			       (unsigned long long)(sent * RECS_PER_PKT), el);
			fflush(stdout);
			o.mark = 0;
		}
		uint64_t due = (uint64_t)(el * pps);
		if (due > want_pkts)
			due = want_pkts;
		struct timespec wall;
		clock_gettime(CLOCK_REALTIME, &wall);
		uint32_t uptime = uptime0 + (uint32_t)(el * 1000);
		while (sent < due) {
			unsigned n = 0;
			while (n < BATCH && sent < due) {
				unsigned k = sent % o.sources;
				uint8_t *p;
				size_t len;
				bool is_tmpl = since_tmpl[k] >= o.tmpl_every;
				if (is_tmpl) {
					/* this source's template, its data packet next turn */
					since_tmpl[k] = 0;
					p = tpkt[k];
					len = tlen;
					put_header(p, 1, uptime, wall.tv_sec, seq[k]++, k + 1);
					tsent++;
				} else {
					since_tmpl[k]++;
					size_t i = next++;
					uint64_t this_pass = pass;
					if (next == npkt) {
						next = 0;
						pass++;
					}
					p = pool + i * PKT_LEN;
					len = PKT_LEN;
					put_header(p, RECS_PER_PKT, uptime, wall.tv_sec, seq[k]++,
					           k + 1);
					patch_records(p, ago + i * RECS_PER_PKT * 2, uptime,
					              this_pass);
					sent++;
				}
				iov[n] = (struct iovec){p, len};
				msgs[n].msg_hdr.msg_iov = &iov[n];
				msgs[n].msg_hdr.msg_iovlen = 1;
				if (o.exporters > 1 ||
				    o.first != 1) { /* the source address of source k */
					struct msghdr *mh = &msgs[n].msg_hdr;
					mh->msg_control = ctl[n].buf;
					mh->msg_controllen = sizeof ctl[n].buf;
					struct cmsghdr *cm = CMSG_FIRSTHDR(mh);
					cm->cmsg_level = IPPROTO_IP;
					cm->cmsg_type = IP_PKTINFO;
					cm->cmsg_len = CMSG_LEN(sizeof(struct in_pktinfo));
					struct in_pktinfo pi = {0};
					pi.ipi_spec_dst.s_addr =
					    htonl(0x7f000000u + o.first + k % o.exporters);
					memcpy(CMSG_DATA(cm), &pi, sizeof pi);
				}
				n++;
				if (is_tmpl)
					break; /* its buffer must not be reused in this batch */
			}
			for (unsigned off = 0; off < n;) {
				int m = sendmmsg(fd, msgs + off, n - off, 0);
				if (m < 0) {
					/* EINTR, or a connected socket's pending ICMP error
					 * (reported once, the datagram not sent): retry */
					if (errno == EINTR || errno == ECONNREFUSED)
						continue;
					errors++; /* ECONNREFUSED or ENOBUFS: counted, go on */
					off++;
					continue;
				}
				off += m;
			}
		}
	}
	double secs = now_s() - t0;
	struct rusage ru; /* the sender's CPU: loopback delivery runs here too */
	getrusage(RUSAGE_SELF, &ru);
	double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	             ru.ru_stime.tv_usec / 1e6;
	printf("sent records=%llu packets=%llu template_packets=%llu seconds=%.3f rate=%.0f "
	       "send_errors=%llu cpu=%.3f\n",
	       (unsigned long long)(sent * RECS_PER_PKT), (unsigned long long)sent,
	       (unsigned long long)tsent, secs, sent * RECS_PER_PKT / secs,
	       (unsigned long long)errors, cpu);
	return 0;
}
