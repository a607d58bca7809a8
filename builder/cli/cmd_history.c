/* `zbench history`: a results history in SQLite (docs/history.md). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "core/util.h"
#include "report/history.h"

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: zbench history add [--db FILE] RUNDIR...\n"
	       "       zbench history show [--db FILE] --metric M [--cell ID] [-o DIR]\n"
	       "\n"
	       "A results history in an SQLite file (default " HISTORY_DEFAULT_DB ").\n"
	       "  add    record each run directory's ok results (timing and count metrics) in one\n"
	       "         transaction per run; a run already there, still running, or not\n"
	       "         written by zbench is refused\n"
	       "  show   print metric M per run over time, per cell (and phase and side), with\n"
	       "         a change point when one is found; with -o, DIR/history.html plots it\n"
	       "\n"
	       "  --db FILE     the history (created by add if missing)\n"
	       "  --metric M    a timing metric (docs/reports.md) or count (docs/compare.md)\n"
	       "  --cell ID     one cell only\n"
	       "  -o DIR        write DIR/history.html\n"
	       "\n"
	       "Exit status: 0 done, 2 on errors (a file that is not our history, corrupt or\n"
	       "locked: nothing in it is changed). See docs/history.md.\n");
}

int cmd_history(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "metric", required_argument, NULL, 'm' },
		{ "cell", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *db = HISTORY_DEFAULT_DB, *metric = NULL, *cell = NULL, *outdir = NULL, *verb;
	struct zb_error err = { 0 };
	struct history h;
	int c, add, rc = 0;

	if (argc < 2 || (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	verb = argv[1];
	add = !strcmp(verb, "add");
	if (!add && strcmp(verb, "show")) {
		usage(stderr);
		return 2;
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			db = optarg;
			break;
		case 'm':
			metric = optarg;
			break;
		case 'c':
			cell = optarg;
			break;
		case 'o':
			outdir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (add ? optind >= argc || metric || cell || outdir : optind != argc || !metric) {
		usage(stderr);
		return 2;
	}
	if (history_open(&h, db, add, &err) < 0) {
		die_message(err.msg);
		return 2;
	}
	if (add) {
		for (int i = optind; i < argc && rc == 0; i++) {
			size_t rows;

			if (history_add(&h, argv[i], &rows, &err) < 0) {
				die_message(err.msg);
				rc = 2;
			} else {
				printf("%s: %zu results added to %s\n", argv[i], rows, db);
			}
		}
	} else {
		struct history_series *s;
		size_t n;

		if (history_series(&h, metric, cell, &s, &n, &err) < 0 ||
		    history_show(s, n, metric, stdout, outdir, &err) < 0) {
			die_message(err.msg);
			rc = 2;
		}
		if (rc == 0 || s)
			history_series_free(s, n);
	}
	history_close(&h);
	return rc;
}
