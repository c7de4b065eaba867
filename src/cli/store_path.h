/*
 * store_path.h — which flow store a command uses when --store is not given.
 *
 * One rule for every subcommand (docs/cli.md, "The default store"):
 *   1. --store DIR (or, for collect, collect.store in the configuration);
 *   2. $NAGARE_STORE;
 *   3. /var/lib/nagare, the service's store (the package's unit,
 *      StateDirectory=nagare), when it is there and usable by this user:
 *      writable for `collect`, its flows/ readable for the readers;
 *   4. the per-user data directory, $XDG_DATA_HOME/nagare, else
 *      ~/.local/share/nagare (XDG Base Directory spec).
 * The choice and why are printed on stderr, so that a newcomer who typed
 * only `nagare collect` or `nagare query -s srcip` sees where the flows
 * are.
 */
#ifndef NG_CLI_STORE_PATH_H
#define NG_CLI_STORE_PATH_H

#include <stdbool.h>
#include <stddef.h>

/* The service's store (StateDirectory=nagare). */
#define NG_SERVICE_STORE "/var/lib/nagare"

/*
 * The store `cmd` ("query", "collect", ...) uses: `given` when not NULL
 * (returned as it is, nothing printed), else rules 2-4 above, written into
 * buf (len bytes; 4096 is enough for any path) and printed as
 *   nagare CMD: store DIR (default: REASON)
 * on stderr.  `write`: the command writes the store (collect), so rule 3
 * needs /var/lib/nagare writable, and rule 4 creates the per-user
 * directory's parents (mode 0755).  Returns given, buf, or NULL when no
 * rule applies (no HOME, or a path longer than len), with a message
 * printed.  Reads the environment; not thread-safe (getenv).
 */
const char *ng_cli_store(const char *cmd, const char *given, bool write, char *buf, size_t len);

/* Rules 2-4 as a test sees them, with the service directory `service`
 * (NG_SERVICE_STORE in the program).  *why gets a static string naming
 * the rule.  Returns buf, or NULL.  Prints nothing. */
const char *ng_cli_store_default(const char *service, bool write, char *buf, size_t len,
                                 const char **why);

#endif
