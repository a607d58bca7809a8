/* `zbench export`: a run's results for other tools: fio JSON and logs, CSV, JSON. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "options.h"
#include "report/export.h"

/* What the command line sets. */
struct export_cli {
	const char *format, *outdir;
};

/* The formats, in enum export_format's order. */
#define EXPORT_CHOICES "fio|csv|json|bmf|gab"

static const struct cli_option export_options[] = {
	{ CLI_ROW_CHOICE('f', "format", "F", EXPORT_CHOICES, struct export_cli, format,
			 "what to write (above)"),
	  .required = 1 },
	CLI_OPT_STRING('o', "output", "DIR", struct export_cli, outdir,
		       "where to write (created if missing)"),
};

static int export_main(void *ctx, int argc, char **argv);

const struct cli_command cmd_export_command = {
	.name = "export",
	.about = "Write the results of RUNDIR's ok cells into DIR (default RUNDIR/export):\n"
		 "  fio   per cell, phase and repeat a fio JSON file with one job (its I/O, its\n"
		 "        latencies and clat_ns.bins merged over the threads, complete \"job\n"
		 "        options\"), named DIR/GROUP/<rw>-<iodepth>-<numjobs>.json as fio-plot\n"
		 "        reads them, with <rw>-<iodepth>-<numjobs>_iops.log and _bw.log from\n"
		 "        the per-second samples (fio2gnuplot); cells that differ only in rw,\n"
		 "        iodepth and numjobs share GROUP\n"
		 "  csv   DIR/cells.csv: one row per cell, repeat, phase and metric\n"
		 "  json  DIR/cells.json: the same rows as JSON\n"
		 "  bmf   DIR/bmf.json: Bencher's metric format, a benchmark per cell (mean,\n"
		 "        lowest and highest repeat of each metric)\n"
		 "  gab   DIR/gab-bigger.json and DIR/gab-smaller.json: github-action-benchmark's\n"
		 "        customBiggerIsBetter and customSmallerIsBetter",
	CLI_OPTIONS(export_options),
	.epilog = "Exit status: 0 written, 2 on errors. See docs/export.md.",
	CLI_ARGS("RUNDIR", 1, 1),
	.run = export_main,
};

static int export_main(void *ctx, int argc, char **argv)
{
	const struct export_cli *c = ctx;
	struct zb_error err = { 0 };
	enum export_format fmt = (enum export_format)cli_choice_index(EXPORT_CHOICES, c->format);
	size_t units;
	const char *outdir = c->outdir;

	if (export_run(argv[0], fmt, outdir, stderr, &units, &err) < 0) {
		die_message(err.msg);
		return 2;
	}
	if (outdir)
		printf("%s: %zu result%s\n", outdir, units, units == 1 ? "" : "s");
	else
		printf("%s/export: %zu result%s\n", argv[0], units, units == 1 ? "" : "s");
	return 0;
}

int cmd_export(int argc, char **argv)
{
	struct export_cli c = { 0 };

	return cli_run(&cmd_export_command, argc, argv, &c);
}
