/*
 * log.h — leveled logging to stderr with a UTC timestamp.
 */
#ifndef NG_LOG_H
#define NG_LOG_H

enum ng_log_level { NG_LOG_ERROR, NG_LOG_WARN, NG_LOG_INFO, NG_LOG_DEBUG };

/* Messages above this level are dropped; default NG_LOG_INFO. */
extern enum ng_log_level ng_log_level;

void ng_log(enum ng_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define ng_error(...) ng_log(NG_LOG_ERROR, __VA_ARGS__)
#define ng_warn(...) ng_log(NG_LOG_WARN, __VA_ARGS__)
#define ng_info(...) ng_log(NG_LOG_INFO, __VA_ARGS__)
#define ng_debug(...) ng_log(NG_LOG_DEBUG, __VA_ARGS__)

#endif
