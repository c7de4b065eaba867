/*
 * usage.h — the shared wording of subcommand usage errors.
 */
#ifndef NG_CLI_USAGE_H
#define NG_CLI_USAGE_H

/*
 * Reports what getopt_long (run with a leading ':' in its optstring and
 * opterr = 0) objected to — an unknown option or a missing argument — as
 *   nagare CMD: unknown option '--x'; see 'nagare CMD --help'
 * on stderr.  `c` is getopt_long's return ('?' or ':'), argv the argument
 * vector it scanned.  Returns 2, the usage-error exit status.
 */
int ng_usage_error(const char *cmd, int c, char **argv);

/* Prints "nagare CMD: MESSAGE; see 'nagare CMD --help'" and returns 2. */
int ng_usage_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
