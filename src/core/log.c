/* log.c — leveled logging (see log.h). */
#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

enum ng_log_level ng_log_level = NG_LOG_INFO;

void ng_log(enum ng_log_level lvl, const char *fmt, ...)
{
	static const char *names[] = {"error", "warn", "info", "debug"};
	if (lvl > ng_log_level)
		return;
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
	va_list ap;
	va_start(ap, fmt);
	flockfile(stderr);
	fprintf(stderr, "%s nagare %s: ", ts, names[lvl]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
	va_end(ap);
}
