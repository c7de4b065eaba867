/*
 * exporters.c — the exporter state file STORE/state/exporters.json (format
 * in exporters.h).
 *
 * Writing is plain fprintf of a fixed layout.  Reading takes any JSON that
 * follows the layout's shape (key order free, unknown keys skipped) with a
 * small recursive-descent reader: the file is ours and small, so a general
 * JSON library would buy nothing but a dependency.
 */
#include "store/exporters.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/addr.h"
#include "core/field.h"
#include "core/timefmt.h"

const char *ng_protocol_name(uint8_t version)
{
	switch (version) {
	case 1: return "NetFlow v1";
	case 5: return "NetFlow v5";
	case 7: return "NetFlow v7";
	case 9: return "NetFlow v9";
	case 10: return "IPFIX";
	case 0x50: return "sFlow v5";
	case 0: return "unknown";
	}
	return "other";
}

uint64_t ng_exporter_errors_total(const ng_exporter_stats *s)
{
	uint64_t t = 0;
	for (int i = 0; i < NG_DERR_COUNT; i++)
		t += s->errors[i];
	return t;
}

/* ---- writing ---------------------------------------------------------- */

static void put_time(FILE *f, const char *key, uint64_t ms)
{
	char t[40];
	fprintf(f, "\"%s\":\"%s\",\"%s_ms\":%" PRIu64, key, ms ? ng_time_format(ms, t) : "", key,
	        ms);
}

static void put_row(FILE *f, const ng_exporter_stats *s)
{
	char a[NG_ADDR_STRLEN];
	fprintf(f,
	        "{\"exporter\":\"%s\",\"domain\":%" PRIu32 ",\"version\":%u,\"protocol\":\"%s\","
	        "\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"records\":%" PRIu64
	        ",\"options_records\":%" PRIu64 ",\"templates\":%" PRIu64 ",\"lost\":%" PRIu64
	        ",\"template_misses\":%" PRIu64 ",\"held\":%" PRIu64 ",\"errors\":{",
	        ng_addr_format(s->exporter, a), s->domain, s->version, ng_protocol_name(s->version),
	        s->packets, s->bytes, s->records, s->options_records, s->templates, s->lost,
	        s->template_misses, s->held);
	for (int i = 0; i < NG_DERR_COUNT; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", ng_decode_error_name(i),
		        s->errors[i]);
	fprintf(f, "},\"errors_total\":%" PRIu64 ",", ng_exporter_errors_total(s));
	put_time(f, "first_seen", s->first_seen);
	fputc(',', f);
	put_time(f, "last_seen", s->last_seen);
	fprintf(f,
	        ",\"sampling_rate\":%" PRIu32
	        ",\"sampling_source\":\"%s\",\"lost_samples\":%" PRIu64
	        ",\"counter_samples\":%" PRIu64 ",\"discards\":%" PRIu64 "}",
	        s->sampling_rate, ng_sampling_source_name(s->sampling_source), s->lost_samples,
	        s->counter_samples, s->discards);
}

static void put_file(FILE *f, const ng_exporters_file *x)
{
	fprintf(f, "{\"format\":\"nagare-exporters/1\",");
	put_time(f, "updated", x->updated_ms);
	fputc(',', f);
	put_time(f, "started", x->started_ms);
	const ng_listener_stats *l = &x->listener;
	fprintf(f,
	        ",\n\"listener\":{\"datagrams\":%" PRIu64 ",\"bytes\":%" PRIu64
	        ",\"drops\":%" PRIu64 ",\"truncated\":%" PRIu64 ",\"errors\":%" PRIu64 "},\n",
	        l->datagrams, l->bytes, l->drops, l->truncated, l->errors);
	const ng_store_writer_stats *w = &x->store;
	fprintf(f,
	        "\"store\":{\"rows\":%" PRIu64 ",\"segments\":%" PRIu64 ",\"bytes\":%" PRIu64
	        ",\"errors\":%" PRIu64 ",\"dropped\":%" PRIu64 "},\n\"exporters\":[",
	        w->rows, w->segments, w->bytes, w->errors, w->dropped);
	for (size_t i = 0; i < x->n; i++) {
		fputs(i ? ",\n" : "\n", f);
		put_row(f, &x->rows[i]);
	}
	fputs("\n]}\n", f);
}

int ng_exporters_save(const char *path, const ng_exporters_file *x)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		unlink(tmp);
		errno = e;
		return -1;
	}
	put_file(f, x);
	int bad = fflush(f) != 0 || ferror(f) || fsync(fd) != 0;
	int e = errno;
	if (fclose(f) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	if (bad || rename(tmp, path) != 0) {
		if (!bad)
			e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

/* ---- reading ---------------------------------------------------------- */

struct rd {
	const char *p, *start, *end;
	const char *why; /* first error */
};

static void ws(struct rd *r)
{
	while (r->p < r->end && isspace((unsigned char)*r->p))
		r->p++;
}

static bool fail(struct rd *r, const char *why)
{
	if (!r->why)
		r->why = why;
	return false;
}

static bool eat(struct rd *r, char c)
{
	ws(r);
	if (r->p < r->end && *r->p == c) {
		r->p++;
		return true;
	}
	return false;
}

/* A string into buf[len] (escapes: \" \\ \/ kept as the character, others
 * as '?': the writer never emits them). */
static bool str(struct rd *r, char *buf, size_t len)
{
	if (!eat(r, '"'))
		return fail(r, "expected a string");
	size_t n = 0;
	while (r->p < r->end && *r->p != '"') {
		char c = *r->p++;
		if (c == '\\') {
			if (r->p >= r->end)
				break;
			c = *r->p++;
			if (c != '"' && c != '\\' && c != '/')
				c = '?';
		}
		if (n + 1 < len)
			buf[n++] = c;
	}
	if (r->p >= r->end)
		return fail(r, "unterminated string");
	r->p++;
	if (len)
		buf[n] = 0;
	return true;
}

static bool u64(struct rd *r, uint64_t *v)
{
	ws(r);
	if (r->p >= r->end || !isdigit((unsigned char)*r->p))
		return fail(r, "expected an unsigned integer");
	uint64_t x = 0;
	while (r->p < r->end && isdigit((unsigned char)*r->p)) {
		unsigned d = (unsigned)(*r->p++ - '0');
		if (x > (UINT64_MAX - d) / 10)
			return fail(r, "integer out of range");
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

static bool skip_value(struct rd *r, int depth);

/* Calls fn(r, key, arg) for each member of an object; fn reads the value. */
static bool members(struct rd *r, bool (*fn)(struct rd *, const char *, void *), void *arg)
{
	if (!eat(r, '{'))
		return fail(r, "expected an object");
	if (eat(r, '}'))
		return true;
	do {
		char key[64];
		if (!str(r, key, sizeof key) || !eat(r, ':'))
			return fail(r, "expected \"key\":");
		if (!fn(r, key, arg))
			return false;
	} while (eat(r, ','));
	return eat(r, '}') || fail(r, "expected ',' or '}'");
}

static bool skip_value(struct rd *r, int depth)
{
	ws(r);
	if (depth > 32)
		return fail(r, "nested too deeply");
	if (r->p >= r->end)
		return fail(r, "unexpected end");
	char c = *r->p;
	if (c == '"') {
		char dummy[1];
		return str(r, dummy, 0);
	}
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		r->p++;
		if (eat(r, close))
			return true;
		do {
			if (c == '{') {
				char key[1];
				if (!str(r, key, 0) || !eat(r, ':'))
					return fail(r, "expected \"key\":");
			}
			if (!skip_value(r, depth + 1))
				return false;
		} while (eat(r, ','));
		return eat(r, close) || fail(r, "expected ',' or a closing bracket");
	}
	/* number, true, false, null */
	const char *s = r->p;
	while (r->p < r->end && (isalnum((unsigned char)*r->p) || strchr("+-.", *r->p)))
		r->p++;
	return r->p > s || fail(r, "expected a value");
}

static bool listener_member(struct rd *r, const char *k, void *arg)
{
	ng_listener_stats *l = arg;
	uint64_t *v = !strcmp(k, "datagrams")   ? &l->datagrams
	              : !strcmp(k, "bytes")     ? &l->bytes
	              : !strcmp(k, "drops")     ? &l->drops
	              : !strcmp(k, "truncated") ? &l->truncated
	              : !strcmp(k, "errors")    ? &l->errors
	                                        : NULL;
	return v ? u64(r, v) : skip_value(r, 0);
}

static bool store_member(struct rd *r, const char *k, void *arg)
{
	ng_store_writer_stats *w = arg;
	uint64_t *v = !strcmp(k, "rows")       ? &w->rows
	              : !strcmp(k, "segments") ? &w->segments
	              : !strcmp(k, "bytes")    ? &w->bytes
	              : !strcmp(k, "errors")   ? &w->errors
	              : !strcmp(k, "dropped")  ? &w->dropped
	                                       : NULL;
	return v ? u64(r, v) : skip_value(r, 0);
}

static bool error_member(struct rd *r, const char *k, void *arg)
{
	ng_exporter_stats *s = arg;
	for (int i = 0; i < NG_DERR_COUNT; i++)
		if (!strcmp(k, ng_decode_error_name(i)))
			return u64(r, &s->errors[i]);
	return skip_value(r, 0); /* an error this build does not know */
}

static bool row_member(struct rd *r, const char *k, void *arg)
{
	ng_exporter_stats *s = arg;
	uint64_t v;
	if (!strcmp(k, "exporter")) {
		char a[64];
		return str(r, a, sizeof a) &&
		       (ng_addr_parse(a, s->exporter) || fail(r, "exporter is not an address"));
	}
	if (!strcmp(k, "errors"))
		return members(r, error_member, s);
	if (!strcmp(k, "sampling_source")) {
		char name[32];
		if (!str(r, name, sizeof name))
			return false;
		for (unsigned i = 0; i < NG_SAMPLING_SOURCE_COUNT; i++)
			if (!strcmp(name, ng_sampling_source_name(i)))
				s->sampling_source = (uint8_t)i;
		return true;
	}
	struct {
		const char *key;
		uint64_t *dst;
	} u[] = {
	    {"packets", &s->packets},
	    {"bytes", &s->bytes},
	    {"records", &s->records},
	    {"options_records", &s->options_records},
	    {"templates", &s->templates},
	    {"lost", &s->lost},
	    {"template_misses", &s->template_misses},
	    {"held", &s->held},
	    {"lost_samples", &s->lost_samples},
	    {"counter_samples", &s->counter_samples},
	    {"discards", &s->discards},
	    {"first_seen_ms", &s->first_seen},
	    {"last_seen_ms", &s->last_seen},
	};
	for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
		if (!strcmp(k, u[i].key))
			return u64(r, u[i].dst);
	if (!strcmp(k, "domain") || !strcmp(k, "version") || !strcmp(k, "sampling_rate")) {
		if (!u64(r, &v))
			return false;
		if (k[0] == 'd')
			s->domain = (uint32_t)v;
		else if (k[0] == 'v')
			s->version = (uint8_t)v;
		else
			s->sampling_rate = (uint32_t)v;
		return true;
	}
	return skip_value(r, 0);
}

static bool rows(struct rd *r, ng_exporters_file *f)
{
	if (!eat(r, '['))
		return fail(r, "expected an array");
	if (eat(r, ']'))
		return true;
	size_t cap = 0;
	do {
		if (f->n == cap) {
			cap = cap ? cap * 2 : 16;
			ng_exporter_stats *n = realloc(f->rows, cap * sizeof *n);
			if (!n)
				return fail(r, "out of memory");
			f->rows = n;
		}
		ng_exporter_stats *s = &f->rows[f->n];
		memset(s, 0, sizeof *s);
		if (!members(r, row_member, s))
			return false;
		f->n++;
	} while (eat(r, ','));
	return eat(r, ']') || fail(r, "expected ',' or ']'");
}

static bool top_member(struct rd *r, const char *k, void *arg)
{
	ng_exporters_file *f = arg;
	if (!strcmp(k, "exporters"))
		return rows(r, f);
	if (!strcmp(k, "listener"))
		return members(r, listener_member, &f->listener);
	if (!strcmp(k, "store"))
		return members(r, store_member, &f->store);
	if (!strcmp(k, "updated_ms"))
		return u64(r, &f->updated_ms);
	if (!strcmp(k, "started_ms"))
		return u64(r, &f->started_ms);
	return skip_value(r, 0);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n, fp);
		if (n < cap)
			break;
		char *b = cap > (64u << 20) ? NULL : realloc(buf, cap * 2);
		if (!b) {
			free(buf);
			buf = NULL;
			errno = EFBIG;
			break;
		}
		buf = b;
		cap *= 2;
	}
	if (buf && ferror(fp)) {
		free(buf);
		buf = NULL;
		errno = EIO;
	}
	fclose(fp);
	*len = n;
	return buf;
}

int ng_exporters_load(const char *path, ng_exporters_file *f, char *err, size_t errlen)
{
	memset(f, 0, sizeof *f);
	size_t len;
	char *buf = slurp(path, &len);
	if (!buf) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	struct rd r = {.p = buf, .start = buf, .end = buf + len};
	bool ok = members(&r, top_member, f);
	ws(&r);
	if (ok && r.p != r.end)
		ok = fail(&r, "text after the object");
	if (!ok) {
		snprintf(err, errlen, "%s: not an exporter state file: %s at byte %zu", path,
		         r.why ? r.why : "syntax error", (size_t)(r.p - r.start));
		free(buf);
		ng_exporters_free(f);
		errno = EINVAL;
		return -1;
	}
	free(buf);
	return 0;
}

void ng_exporters_free(ng_exporters_file *f)
{
	free(f->rows);
	f->rows = NULL;
	f->n = 0;
}

/* ---- merging ---------------------------------------------------------- */

static void add_row(ng_exporter_stats *d, const ng_exporter_stats *s)
{
	d->packets += s->packets;
	d->bytes += s->bytes;
	d->records += s->records;
	d->options_records += s->options_records;
	d->templates += s->templates;
	d->lost += s->lost;
	d->template_misses += s->template_misses;
	d->held += s->held;
	d->lost_samples += s->lost_samples;
	d->counter_samples += s->counter_samples;
	d->discards += s->discards;
	for (int i = 0; i < NG_DERR_COUNT; i++)
		d->errors[i] += s->errors[i];
	if (s->first_seen && (!d->first_seen || s->first_seen < d->first_seen))
		d->first_seen = s->first_seen;
	if (s->last_seen > d->last_seen) {
		d->last_seen = s->last_seen;
		if (!d->version)
			d->version = s->version;
	}
	if (!d->sampling_rate) {
		d->sampling_rate = s->sampling_rate;
		d->sampling_source = s->sampling_source;
	}
}

int ng_exporters_merge(ng_exporters_file *f, const ng_exporters_file *base)
{
	for (size_t i = 0; i < base->n; i++) {
		const ng_exporter_stats *b = &base->rows[i];
		size_t j;
		for (j = 0; j < f->n; j++)
			if (f->rows[j].domain == b->domain &&
			    !memcmp(f->rows[j].exporter, b->exporter, 16))
				break;
		if (j == f->n) {
			ng_exporter_stats *n = realloc(f->rows, (f->n + 1) * sizeof *n);
			if (!n)
				return -1;
			f->rows = n;
			f->rows[f->n++] = *b;
			continue;
		}
		add_row(&f->rows[j], b);
	}
	f->listener.datagrams += base->listener.datagrams;
	f->listener.bytes += base->listener.bytes;
	f->listener.drops += base->listener.drops;
	f->listener.truncated += base->listener.truncated;
	f->listener.errors += base->listener.errors;
	if (base->started_ms && (!f->started_ms || base->started_ms < f->started_ms))
		f->started_ms = base->started_ms;
	return 0;
}
