/*
 * test_workers.c — end to end: `$NG_BIN collect --workers 2` with 8
 * NetFlow v9 exporters (127.0.0.10 to 127.0.0.17, each from a fresh
 * source port per datagram) × 2 observation domains (source ids 1, 2),
 * all using template id 256 with layouts that differ between exporters
 * and change mid-stream.  Every record must be decoded with its own
 * exporter's template and stored, none lost; a restart (again with 2
 * workers, then with 1) decodes data at once with the saved templates,
 * whichever worker held them.
 *
 * Layouts of template 256 (RFC 3954 §8 field types):
 *   A: IN_BYTES(1) 4 bytes, L4_SRC_PORT(7) 2, L4_DST_PORT(11) 2
 *   B: L4_DST_PORT(11) 2, L4_SRC_PORT(7) 2, IN_BYTES(1) 8
 * src_port = 100 × exporter + domain, dst_port = the record's number,
 * bytes = 1000 + number under A, 5 000 000 000 + number under B.  Read
 * with the other layout, a record's ports and bytes are other numbers.
 * Even exporters switch from A to B after round 4, odd ones after round
 * 8: in rounds 5-8 both layouts are live under the same id.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/bytes.h"
#include "core/field.h"
#include "net/reuseport.h"
#include "store/store.h"

#include "e2e_util.h"

#define NEXP 8
#define NDOM 2
#define ROUNDS 12
#define PER 10 /* records per datagram */

struct pkt {
	uint8_t b[1500];
	size_t n;
};

static void put16(struct pkt *p, uint16_t v)
{
	ng_put_be16(p->b + p->n, v);
	p->n += 2;
}

static void put32(struct pkt *p, uint32_t v)
{
	ng_put_be32(p->b + p->n, v);
	p->n += 4;
}

/* One v9 datagram of exporter e, domain d: the template (layout B when
 * b) when tpl, then PER records numbered from first. */
static void v9(struct pkt *p, int e, int d, uint32_t seq, bool b, bool tpl, uint16_t first)
{
	p->n = 0;
	put16(p, 9);
	put16(p, (uint16_t)((tpl ? 1 : 0) + PER));
	put32(p, 100000);
	put32(p, (uint32_t)time(NULL));
	put32(p, seq);
	put32(p, (uint32_t)d);
	if (tpl) {
		put16(p, 0); /* template flowset */
		put16(p, 4 + 4 + 3 * 4);
		put16(p, 256);
		put16(p, 3);
		static const uint16_t a[] = {1, 4, 7, 2, 11, 2}, bb[] = {11, 2, 7, 2, 1, 8};
		for (int i = 0; i < 6; i++)
			put16(p, b ? bb[i] : a[i]);
	}
	size_t rec = b ? 12 : 8;
	put16(p, 256);
	put16(p, (uint16_t)(4 + PER * rec));
	for (uint16_t k = first; k < first + PER; k++) {
		uint16_t sport = (uint16_t)(100 * e + d);
		if (b) {
			put16(p, k);
			put16(p, sport);
			ng_put_be64(p->b + p->n, 5000000000ull + k);
			p->n += 8;
		} else {
			put32(p, 1000u + k);
			put16(p, sport);
			put16(p, k);
		}
	}
}

static uint32_t exp_addr(int e)
{
	return 0x7f00000au + (uint32_t)e; /* 127.0.0.10 + e */
}

/* Rounds [from, to) of every exporter and domain; a template in the
 * first datagram of each layout when with_tpl. */
static void send_rounds(uint16_t port, int from, int to, bool with_tpl)
{
	for (int r = from; r < to; r++)
		for (int e = 0; e < NEXP; e++)
			for (int d = 1; d <= NDOM; d++) {
				bool b = r >= (e % 2 ? 8 : 4);
				bool tpl = with_tpl && (r == 0 || r == (e % 2 ? 8 : 4));
				struct pkt p;
				v9(&p, e, d, (uint32_t)r, b, tpl, (uint16_t)(r * PER));
				eu_send_udp(exp_addr(e), port, p.b, p.n);
			}
}

struct seen {
	size_t n, bad;
	uint32_t count[NEXP][NDOM + 1];
};

#define COL(b, f, T, i) (((const T *)(b)->col[f])[i])

static int on_row(const ng_column_batch *b, void *arg)
{
	struct seen *s = arg;
	for (size_t i = 0; i < b->n; i++) {
		s->n++;
		uint16_t sp = COL(b, NG_F_SRC_PORT, uint16_t, i),
		         k = COL(b, NG_F_DST_PORT, uint16_t, i);
		uint64_t by = COL(b, NG_F_BYTES, uint64_t, i);
		const uint8_t *ex = (const uint8_t *)b->col[NG_F_EXPORTER] + 16 * i;
		int e = sp / 100, d = sp % 100, r = k / PER;
		bool b_layout = r >= (e % 2 ? 8 : 4);
		if (e < 0 || e >= NEXP || d < 1 || d > NDOM || ex[15] != 10 + e ||
		    by != (b_layout ? 5000000000ull : 1000u) + k) {
			s->bad++;
			continue;
		}
		s->count[e][d]++;
	}
	return 0;
}

static struct seen scan(const char *store)
{
	struct seen s = {0};
	ng_colset cs = ng_colset_of(NG_F_SRC_PORT);
	ng_colset_add(&cs, NG_F_DST_PORT);
	ng_colset_add(&cs, NG_F_BYTES);
	ng_colset_add(&cs, NG_F_EXPORTER);
	assert_int_equal(ng_store_scan(store, 0, UINT64_MAX, cs, on_row, &s, NULL), 0);
	return s;
}

static pid_t start(const char *bin, const char *store, uint16_t port, const char *workers,
                   const char *log)
{
	char listen[64];
	snprintf(listen, sizeof listen, "127.0.0.1:%u", port);
	unlink(log);
	pid_t pid = eu_spawn(log, (char *const[]){(char *)bin, "collect", "--store", (char *)store,
	                                          "--listen", listen, "--workers", (char *)workers,
	                                          "--no-http", "--stats-interval", "1", NULL});
	assert_true(eu_wait_log(log, pid, "listening on", 5000));
	return pid;
}

static void test_workers_templates(void **state)
{
	(void)state;
	const char *bin = eu_bin_or_skip();
	/* the 8 exporters fall on both workers (else the test shows nothing) */
	unsigned on[2] = {0};
	for (int e = 0; e < NEXP; e++) {
		uint8_t a[16] = {[10] = 0xff, [11] = 0xff, [12] = 127, [15] = (uint8_t)(10 + e)};
		on[ng_reuseport_worker(a, 2)]++;
	}
	assert_true(on[0] > 0 && on[1] > 0);
	char dir[] = "/tmp/ng_test_workers_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char store[4200], log[4300];
	snprintf(store, sizeof store, "%s/store", dir);
	snprintf(log, sizeof log, "%s/collect.log", dir);
	uint16_t port = eu_free_port(SOCK_DGRAM);
	pid_t pid = start(bin, store, port, "2", log);
	send_rounds(port, 0, ROUNDS, true);
	eu_sleep_ms(1500); /* a report: the per-worker lines */
	assert_int_equal(eu_stop(pid), 0);
	const char *s = eu_slurp(log, NULL);
	assert_non_null(s);
	/* the last report: both workers stored records */
	for (int w = 0; w < 2; w++) {
		char key[32];
		snprintf(key, sizeof key, "worker %d: ", w);
		const char *last = NULL;
		for (const char *q = strstr(s, key); q; q = strstr(q + 1, key))
			last = q;
		assert_non_null(last);
		assert_true(strtoull(last + strlen(key), NULL, 10) > 0);
	}
	/* the per-worker counts in exporters.json and nagare status */
	char xj[4400], cmd[8600], out[16384];
	snprintf(xj, sizeof xj, "%s/state/exporters.json", store);
	s = eu_slurp(xj, NULL);
	assert_non_null(s);
	const char *ws = strstr(s, "\"workers\":[{\"records\":");
	assert_non_null(ws);
	unsigned long long r0 = strtoull(ws + strlen("\"workers\":[{\"records\":"), NULL, 10);
	const char *w1 = strstr(ws, "},{\"records\":");
	assert_non_null(w1);
	unsigned long long r1 = strtoull(w1 + strlen("},{\"records\":"), NULL, 10);
	assert_true(r0 > 0 && r1 > 0);
	assert_int_equal(r0 + r1, (unsigned long long)NEXP * NDOM * ROUNDS * PER);
	snprintf(cmd, sizeof cmd, "'%s' status --store '%s'", bin, store);
	assert_int_equal(eu_run(cmd, out, sizeof out), 0);
	assert_non_null(strstr(out, "  worker 1: "));
	/* what each worker holds adds up (not worker 0's alone) */
	assert_non_null(strstr(out, "state held: 8 exporters, 16 domains, 16 templates"));
	struct seen got = scan(store);
	assert_int_equal(got.bad, 0);
	assert_int_equal(got.n, (size_t)NEXP * NDOM * ROUNDS * PER);
	for (int e = 0; e < NEXP; e++)
		for (int d = 1; d <= NDOM; d++)
			assert_int_equal(got.count[e][d], ROUNDS * PER);
	/* restarted with 2 workers, then 1: data without templates decodes
	 * at once with the saved layouts (B for all by now) */
	pid = start(bin, store, port, "2", log);
	send_rounds(port, ROUNDS, ROUNDS + 1, false);
	eu_sleep_ms(300);
	assert_int_equal(eu_stop(pid), 0);
	pid = start(bin, store, port, "1", log);
	send_rounds(port, ROUNDS + 1, ROUNDS + 2, false);
	eu_sleep_ms(300);
	assert_int_equal(eu_stop(pid), 0);
	got = scan(store);
	assert_int_equal(got.bad, 0);
	assert_int_equal(got.n, (size_t)NEXP * NDOM * (ROUNDS + 2) * PER);
	eu_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_workers_templates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
