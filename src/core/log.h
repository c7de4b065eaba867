/*
 * log.h — leveled logging to stderr with a UTC timestamp, or, when stderr
 * is systemd's journal stream, with the journal's priority prefix (log.c).
 */
#ifndef NG_LOG_H
#define NG_LOG_H

#include <stdbool.h>

enum ng_log_level { NG_LOG_ERROR, NG_LOG_WARN, NG_LOG_INFO, NG_LOG_DEBUG };

/* Messages above this level are dropped; default NG_LOG_INFO. */
extern enum ng_log_level ng_log_level;

/* Whether stderr is journald's stream ($JOURNAL_STREAM names stderr's
 * device and inode), checked once.  Thread-safe. */
bool ng_log_to_journal(void);

/* One line on stderr: "TIME nagare LEVEL: MESSAGE", or "<N>LEVEL: MESSAGE"
 * to the journal (N the syslog priority).  Thread-safe (one line a call). */
void ng_log(enum ng_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define ng_error(...) ng_log(NG_LOG_ERROR, __VA_ARGS__)
#define ng_warn(...) ng_log(NG_LOG_WARN, __VA_ARGS__)
#define ng_info(...) ng_log(NG_LOG_INFO, __VA_ARGS__)
#define ng_debug(...) ng_log(NG_LOG_DEBUG, __VA_ARGS__)

#endif
