/* usage.c — usage errors worded the same way by every subcommand (usage.h). */
#include "cli/usage.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int ng_usage_error(const char *cmd, int c, char **argv)
{
	/* optind has moved past the offending word (for a missing value, the
	 * option itself was the last word read). */
	const char *word = optind > 0 ? argv[optind - 1] : "";
	char name[64];
	if (!strncmp(word, "--", 2)) {
		/* "--x=1": name the option, not its value */
		size_t len = strcspn(word, "=");
		snprintf(name, sizeof name, "%.*s", (int)len, word);
	} else {
		snprintf(name, sizeof name, "-%c", optopt > 0 && optopt < 256 ? optopt : '?');
	}
	if (c == ':')
		fprintf(stderr, "nagare %s: option '%s' needs a value", cmd, name);
	else
		fprintf(stderr, "nagare %s: unknown option '%s'", cmd, name);
	fprintf(stderr, "; see 'nagare %s --help'\n", cmd);
	return 2;
}

int ng_usage_fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "nagare %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see 'nagare %s --help'\n", cmd);
	return 2;
}
