/* `zbench compare`: two run directories, cell by cell. */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "compare.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: zbench compare [-o DIR] [--phase NAME] RUN_A RUN_B\n"
		   "\n"
		   "Match the cells of two run directories by their configuration (the image left\n"
		   "out), and write DIR/compare.md and DIR/compare.html: per cell and metric the\n"
		   "change from A to B in %%, Welch's t-test over the repeats, and plots of the\n"
		   "%% change against the matrix's first axis. DIR defaults to RUN_B.\n"
		   "\n"
		   "  -o, --output DIR   where to write the comparison\n"
		   "  --phase NAME       a phased workload's phase NAME as each cell's result\n"
		   "                     (default: its last measured phase; docs/matrix.md)\n"
		   "\n"
		   "Exit status: 0 on success, 2 on errors (including two runs with no cell in\n"
		   "common). See docs/reports.md.\n");
}

int cmd_compare(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "phase", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *outdir = NULL, *phase = NULL;
	struct zb_error err = { 0 };
	struct report_run a, b;
	struct compare cmp;
	int c, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			outdir = optarg;
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
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	if (report_run_load_phase(argv[optind], phase, &a, &err) < 0) {
		die_message(err.msg);
		return 2;
	}
	if (report_run_load_phase(argv[optind + 1], phase, &b, &err) < 0) {
		die_message(err.msg);
		report_run_release(&a);
		return 2;
	}
	results_skipped_print(&a.skipped, stderr);
	results_skipped_print(&b.skipped, stderr);
	if (!outdir)
		outdir = b.dir;
	if (compare_runs(&a, &b, &cmp, &err) < 0 || compare_write(&cmp, outdir, &err) < 0) {
		die_message(err.msg);
		rc = 2;
	} else {
		printf("%s/compare.md\n%s/compare.html\n", outdir, outdir);
	}
	compare_release(&cmp);
	report_run_release(&a);
	report_run_release(&b);
	return rc;
}
