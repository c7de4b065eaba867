/* collect.c — stub while being written. */
#include <stdio.h>

#include "cli/cli.h"

int ng_cmd_collect(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "nagare collect: not implemented yet\n");
	return 1;
}
