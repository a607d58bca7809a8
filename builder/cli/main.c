/* zbench: the host program. Dispatches to one subcommand per file (builder/cli/cmd_*.c). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "core/version.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: zbench <command> [options]\n"
		   "       zbench -V|--version\n\ncommands:\n");
	for (size_t i = 0; i < zb_n_commands; i++)
		fprintf(f, "  %-8s %s\n", zb_commands[i].name, zb_commands[i].summary);
	fprintf(f, "\n'zbench <command> --help' describes each command. Documentation: README.md, "
		   "docs/.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") ||
	    !strcmp(argv[1], "version")) {
		printf("zbench %s\n", ZBENCH_VERSION);
		return 0;
	}
	for (size_t i = 0; i < zb_n_commands; i++) {
		if (!strcmp(argv[1], zb_commands[i].name))
			return zb_commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "zbench: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
