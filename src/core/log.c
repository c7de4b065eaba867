/* log.c — leveled logging (see log.h).
 *
 * Under systemd, stderr is a stream to journald and the environment says
 * so: JOURNAL_STREAM is "DEVICE:INODE" of that stream (systemd.exec(5)).
 * When stderr is that very stream (not redirected since), each line goes
 * out as "<N>message": journald reads the <N> prefix as the syslog
 * priority (sd-daemon(3): 3 err, 4 warning, 6 info, 7 debug) and stamps
 * the time itself, so `journalctl -p warning -u nagare` shows the
 * warnings.  Otherwise a line is "TIME nagare LEVEL: message".
 */
#include "core/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

enum ng_log_level ng_log_level = NG_LOG_INFO;

static pthread_once_t journal_once = PTHREAD_ONCE_INIT;
static int to_journal;

static void journal_check(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	to_journal = js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
	             (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

bool ng_log_to_journal(void)
{
	pthread_once(&journal_once, journal_check);
	return to_journal;
}

void ng_log(enum ng_log_level lvl, const char *fmt, ...)
{
	static const char *names[] = {"error", "warn", "info", "debug"};
	static const char prio[] = {'3', '4', '6', '7'};
	if (lvl > ng_log_level)
		return;
	bool journal = ng_log_to_journal();
	char ts[32] = "";
	if (!journal) {
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	va_list ap;
	va_start(ap, fmt);
	flockfile(stderr);
	if (journal)
		fprintf(stderr, "<%c>%s: ", prio[lvl], names[lvl]);
	else
		fprintf(stderr, "%s nagare %s: ", ts, names[lvl]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
	va_end(ap);
}
