/* `zbench compare`: two run directories, cell by cell; paired statistics and gates. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "core/util.h"
#include "report/compare.h"
#include "report/compare_sides.h"

#define COMPARE_GATES_MAX 32
/* docs/errors.md: a gate of `compare --fail-if` failed (or could not be judged). */
#define EXIT_GATE_FAILED 3

static void usage(FILE *f)
{
	fprintf(f,
		"usage: zbench compare [-o DIR] [--fail-if 'METRIC < -N%%']... [--json]\n"
		"                      [--junit FILE] [--summary FILE] [--phase NAME] RUN_A RUN_B\n"
		"       zbench compare [OPTIONS] RUNDIR\n"
		"\n"
		"Match the cells of two run directories by their configuration (the image left\n"
		"out), and write DIR/compare.md and DIR/compare.html: per cell and metric the\n"
		"change from A to B in %%, Welch's t-test over the repeats, the repeats paired\n"
		"by number (geometric mean of B/A, its 95%% CI, a paired t-test on the log\n"
		"ratios, Holm-adjusted), and plots of the %% change against the matrix's first\n"
		"axis. DIR defaults to RUN_B. With one RUNDIR, a run of several images (zbench\n"
		"run -i A -i B): its image A against its image B, each record on the side it\n"
		"names; DIR defaults to RUNDIR.\n"
		"\n"
		"  -o, --output DIR       where to write the comparison\n"
		"  --fail-if 'M < -5%%'    fail (exit 3) when metric M (docs/reports.md) changed\n"
		"                         significantly and beyond the threshold ('<' or '>');\n"
		"                         repeatable; every gate must be judged in some cell\n"
		"  --json                 print the analysis as JSON on stdout\n"
		"  --junit FILE           JUnit XML: a testcase per gate and cell\n"
		"  --summary FILE         a Markdown summary for a CI job ($GITHUB_STEP_SUMMARY)\n"
		"  --phase NAME           a phased workload's phase NAME as each cell's result\n"
		"                         (default: its last measured phase; docs/matrix.md)\n"
		"\n"
		"Exit status: 0 on success, 3 when a gate failed, 2 on errors (including two\n"
		"runs with no cell in common). See docs/compare.md.\n");
}

struct compare_opts {
	const char *outdir, *junit, *summary, *phase;
	int json;
	struct compare_gate gates[COMPARE_GATES_MAX];
	size_t n_gates;
};

/* 0, 1 for --help, or 2 (usage printed or an error said). */
static int parse(int argc, char **argv, struct compare_opts *o)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "fail-if", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "junit", required_argument, NULL, 'u' },
		{ "summary", required_argument, NULL, 's' },
		{ "phase", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct zb_error err = { 0 };
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->outdir = optarg;
			break;
		case 'f':
			if (o->n_gates == COMPARE_GATES_MAX) {
				die_message("too many --fail-if gates");
				return 2;
			}
			if (compare_gate_parse(optarg, &o->gates[o->n_gates], &err) < 0) {
				die_message(err.msg);
				return 2;
			}
			o->n_gates++;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'u':
			o->junit = optarg;
			break;
		case 's':
			o->summary = optarg;
			break;
		case 'p':
			o->phase = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2 && argc - optind != 1) {
		usage(stderr);
		return 2;
	}
	return 0;
}

/* compare.md and .html, then the machine outputs. */
static int outputs(const struct compare *cmp, const struct compare_opts *o, struct zb_error *err)
{
	char *doc;
	size_t len;
	int rc;

	if (compare_write(cmp, o->outdir, err) < 0)
		return -1;
	if (o->junit) {
		doc = compare_junit(cmp, &len);
		rc = write_file_atomic(o->junit, doc, len, 0644, err);
		free(doc);
		if (rc < 0)
			return error_wrap(err, "writing JUnit XML");
	}
	if (o->summary) {
		doc = compare_summary(cmp, &len);
		rc = write_file_atomic(o->summary, doc, len, 0644, err);
		free(doc);
		if (rc < 0)
			return error_wrap(err, "writing the summary");
	}
	if (o->json) {
		doc = compare_json(cmp);
		printf("%s\n", doc);
		fflush(stdout); /* before the verdict on stderr */
		free(doc);
	} else {
		printf("%s/compare.md\n%s/compare.html\n", o->outdir, o->outdir);
	}
	return 0;
}

int cmd_compare(int argc, char **argv)
{
	struct compare_opts o = { 0 };
	struct zb_error err = { 0 };
	struct report_run a, b;
	struct compare cmp = { 0 };
	int rc = parse(argc, argv, &o);

	if (rc)
		goto out;
	if (argc - optind == 1) { /* one run of several images: its side A against side B */
		if (o.phase) {
			die_message(
			    "--phase with one RUNDIR: not supported yet; compare the sides' "
			    "phases in two runs");
			rc = 2;
			goto out;
		}
		if (compare_sides_load(argv[optind], "A", "B", &a, &b, &err) < 0) {
			die_message(err.msg);
			rc = 2;
			goto out;
		}
		if (!o.outdir)
			o.outdir = argv[optind];
	} else if (report_run_load_phase(argv[optind], o.phase, &a, &err) < 0) {
		die_message(err.msg);
		rc = 2;
		goto out;
	} else if (report_run_load_phase(argv[optind + 1], o.phase, &b, &err) < 0) {
		die_message(err.msg);
		report_run_release(&a);
		rc = 2;
		goto out;
	}
	results_skipped_print(&a.skipped, stderr);
	results_skipped_print(&b.skipped, stderr);
	if (!o.outdir)
		o.outdir = b.dir;
	if (compare_runs(&a, &b, &cmp, &err) < 0) {
		die_message(err.msg);
		rc = 2;
	} else {
		compare_analyse(&cmp, o.gates, o.n_gates);
		if (outputs(&cmp, &o, &err) < 0) {
			die_message(err.msg);
			rc = 2;
		} else if (!compare_gates_passed(&cmp)) {
			fprintf(
			    stderr,
			    "zbench: compare: %zu gated change(s) failed, %zu gate(s) not judged\n",
			    cmp.an.n_gate_failed, cmp.an.n_gate_untested);
			rc = EXIT_GATE_FAILED;
		}
	}
	compare_release(&cmp);
	report_run_release(&a);
	report_run_release(&b);
out:
	for (size_t i = 0; i < o.n_gates; i++)
		compare_gate_release(&o.gates[i]);
	return rc == 1 ? 0 : rc;
}
