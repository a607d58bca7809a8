/* `zbench export`: a run's results for other tools: fio JSON and logs, CSV, JSON. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "report/export.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: zbench export RUNDIR --format fio|csv|json|bmf|gab [-o DIR]\n"
		"\n"
		"Write the results of RUNDIR's ok cells into DIR (default RUNDIR/export):\n"
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
		"        customBiggerIsBetter and customSmallerIsBetter\n"
		"\n"
		"  -f, --format F   fio, csv, json, bmf or gab\n"
		"  -o, --output DIR where to write (created if missing)\n"
		"\n"
		"Exit status: 0 written, 2 on errors. See docs/export.md.\n");
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const names[] = { "fio", "csv", "json", "bmf", "gab" };
	const char *outdir = NULL, *format = NULL;
	struct zb_error err = { 0 };
	enum export_format fmt = EXPORT_FIO;
	size_t units;
	int c, known = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
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
	for (int i = 0; format && i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (!strcmp(format, names[i])) {
			fmt = (enum export_format)i;
			known = 1;
		}
	if (argc - optind != 1 || !known) {
		if (format && !known)
			fprintf(stderr,
				"zbench: --format '%s': expected fio, csv, json, bmf or gab\n",
				format);
		usage(stderr);
		return 2;
	}
	if (export_run(argv[optind], fmt, outdir, stderr, &units, &err) < 0) {
		die_message(err.msg);
		return 2;
	}
	if (outdir)
		printf("%s: %zu result%s\n", outdir, units, units == 1 ? "" : "s");
	else
		printf("%s/export: %zu result%s\n", argv[optind], units, units == 1 ? "" : "s");
	return 0;
}
