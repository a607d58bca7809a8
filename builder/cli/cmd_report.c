/* `zbench report`: render a run directory as Markdown, HTML and optionally JUnit XML. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "options.h"
#include "report/report.h"

/* What the command line sets. */
struct report_cli {
	const char *outdir, *junit, *phase;
	int json;
};

static const struct cli_option report_options[] = {
	CLI_OPT_STRING('o', "output", "DIR", struct report_cli, outdir,
		       "where to write the report"),
	CLI_OPT_STRING(0, "junit", "FILE", struct report_cli, junit,
		       "also write JUnit XML: one testcase per cell and per claim"),
	CLI_OPT_FLAG(0, "json", struct report_cli, json,
		     "also write DIR/report.json: cells, metrics and claims"),
	CLI_OPT_STRING(0, "phase", "NAME", struct report_cli, phase,
		       "a phased workload's phase NAME as each cell's result\n(default: its last "
		       "measured phase; docs/matrix.md)"),
};

static int report_main(void *ctx, int argc, char **argv);

const struct cli_command cmd_report_command = {
	.name = "report",
	.about = "Write DIR/report.md and DIR/report.html (self-contained, plots inline), the\n"
		 "plots as DIR/report-plots/*.svg and a page per cell under DIR/report-cells/,\n"
		 "from RUNDIR/manifest.json and cells.jsonl. DIR defaults to RUNDIR.",
	CLI_OPTIONS(report_options),
	.epilog = "Exit status: 0 if every cell ended ok and every claim of the matrix held, 1 if\n"
		  "not, 2 on errors.\n"
		  "See docs/reports.md.",
	CLI_ARGS("RUNDIR", 1, 1),
	.run = report_main,
};

static int report_main(void *ctx, int argc, char **argv)
{
	const struct report_cli *c = ctx;
	struct zb_error err = { 0 };
	struct report_run run;
	const char *outdir = c->outdir, *junit = c->junit;
	int flags = c->json ? REPORT_JSON : 0, rc;

	if (report_run_load_phase(argv[0], c->phase, &run, &err) < 0) {
		die_message(err.msg);
		return 2;
	}
	results_skipped_print(&run.skipped, stderr);
	if (!outdir)
		outdir = run.dir;
	if (report_write(&run, outdir, flags, &err) < 0 ||
	    (junit && report_write_junit(&run, junit, &err) < 0)) {
		die_message(err.msg);
		report_run_release(&run);
		return 2;
	}
	printf("%s/report.md\n%s/report.html\n", outdir, outdir);
	if (flags & REPORT_JSON)
		printf("%s/report.json\n", outdir);
	if (junit)
		printf("%s\n", junit);
	rc = report_run_all_ok(&run) && report_run_claims_held(&run) ? 0 : 1;
	report_run_release(&run);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	struct report_cli c = { 0 };

	return cli_run(&cmd_report_command, argc, argv, &c);
}
