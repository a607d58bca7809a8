/* `zbench history`: a results history in SQLite (docs/history.md). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "core/util.h"
#include "options.h"
#include "report/history.h"

/* What the command line sets. */
struct history_cli {
	const char *db, *metric, *cell, *outdir;
	struct history h;
};

/* The history of --db, opened (created by add): 0, or 2 (said). */
static int history_cli_open(struct history_cli *c, int create)
{
	struct zb_error err = { 0 };

	if (history_open(&c->h, c->db, create, &err) < 0) {
		die_message(err.msg);
		return 2;
	}
	return 0;
}

static int history_add_cmd(void *ctx, int argc, char **argv)
{
	struct history_cli *c = ctx;
	struct zb_error err = { 0 };
	int rc = history_cli_open(c, 1);

	if (rc)
		return rc;
	for (int i = 0; i < argc && rc == 0; i++) {
		size_t rows;

		if (history_add(&c->h, argv[i], &rows, &err) < 0) {
			die_message(err.msg);
			rc = 2;
		} else {
			printf("%s: %zu results added to %s\n", argv[i], rows, c->db);
		}
	}
	history_close(&c->h);
	return rc;
}

static int history_show_cmd(void *ctx, int argc, char **argv)
{
	struct history_cli *c = ctx;
	struct zb_error err = { 0 };
	struct history_series *s;
	size_t n;
	int rc = history_cli_open(c, 0);

	if (rc)
		return rc;
	if (history_series(&c->h, c->metric, c->cell, &s, &n, &err) < 0 ||
	    history_show(s, n, c->metric, stdout, c->outdir, &err) < 0) {
		die_message(err.msg);
		rc = 2;
	}
	if (rc == 0 || s)
		history_series_free(s, n);
	history_close(&c->h);
	return rc;
}

static const struct cli_sub history_subs[] = {
	{ .name = "add",
	  .args = "RUNDIR...",
	  .help = "record each run directory's ok results (timing and count metrics) in one\n"
		  "transaction per run; a run already there, still running, or not\n"
		  "written by zbench is refused",
	  .min_args = 1,
	  .max_args = -1,
	  .run = history_add_cmd },
	{ .name = "show",
	  .help = "print metric M per run over time, per cell (and phase and side), with\n"
		  "a change point when one is found; with -o, DIR/history.html plots it",
	  .run = history_show_cmd },
};

static const struct cli_option history_options[] = {
	CLI_OPT_STRING(0, "db", "FILE", struct history_cli, db,
		       "the history (created by add if missing)"),
	{ CLI_ROW_STRING(0, "metric", "M", struct history_cli, metric,
			 "a timing metric (docs/reports.md) or count\n(docs/compare.md)"),
	  .required = 1, .subs = "show" },
	{ CLI_ROW_STRING(0, "cell", "ID", struct history_cli, cell, "one cell only"),
	  .subs = "show" },
	{ CLI_ROW_STRING('o', "output", "DIR", struct history_cli, outdir,
			 "write DIR/history.html"),
	  .subs = "show" },
};

const struct cli_command cmd_history_command = {
	.name = "history",
	.about = "A results history in an SQLite file (default " HISTORY_DEFAULT_DB ").",
	CLI_SUBS(history_subs),
	CLI_OPTIONS(history_options),
	.epilog = "Exit status: 0 done, 2 on errors (a file that is not our history, corrupt or\n"
		  "locked: nothing in it is changed). See docs/history.md.",
};

int cmd_history(int argc, char **argv)
{
	struct history_cli c = { .db = HISTORY_DEFAULT_DB };

	return cli_run(&cmd_history_command, argc, argv, &c);
}
