/*
 * e2e_util.h — helpers shared by the test programs that run nagare (or its
 * collector) as a process, send it datagrams on loopback, and read what it
 * wrote: tests/e2e/test_*.c and the unit tests test_collector_run.c and
 * test_query_damage.c.  Built once as the library ng_e2e_util
 * (CMakeLists.txt) and linked by each of them.
 *
 * Failures are cmocka failures (assert_*, skip()): call these only from
 * inside a cmocka test.  Addresses are 127.0.0.1 (IPv4 loopback) only.
 */
#ifndef NG_E2E_UTIL_H
#define NG_E2E_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/flow.h"

/* Sleeps `ms` milliseconds (nanosleep; an interrupted sleep ends early). */
void eu_sleep_ms(long ms);

/* Removes `dir` and everything under it (nftw, not following links);
 * errors are ignored, a missing dir is no error. */
void eu_rm_rf(const char *dir);

/* $NG_BIN (the nagare binary); skips the test when it is not set or not
 * executable. */
const char *eu_bin_or_skip(void);

/* A free port on 127.0.0.1 for sockets of `type` (SOCK_DGRAM or
 * SOCK_STREAM): port 0 bound, read back and released.  Host order. */
uint16_t eu_free_port(int type);

/* Sends `len` bytes as one UDP datagram to 127.0.0.1:`port` (host order)
 * from the IPv4 address `src` (host order; 0: the kernel's choice, any
 * other is bound first, e.g. 127.a.b.c).  Fails the test when the bind or
 * the send does. */
void eu_send_udp(uint32_t src, uint16_t port, const void *p, size_t len);

/* The contents of the file `path`, NUL-terminated, in a static buffer of
 * 1 MiB (a longer file is cut) that the next call overwrites; its length
 * into *len when len is not NULL.  NULL when it cannot be opened. */
char *eu_slurp(const char *path, size_t *len);

/* Waits up to `ms` milliseconds, looking every 50 ms, for the file `log`
 * to contain `what`; false on timeout or when the child `pid` has exited
 * (reaped here). */
bool eu_wait_log(const char *log, pid_t pid, const char *what, int ms);

/* Forks and runs argv[0] with argv (NULL-terminated), its stdout and
 * stderr into the file `log` (created or truncated, 0644).  Returns the
 * child's pid; exit status 127 when the exec fails. */
pid_t eu_spawn(const char *log, char *const argv[]);

/* SIGTERM to `pid`, then waits for it: its exit status, or -1 when it
 * did not exit (killed by a signal). */
int eu_stop(pid_t pid);

/* Runs the shell command `cmd` (popen: add 2>&1 for stderr too), its
 * output into out[len] (cut at len - 1 bytes, NUL-terminated).  Returns
 * its exit status. */
int eu_run(const char *cmd, char *out, size_t len);

/* Regular files under `dir` whose name ends in `suffix` (nftw, not
 * following links); 0 when dir is missing. */
size_t eu_count_suffix(const char *dir, const char *suffix);

/* The path of the n-th (from 0, by name) file under dir matching the
 * shell pattern (find -name) into path[len]; fails the test when there
 * are not that many. */
void eu_nth_file(const char *dir, const char *pattern, size_t n, char *path, size_t len);

/* What the `checked` file beside segment `path` (its hour's verdicts,
 * store/verdict.c) says of the file as it is now: "ok", "damaged", or ""
 * when no line names this version of it (the last line of its name wins;
 * one of another inode, size or mtime is not of it, nor is any when the
 * segment is gone).  *lines, when not NULL: the lines naming it. */
const char *eu_verdict(const char *path, int *lines);

/* Row k of the damaged-data tests' stores (test_query_damage.c,
 * test_damaged_cli.c): flow_start from 2025-11-30T00:00:00Z, 10 ms
 * apart; varied addresses (10.0.x.y to 192.0.x.y), ports, protocols,
 * TCP flags and counters, all from k; sampling rate 1. */
void eu_damage_row(ng_flow *r, size_t k);

#endif
