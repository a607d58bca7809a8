/* `zbench compare`: two run directories, cell by cell; paired statistics and gates. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "core/util.h"
#include "report/compare.h"
#include "report/compare_sides.h"
#include "report/compare_verdict.h"
#include "run/run.h"

#define COMPARE_GATES_MAX 32

static void usage(FILE *f)
{
	fprintf(f,
		"usage: zbench compare [-o DIR] [--fail-if 'METRIC < -N%%']... [--json]\n"
		"                      [--junit FILE] [--summary FILE] [--phase NAME]\n"
		"                      [--alpha P] [--noise N%%] [--tolerance N%%] [--seed N]\n"
		"                      RUN_A RUN_B\n"
		"       zbench compare --adaptive [--max-repeats N] [--max-minutes M] [OPTIONS]\n"
		"                      RUNDIR\n"
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
		"  --fail-if 'M < -5%%'    fail (exit 3) when metric M (a timing metric of\n"
		"                         docs/reports.md or a count of docs/compare.md) changed\n"
		"                         beyond the threshold ('<' or '>'): a count by its\n"
		"                         means, a timing metric by the permutation test;\n"
		"                         repeatable; undecided (exit 4) when no cell decides\n"
		"  --json                 print the analysis as JSON on stdout\n"
		"  --junit FILE           JUnit XML: a testcase per gate and cell\n"
		"  --summary FILE         a Markdown summary for a CI job ($GITHUB_STEP_SUMMARY)\n"
		"  --phase NAME           a phased workload's phase NAME as each cell's result\n"
		"                         (default: its last measured phase; docs/matrix.md)\n"
		"  --alpha P              the permutation test's level (default 0.05)\n"
		"  --noise N%%             a timing change within +-N%% is noise (default 5%%)\n"
		"  --tolerance N%%         a count change within +-N%% is the same (default 1%%)\n"
		"  --seed N               seed of the drawn sign flips (default 29)\n"
		"  --adaptive             (one RUNDIR of two images) add interleaved A/B repeats\n"
		"                         of the cells whose gates are undecided, a round at a\n"
		"                         time, until every gated cell has a verdict or a budget\n"
		"                         runs out; alpha is split among the rounds' looks\n"
		"                         (alpha / (max-repeats - 1)); boots VMs\n"
		"  --max-repeats N        the most repeats per cell and side (default 20)\n"
		"  --max-minutes M        start no round after M minutes (default 60)\n"
		"\n"
		"Exit status: 0 on success (every gate passed), 3 when a gate failed, 4 when no\n"
		"gate failed but one is undecided, 2 on errors (including two runs with no cell\n"
		"in common). See docs/compare.md.\n");
}

struct compare_opts {
	const char *outdir, *junit, *summary, *phase;
	int json, adaptive, max_repeats;
	double max_minutes;
	struct verdict_opts v;
	struct compare_gate gates[COMPARE_GATES_MAX];
	size_t n_gates;
};

/* A number option: --alpha in (0, 0.5), --noise and --tolerance as 'N%' >= 0, --seed,
 * --max-repeats >= 2, --max-minutes > 0. 0, or -1 (said). */
static int number_option(int c, const char *arg, struct compare_opts *o)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if ((c == 'N' || c == 'T') && *end == '%')
		end++;
	if (errno || end == arg || *end || !isfinite(v) || (c == 'A' && !(v > 0 && v < 0.5)) ||
	    ((c == 'N' || c == 'T') && v < 0) ||
	    ((c == 'S' || c == 'R') && (v != floor(v) || v < 0 || v > 1e9)) ||
	    (c == 'R' && v < 2) || (c == 'M' && !(v > 0))) {
		fprintf(stderr, "zbench: compare: bad value '%s' for --%s\n", arg,
			c == 'A'   ? "alpha"
			: c == 'N' ? "noise"
			: c == 'T' ? "tolerance"
			: c == 'S' ? "seed"
			: c == 'R' ? "max-repeats"
				   : "max-minutes");
		return -1;
	}
	if (c == 'A')
		o->v.alpha = v;
	else if (c == 'N')
		o->v.noise_pct = v;
	else if (c == 'T')
		o->v.tolerance_pct = v;
	else if (c == 'S')
		o->v.seed = (uint64_t)v;
	else if (c == 'R')
		o->max_repeats = (int)v;
	else
		o->max_minutes = v;
	return 0;
}

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
		{ "alpha", required_argument, NULL, 'A' },
		{ "noise", required_argument, NULL, 'N' },
		{ "tolerance", required_argument, NULL, 'T' },
		{ "seed", required_argument, NULL, 'S' },
		{ "adaptive", no_argument, NULL, 'a' },
		{ "max-repeats", required_argument, NULL, 'R' },
		{ "max-minutes", required_argument, NULL, 'M' },
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
		case 'A':
		case 'N':
		case 'T':
		case 'S':
		case 'R':
		case 'M':
			if (number_option(c, optarg, o) < 0)
				return 2;
			break;
		case 'a':
			o->adaptive = 1;
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
	if (o->adaptive && (argc - optind != 1 || !o->n_gates)) {
		die_message("--adaptive: one RUNDIR of two images (zbench run -i A -i B) and at "
			    "least one --fail-if gate");
		return 2;
	}
	/* Each round looks again: testing every look at alpha would find a difference that is
	 * not there far more often than alpha (optional stopping). The looks are at most 2 to
	 * max_repeats pairs; alpha is split among them (Bonferroni: valid whatever their
	 * dependence). bench/gate-resample.py measured 1 false positive in 3 A/A trials without. */
	if (o->adaptive) {
		o->v.alpha /= (double)(o->max_repeats - 1);
		if (perm_min_pairs(o->v.alpha) > (size_t)o->max_repeats)
			fprintf(stderr,
				"zbench: compare: --adaptive: at p < %.2g a look (alpha split among "
				"%d looks) the permutation test needs %zu pairs, more than "
				"--max-repeats %d: a timing gate can only end undecided\n",
				o->v.alpha, o->max_repeats - 1, perm_min_pairs(o->v.alpha),
				o->max_repeats);
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
		doc = compare_tiers_junit(cmp, cmp->tiers, &len);
		rc = write_file_atomic(o->junit, doc, len, 0644, err);
		free(doc);
		if (rc < 0)
			return error_wrap(err, "writing JUnit XML");
	}
	if (o->summary) {
		doc = compare_tiers_summary(cmp, cmp->tiers, &len);
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

/* The runs loaded, matched and analysed in tiers. 0, or 2 (said; nothing to release). */
static int load_analyse(int argc, char **argv, struct compare_opts *o, struct report_run *a,
			struct report_run *b, struct compare *cmp, struct compare_tiers *t)
{
	struct zb_error err = { 0 };

	if (argc - optind == 1) { /* one run of several images: its side A against side B */
		if (o->phase) {
			die_message(
			    "--phase with one RUNDIR: not supported yet; compare the sides' "
			    "phases in two runs");
			return 2;
		}
		if (compare_sides_load(argv[optind], "A", "B", a, b, &err) < 0) {
			die_message(err.msg);
			return 2;
		}
		if (!o->outdir)
			o->outdir = argv[optind];
	} else if (report_run_load_phase(argv[optind], o->phase, a, &err) < 0) {
		die_message(err.msg);
		return 2;
	} else if (report_run_load_phase(argv[optind + 1], o->phase, b, &err) < 0) {
		die_message(err.msg);
		report_run_release(a);
		return 2;
	}
	results_skipped_print(&a->skipped, stderr);
	results_skipped_print(&b->skipped, stderr);
	if (!o->outdir)
		o->outdir = b->dir;
	if (compare_runs(a, b, cmp, &err) < 0) {
		die_message(err.msg);
		report_run_release(a);
		report_run_release(b);
		return 2;
	}
	compare_analyse(cmp, o->gates, o->n_gates);
	compare_tiers_analyse(cmp, o->gates, o->n_gates, &o->v, t);
	cmp->tiers = t;
	return 0;
}

static void release_all(struct report_run *a, struct report_run *b, struct compare *cmp,
			struct compare_tiers *t)
{
	compare_release(cmp);
	compare_tiers_release(t);
	report_run_release(a);
	report_run_release(b);
}

/* Repeats so far: one past the highest repeat number of either side. */
static int repeats_done(const struct report_run *a, const struct report_run *b)
{
	const struct report_run *runs[2] = { a, b };
	int top = -1;

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < runs[k]->n_cells; i++)
			for (size_t j = 0; j < runs[k]->cells[i].n_attempts; j++)
				if (runs[k]->cells[i].attempts[j].repeat > top)
					top = runs[k]->cells[i].attempts[j].repeat;
	return top + 1;
}

/* One adaptive round: the undecided cells (every cell when a gate was judged nowhere) run once
 * more on both images, interleaved, in RUNDIR. 0 ran, 1 the budget is spent, 130 interrupted,
 * 2 an error (said). */
static int adaptive_round(const char *dir, const struct compare_opts *o, const struct compare *cmp,
			  const struct compare_tiers *t, int round, double t0)
{
	const char **ids = xcalloc(cmp->n_pairs + 1, sizeof(char *));
	struct run_options ro = { .resume_dir = dir };
	struct zb_error err = { 0 };
	int have = repeats_done(cmp->a, cmp->b), rc;
	double minutes = (now_wall() - t0) / 60;
	size_t n = 0;

	for (size_t i = 0; i < cmp->n_pairs; i++)
		if (t->n_gate_unjudged || compare_tiers_cell_undecided(t, i))
			ids[n++] = cmp->pairs[i].a->id;
	if (have >= o->max_repeats || minutes >= o->max_minutes) {
		fprintf(
		    stderr,
		    "zbench: compare: adaptive: %zu cell(s) undecided after %d repeats and %.1f "
		    "minutes: the budget (--max-repeats %d, --max-minutes %g) is spent\n",
		    n, have, minutes, o->max_repeats, o->max_minutes);
		free(ids);
		return 1;
	}
	fprintf(stderr, "zbench: compare: adaptive round %d: %zu undecided cell(s), repeat %d\n",
		round, n, have + 1);
	ro.repeats_total = have + 1;
	ro.only_cells = ids;
	ro.n_only_cells = n;
	rc = run_matrix(&ro, &err);
	free(ids);
	if (rc < 0) {
		die_message(err.msg);
		return 2;
	}
	return rc == 130 ? 130 : 0;
}

int cmd_compare(int argc, char **argv)
{
	struct compare_opts o = { .v = VERDICT_OPTS_DEFAULT, .max_repeats = 20, .max_minutes = 60 };
	struct zb_error err = { 0 };
	struct report_run a, b;
	struct compare cmp = { 0 };
	struct compare_tiers tiers = { 0 };
	double t0 = now_wall();
	int rc = parse(argc, argv, &o);

	if (rc)
		goto out;
	rc = load_analyse(argc, argv, &o, &a, &b, &cmp, &tiers);
	for (int round = 1;
	     rc == 0 && o.adaptive && compare_tiers_status(&tiers) == COMPARE_UNDECIDED; round++) {
		int r = adaptive_round(argv[optind], &o, &cmp, &tiers, round, t0);

		if (r == 1)
			break;
		release_all(&a, &b, &cmp, &tiers);
		if (r) {
			rc = r;
			goto out;
		}
		rc = load_analyse(argc, argv, &o, &a, &b, &cmp, &tiers);
	}
	if (rc)
		goto out;
	if (outputs(&cmp, &o, &err) < 0) {
		die_message(err.msg);
		rc = 2;
	} else if ((rc = compare_tiers_status(&tiers)) != COMPARE_PASSED) {
		fprintf(stderr,
			"zbench: compare: %zu gated cell(s) failed, %zu undecided, %zu gate(s) "
			"judged nowhere\n",
			tiers.n_failed, tiers.n_undecided, tiers.n_gate_unjudged);
	}
	release_all(&a, &b, &cmp, &tiers);
out:
	for (size_t i = 0; i < o.n_gates; i++)
		compare_gate_release(&o.gates[i]);
	return rc == 1 ? 0 : rc;
}
