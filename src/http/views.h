/*
 * views.h — saved dashboard views (GET/POST /api/v1/views, DELETE
 * /api/v1/views/NAME; docs/api.md "Saved views", docs/dashboards.md).
 *
 * A view is a name and a state string: the dashboard URL's path and query
 * ("/top?v=1&from=-6h&field=dstport"), which the dashboards parse
 * (web/src/state.js).  nagare keeps them in one file of the store's state
 * directory, DIR/state/views.txt, replaced atomically (temporary file,
 * fsync, rename):
 *
 *     nagare-views/1
 *     NAME<TAB>STATE
 *     ...
 *
 * Bounds: NG_VIEWS_MAX views, a name of 1..NG_VIEW_NAME_MAX bytes of
 * [A-Za-z0-9 _.:()-] (no space first or last), a state of
 * 1..NG_VIEW_STATE_MAX bytes of printable ASCII without space (a
 * percent-encoded URL), starting with '/'.
 */
#ifndef NG_HTTP_VIEWS_H
#define NG_HTTP_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define NG_VIEWS_MAX 256
#define NG_VIEW_NAME_MAX 64
#define NG_VIEW_STATE_MAX 4096
#define NG_VIEWS_BODY_MAX 16384 /* a POST body, bytes (escapes make it longer) */
#define NG_VIEWS_MAGIC "nagare-views/1"

typedef struct ng_view {
	char name[NG_VIEW_NAME_MAX + 1];
	char *state; /* malloc'd, NUL-terminated */
} ng_view;

typedef struct ng_views {
	ng_view v[NG_VIEWS_MAX];
	size_t n;
} ng_views;

/* True when name[len] is a valid view name (rules above). */
bool ng_view_name_ok(const char *name, size_t len);

/* True when state[len] is a valid state string (rules above). */
bool ng_view_state_ok(const char *state, size_t len);

/* Parses the views file text buf[len] (not NUL-terminated) into *out
 * (zeroed first; free with ng_views_free, also after an error).  Returns
 * 0, or -1 with "line N: why" in err[errlen]: a missing or other magic
 * line, a bad name or state, a duplicate name, more than NG_VIEWS_MAX. */
int ng_views_parse(const char *buf, size_t len, ng_views *out, char *err, size_t errlen);

/* Frees the states of *v and empties it. */
void ng_views_free(ng_views *v);

/* Parses a POST body buf[len] (RFC 8259 JSON): an object with the string
 * members "name" and "state" (others ignored), into name[NG_VIEW_NAME_MAX
 * + 1] and *state (malloc'd, the caller frees).  Returns 0, or the HTTP
 * status of the error with a message in err[errlen]: 413 for a body over
 * NG_VIEWS_BODY_MAX or a state over NG_VIEW_STATE_MAX bytes, 400 for
 * anything else (not JSON, a member missing, a bad name or state). */
unsigned ng_views_body(const char *buf, size_t len, char *name, char **state, char *err,
                       size_t errlen);

/* Writes *v as the JSON answer of GET /api/v1/views to f:
 * {"format":"nagare-views/1","max":256,"views":[{"name":..,"state":..}]}. */
void ng_views_json(FILE *f, const ng_views *v);

/* Loads the file `path` into *out: a missing file is no views.  Returns
 * 0, or -1 with a message in err[errlen] (unreadable, too big, damaged). */
int ng_views_load(const char *path, ng_views *out, char *err, size_t errlen);

/* Writes *v to `path` atomically (path.tmp, fsync, rename).  Returns 0 or
 * -1 with a message in err[errlen]. */
int ng_views_save(const char *path, const ng_views *v, char *err, size_t errlen);

#endif
