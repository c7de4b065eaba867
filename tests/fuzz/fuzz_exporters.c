/*
 * fuzz_exporters.c — libFuzzer target for the exporter state file reader
 * (store/exporters.c, STORE/state/exporters.json).
 *
 * The input is offered as a state file: it must be refused with a message
 * or loaded, never crash.  What loads is saved (under /dev/shm when there
 * is one) and loaded again, which must give the same rows, and merged into
 * a copy of itself, which must double every COUNTER.  Seed: a small file
 * of the real layout (run.sh writes it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/exporters.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

static int same(const ng_exporters_file *a, const ng_exporters_file *b)
{
	return a->n == b->n && (!a->n || !memcmp(a->rows, b->rows, a->n * sizeof *a->rows)) &&
	       !memcmp(&a->listener, &b->listener, sizeof a->listener) &&
	       !memcmp(&a->store, &b->store, sizeof a->store) && a->started_ms == b->started_ms &&
	       a->updated_ms == b->updated_ms;
}

/* Merging a file into a copy of itself doubles every COUNTER of a row
 * whose key is not repeated (a repeated key takes the later copies too). */
static void check_merge(const ng_exporters_file *f)
{
	ng_exporters_file c = *f;
	c.rows = malloc((f->n ? f->n : 1) * sizeof *c.rows);
	if (!c.rows)
		return;
	if (f->n)
		memcpy(c.rows, f->rows, f->n * sizeof *c.rows);
	if (ng_exporters_merge(&c, f) < 0) {
		ng_exporters_free(&c);
		return;
	}
	if (c.n != f->n)
		abort(); /* every key of f is in the copy */
	for (size_t i = 0; i < f->n; i++) {
		size_t same_key = 0;
		for (size_t j = 0; j < f->n; j++)
			same_key += f->rows[j].domain == f->rows[i].domain &&
			            !memcmp(f->rows[j].exporter, f->rows[i].exporter, 16);
		if (same_key > 1)
			continue;
		for (int id = 0; id < NG_XC_COUNT; id++)
			if (ng_exporter_counters[id].kind == NG_XK_COUNTER &&
			    ng_exporter_counter_get(&c.rows[i], id) !=
			        2 * ng_exporter_counter_get(&f->rows[i], id))
				abort();
	}
	ng_exporters_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0])
		snprintf(path, sizeof path, "%s/fuzz_exporters.%d.json",
		         access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm", (int)getpid());
	ng_exporters_file f, g;
	char err[512];
	if (ng_exporters_parse((const char *)data, size, "input", &f, err, sizeof err) < 0) {
		if (!strstr(err, "input: not an exporter state file: "))
			abort(); /* refused, and saying so */
		return 0;
	}
	if (ng_exporters_save(path, &f) == 0) {
		if (ng_exporters_load(path, &g, err, sizeof err) < 0 || !same(&f, &g))
			abort(); /* what we write, we read back as it was */
		ng_exporters_free(&g);
		unlink(path);
	}
	check_merge(&f);
	ng_exporters_free(&f);
	return 0;
}
