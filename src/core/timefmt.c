/* timefmt.c — time formatting and parsing (see timefmt.h). */
#include "core/timefmt.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t ng_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

char *ng_time_format(uint64_t ms, char *buf)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&s, &tm);
	size_t n = strftime(buf, 24, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, 32 - n, ".%03uZ", (unsigned)(ms % 1000));
	return buf;
}

static bool parse_relative(const char *s, uint64_t now_ms, uint64_t *out)
{
	char *end;
	double v = strtod(s + 1, &end);
	if (end == s + 1 || v < 0)
		return false;
	double mult;
	if (!strcmp(end, "s") || !*end)
		mult = 1e3;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mult = 60e3;
	else if (!strcmp(end, "h"))
		mult = 3600e3;
	else if (!strcmp(end, "d"))
		mult = 86400e3;
	else if (!strcmp(end, "w"))
		mult = 7 * 86400e3;
	else
		return false;
	uint64_t d = (uint64_t)(v * mult);
	*out = d > now_ms ? 0 : now_ms - d;
	return true;
}

bool ng_time_parse(const char *s, uint64_t now_ms, uint64_t *out)
{
	if (!*s)
		return false;
	if (!strcmp(s, "now")) {
		*out = now_ms;
		return true;
	}
	if (s[0] == '-')
		return parse_relative(s, now_ms, out);
	bool digits = true;
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p))
			digits = false;
	if (digits) {
		*out = strtoull(s, NULL, 10) * 1000;
		return true;
	}
	struct tm tm = {0};
	unsigned ms = 0;
	int consumed = 0;
	int sec = 0;
	if (sscanf(s, "%d-%d-%d%*1[T ]%d:%d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
	           &tm.tm_min, &consumed) == 5 ||
	    sscanf(s, "%d/%d/%d.%d:%d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
	           &tm.tm_min, &consumed) == 5) {
		const char *p = s + consumed;
		if (*p == ':') {
			int n = 0;
			if (sscanf(p, ":%d%n", &sec, &n) != 1)
				return false;
			p += n;
			if (*p == '.') {
				int digits_n = 0;
				p++;
				while (isdigit((unsigned char)*p)) {
					if (digits_n < 3)
						ms = ms * 10 + (unsigned)(*p - '0');
					digits_n++;
					p++;
				}
				while (digits_n++ < 3)
					ms *= 10;
			}
		}
		if (*p == 'Z')
			p++;
		if (*p)
			return false;
		tm.tm_sec = sec;
	} else if (sscanf(s, "%d-%d-%d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &consumed) == 3 &&
	           !s[consumed]) {
		/* a date alone: midnight UTC */
	} else {
		return false;
	}
	if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	if (t < 0)
		return false;
	*out = (uint64_t)t * 1000 + ms;
	return true;
}

bool ng_parse_duration_ms(const char *s, uint64_t *ms)
{
	static const char units[] = "smhdw";
	static const uint64_t mult[] = {1000, 60000, 3600000, 86400000, 604800000};
	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	const char *u = *end ? strchr(units, tolower((unsigned char)*end)) : NULL;
	if (errno || !u || end[1])
		return false;
	uint64_t m = mult[u - units];
	if (v > UINT64_MAX / m)
		return false;
	*ms = (uint64_t)v * m;
	return true;
}
