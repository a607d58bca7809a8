/* zbench: the host program. Dispatches to one subcommand per file (builder/cmd_*.c). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "version.h"

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "run", cmd_run, "run a matrix: one fresh VM per cell, results in a run directory" },
	{ "replay", cmd_replay, "run again what a run's manifest.json recorded, into a new run" },
	{ "merge", cmd_merge, "join the shards of a run (run --shard I/N) into one run directory" },
	{ "image", cmd_image, "build, locate or list guest appliance images (cached)" },
	{ "matrix", cmd_matrix, "check a matrix file and list the cells it expands to" },
	{ "doctor", cmd_doctor, "say what this host has and lacks for zbench" },
	{ "report", cmd_report, "render a run directory: Markdown, HTML with plots, JUnit" },
	{ "compare", cmd_compare, "compare two runs cell by cell: % change, significance" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: zbench <command> [options]\n"
		   "       zbench -V|--version\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
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
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "zbench: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
