/* `zbench report`: render a run directory as Markdown, HTML and optionally JUnit XML. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "report/report.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: zbench report [-o DIR] [--junit FILE] [--json] [--phase NAME] RUNDIR\n"
		"\n"
		"Write DIR/report.md and DIR/report.html (self-contained, plots inline), the\n"
		"plots as DIR/report-plots/*.svg and a page per cell under DIR/report-cells/,\n"
		"from RUNDIR/manifest.json and cells.jsonl. DIR defaults to RUNDIR.\n"
		"\n"
		"  -o, --output DIR   where to write the report\n"
		"  --junit FILE       also write JUnit XML: one testcase per cell and per claim\n"
		"  --json             also write DIR/report.json: cells, metrics and claims\n"
		"  --phase NAME       a phased workload's phase NAME as each cell's result\n"
		"                     (default: its last measured phase; docs/matrix.md)\n"
		"\n"
		"Exit status: 0 if every cell ended ok and every claim of the matrix held, 1 if\n"
		"not, 2 on errors.\n"
		"See docs/reports.md.\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "junit", required_argument, NULL, 'j' },
		{ "json", no_argument, NULL, 'J' },
		{ "phase", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *outdir = NULL, *junit = NULL, *phase = NULL;
	struct zb_error err = { 0 };
	struct report_run run;
	int c, rc, flags = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			outdir = optarg;
			break;
		case 'j':
			junit = optarg;
			break;
		case 'J':
			flags |= REPORT_JSON;
			break;
		case 'p':
			phase = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 1) {
		usage(stderr);
		return 2;
	}
	if (report_run_load_phase(argv[optind], phase, &run, &err) < 0) {
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
