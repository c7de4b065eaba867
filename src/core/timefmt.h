/*
 * timefmt.h — times as nagare prints and parses them.
 */
#ifndef NG_TIMEFMT_H
#define NG_TIMEFMT_H

#include <stdbool.h>
#include <stdint.h>

/* Current wall-clock time, ms since the epoch. */
uint64_t ng_now_ms(void);

/* Formats ms since the epoch as RFC 3339 UTC with milliseconds,
 * "2026-11-30T12:00:00.123Z", into buf (at least 32 bytes). Returns buf. */
char *ng_time_format(uint64_t ms, char *buf);

/* Parses a time for --from/--to: RFC 3339 / "YYYY-MM-DD[ T]HH:MM[:SS[.mmm]][Z]"
 * (UTC), "YYYY/MM/DD.HH:MM:SS" (nfdump), seconds since the epoch, "now", or a
 * relative "-90s", "-15m", "-1h", "-2d" before `now_ms`.
 * Returns false when `s` is none of these. */
bool ng_time_parse(const char *s, uint64_t now_ms, uint64_t *out_ms);

/* Parses a duration for an option (--retention, --settle): decimal digits
 * and one unit letter, s m h d or w (either case), "30d", "12h", "90m",
 * "45s", "2w", into *ms.  Returns false, *ms untouched, without a unit,
 * with anything after it, or when the value does not fit 64 bits of ms.
 * "0s" is 0: callers that need a positive age check. */
bool ng_parse_duration_ms(const char *s, uint64_t *ms);

#endif
