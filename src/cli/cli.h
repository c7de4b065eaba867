/*
 * cli.h — the subcommands of the nagare command.
 *
 * Each takes argv with argv[0] = the subcommand's name and returns the
 * process exit status: 0 success, 1 runtime failure, 2 usage error.
 */
#ifndef NG_CLI_H
#define NG_CLI_H

#define NG_VERSION "0.1.0"

int ng_cmd_collect(int argc, char **argv);    /* src/cli/collect.c */
int ng_cmd_decode(int argc, char **argv);     /* src/cli/decode.c */
int ng_cmd_query(int argc, char **argv);      /* src/cli/query.c */
int ng_cmd_status(int argc, char **argv);     /* src/cli/status.c */
int ng_cmd_counters(int argc, char **argv);   /* src/cli/counters.c: sFlow counter samples */
int ng_cmd_serve(int argc, char **argv);      /* src/cli/serve.c: HTTP API and dashboards */
int ng_cmd_compact(int argc, char **argv);    /* src/cli/compact.c: store maintenance now */
int ng_cmd_fsck(int argc, char **argv);       /* src/cli/fsck.c: check a store, quarantine */
int ng_cmd_doctor(int argc, char **argv);     /* src/cli/doctor.c: check machine and store */
int ng_cmd_clickhouse(int argc, char **argv); /* src/cli/clickhouse.c: schema init */

#endif
