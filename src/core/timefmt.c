/* timefmt.c — time formatting and parsing (see timefmt.h). */
#include "core/timefmt.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
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

/* "-90s", "-1.5h": now minus that much, 0 when it reaches before the epoch.
 * The number is a plain decimal after the '-': no blank, sign, "inf", "nan"
 * or hexadecimal, which strtod would also take. */
static bool parse_relative(const char *s, uint64_t now_ms, uint64_t *out)
{
	if (!isdigit((unsigned char)s[1]))
		return false;
	char *end;
	double v = strtod(s + 1, &end);
	if (end == s + 1 || !isfinite(v) || v < 0 || strpbrk(s + 1, "xXpP"))
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
	/* a span of 2^64 ms or more is before the epoch: converting it to an
	 * integer would be undefined */
	double d = v * mult;
	*out = d >= (double)now_ms ? 0 : now_ms - (uint64_t)d;
	return true;
}

/* Days in month `mon` (1..12) of year `y` (Gregorian: RFC 3339 Appendix C). */
static int days_in_month(int y, int mon)
{
	static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return mon == 2 && leap ? 29 : days[mon - 1];
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
		errno = 0;
		unsigned long long v = strtoull(s, NULL, 10);
		if (errno == ERANGE || v > UINT64_MAX / 1000)
			return false; /* no time nagare stores (ms in 64 bits) */
		*out = (uint64_t)v * 1000;
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
				if (!digits_n)
					return false; /* "12:00:05." */
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
	/* RFC 3339 §5.7: each field in its range, the day in its month (timegm
	 * would move 2026-02-30 to March 2 without a word); a second of 60 is
	 * a leap second, read as the next minute's first */
	if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > days_in_month(tm.tm_year, tm.tm_mon) || tm.tm_hour < 0 ||
	    tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 || tm.tm_sec > 60)
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
