/*
 * store_path.c — the default flow store (see store_path.h for the rule).
 */
#include "cli/store_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/files.h"

static const char per_user[] = "the per-user data directory";

/* The service directory counts when this user can do what the command
 * does there: write it (collect) or read its flows/ (every other
 * command; with the package's unit that is root or the nagare group). */
static bool service_usable(const char *dir, bool write)
{
	if (write)
		return access(dir, W_OK | X_OK) == 0;
	char flows[4096];
	snprintf(flows, sizeof flows, "%s/flows", dir);
	return access(flows, R_OK | X_OK) == 0;
}

const char *ng_cli_store_default(const char *service, bool write, char *buf, size_t len,
                                 const char **why)
{
	const char *env = getenv("NAGARE_STORE");
	int k;
	if (env && *env) {
		*why = "$NAGARE_STORE";
		k = snprintf(buf, len, "%s", env);
	} else if (service && service_usable(service, write)) {
		*why = "the service's store";
		k = snprintf(buf, len, "%s", service);
	} else {
		const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
		*why = per_user;
		if (xdg && *xdg == '/') /* the spec: a relative value is ignored */
			k = snprintf(buf, len, "%s/nagare", xdg);
		else if (home && *home)
			k = snprintf(buf, len, "%s/.local/share/nagare", home);
		else
			return NULL;
	}
	return k > 0 && (size_t)k < len ? buf : NULL;
}

const char *ng_cli_store(const char *cmd, const char *given, bool write, char *buf, size_t len)
{
	if (given)
		return given;
	const char *why;
	const char *dir = ng_cli_store_default(NG_SERVICE_STORE, write, buf, len, &why);
	if (!dir) {
		fprintf(stderr,
		        "nagare %s: no default store (HOME is not set, or the path is too "
		        "long): give --store DIR or set NAGARE_STORE\n",
		        cmd);
		return NULL;
	}
	fprintf(stderr, "nagare %s: store %s (default: %s)\n", cmd, dir, why);
	if (write && why == per_user) {
		/* the store creates DIR itself; its parents (~/.local/share) may be
		 * missing on a fresh account */
		char parent[4096];
		snprintf(parent, sizeof parent, "%s", dir);
		char *slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = 0;
			if (ng_mkdir_p(parent) < 0)
				fprintf(stderr, "nagare %s: cannot create %s\n", cmd, parent);
		}
	}
	return dir;
}
