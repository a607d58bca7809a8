/* `zbench compare`: two run directories, cell by cell. */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "compare.h"
#include "compare_sides.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: zbench compare [-o DIR] RUN_A RUN_B\n"
		   "       zbench compare [-o DIR] RUNDIR\n"
		   "\n"
		   "Match the cells of two run directories by their configuration (the image left\n"
		   "out), and write DIR/compare.md and DIR/compare.html: per cell and metric the\n"
		   "change from A to B in %%, Welch's t-test over the repeats, and plots of the\n"
		   "%% change against the matrix's first axis. DIR defaults to RUN_B.\n"
		   "With one RUNDIR, a run of several images (zbench run -i A -i B): its image\n"
		   "A against its image B, each record on the side it names; DIR defaults to\n"
		   "RUNDIR.\n"
		   "\n"
		   "  -o, --output DIR   where to write the comparison\n"
		   "\n"
		   "Exit status: 0 on success, 2 on errors (including two runs with no cell in\n"
		   "common). See docs/reports.md.\n");
}

int cmd_compare(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *outdir = NULL;
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
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2 && argc - optind != 1) {
		usage(stderr);
		return 2;
	}
	if (argc - optind == 1) {
		if (compare_sides_load(argv[optind], "A", "B", &a, &b, &err) < 0) {
			die_message(err.msg);
			return 2;
		}
		if (!outdir)
			outdir = argv[optind];
	} else if (report_run_load(argv[optind], &a, &err) < 0) {
		die_message(err.msg);
		return 2;
	} else if (report_run_load(argv[optind + 1], &b, &err) < 0) {
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
