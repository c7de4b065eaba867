/* query.c — `nagare query` (stub while the query engine is written). */
#include <stdio.h>

#include "cli/cli.h"

int ng_cmd_query(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "nagare query: not implemented yet\n");
	return 1;
}
