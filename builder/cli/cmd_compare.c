/* `zbench compare`: two run directories, cell by cell; paired statistics and gates. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "core/util.h"
#include "options.h"
#include "report/compare.h"
#include "report/compare_sides.h"
#include "report/compare_verdict.h"
#include "run/run.h"

#define COMPARE_GATES_MAX 32

struct compare_opts {
	const char *outdir, *junit, *summary, *phase;
	int json, adaptive, max_repeats;
	double max_minutes;
	struct verdict_opts v;
	struct compare_gate gates[COMPARE_GATES_MAX];
	size_t n_gates;
	char sides[2][2]; /* with one RUNDIR: the two sides compared ("A", "B" unless --sides) */
	int sides_given;
	char **runs; /* RUN_A RUN_B, or one RUNDIR */
	int n_runs;
};

/* A number option's value (VALUE, or VALUE% where `pct`) into *out: 0, or -1 (said) when it is
 * none or outside lo..hi (both bounds excluded where `open`; `whole`: an integer). */
static int number_arg(const char *name, const char *arg, int pct, int whole, double lo, double hi,
		      int open, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (pct && *end == '%')
		end++;
	if (errno || end == arg || *end || !isfinite(v) || (whole && v != floor(v)) ||
	    (open ? !(v > lo && v < hi) : !(v >= lo && v <= hi))) {
		fprintf(stderr, "zbench: compare: bad value '%s' for --%s\n", arg, name);
		return -1;
	}
	*out = v;
	return 0;
}

static int set_alpha(void *ctx, const char *arg)
{
	return number_arg("alpha", arg, 0, 0, 0, 0.5, 1, &((struct compare_opts *)ctx)->v.alpha);
}

static int set_noise(void *ctx, const char *arg)
{
	return number_arg("noise", arg, 1, 0, 0, INFINITY, 0,
			  &((struct compare_opts *)ctx)->v.noise_pct);
}

static int set_tolerance(void *ctx, const char *arg)
{
	return number_arg("tolerance", arg, 1, 0, 0, INFINITY, 0,
			  &((struct compare_opts *)ctx)->v.tolerance_pct);
}

static int set_max_minutes(void *ctx, const char *arg)
{
	return number_arg("max-minutes", arg, 0, 0, 0, INFINITY, 1,
			  &((struct compare_opts *)ctx)->max_minutes);
}

static int set_seed(void *ctx, const char *arg)
{
	double v;

	if (number_arg("seed", arg, 0, 1, 0, 1e9, 0, &v) < 0)
		return -1;
	((struct compare_opts *)ctx)->v.seed = (uint64_t)v;
	return 0;
}

/* --sides XY: two different side labels of a run of several sides (A..H). */
static int set_sides(void *ctx, const char *arg)
{
	struct compare_opts *o = ctx;

	if (strlen(arg) != 2 || arg[0] < 'A' || arg[0] > 'H' || arg[1] < 'A' || arg[1] > 'H' ||
	    arg[0] == arg[1]) {
		fprintf(stderr,
			"zbench: compare: bad value '%s' for --sides: two different sides of A..H, "
			"such as AC\n",
			arg);
		return -1;
	}
	o->sides[0][0] = arg[0];
	o->sides[1][0] = arg[1];
	o->sides_given = 1;
	return 0;
}

static int set_fail_if(void *ctx, const char *arg)
{
	struct compare_opts *o = ctx;
	struct zb_error err = { 0 };

	if (o->n_gates == COMPARE_GATES_MAX) {
		die_message("too many --fail-if gates");
		return -1;
	}
	if (compare_gate_parse(arg, &o->gates[o->n_gates], &err) < 0) {
		die_message(err.msg);
		return -1;
	}
	o->n_gates++;
	return 0;
}

/* The options of `zbench compare` (options.h). */
static const struct cli_option compare_options[] = {
	CLI_OPT_STRING('o', "output", "DIR", struct compare_opts, outdir,
		       "where to write the comparison"),
	{ CLI_ROW_CALL(
	      0, "fail-if", "'M < -5%'", set_fail_if,
	      "fail (exit 3) when metric M (a timing metric of\ndocs/reports.md or a count "
	      "of docs/compare.md) changed\nbeyond the threshold ('<' or '>'): a count by "
	      "its\nmeans, a timing metric by the permutation test;\nrepeatable; undecided "
	      "(exit 4) when no cell decides"),
	  .many = 1 },
	CLI_OPT_FLAG(0, "json", struct compare_opts, json, "print the analysis as JSON on stdout"),
	CLI_OPT_STRING(0, "junit", "FILE", struct compare_opts, junit,
		       "JUnit XML: a testcase per gate and cell"),
	CLI_OPT_STRING(0, "summary", "FILE", struct compare_opts, summary,
		       "a Markdown summary for a CI job ($GITHUB_STEP_SUMMARY)"),
	CLI_OPT_STRING(0, "phase", "NAME", struct compare_opts, phase,
		       "a phased workload's phase NAME as each cell's result\n(default: its last "
		       "measured phase; docs/matrix.md)"),
	CLI_OPT_CALL(0, "alpha", "P", set_alpha, "the permutation test's level (default 0.05)"),
	CLI_OPT_CALL(0, "noise", "N%", set_noise,
		     "a timing change within +-N% is noise (default 5%)"),
	CLI_OPT_CALL(0, "tolerance", "N%", set_tolerance,
		     "a count change within +-N% is the same (default 1%)"),
	CLI_OPT_CALL(0, "seed", "N", set_seed, "seed of the drawn sign flips (default 29)"),
	CLI_OPT_CALL(0, "sides", "XY", set_sides,
		     "(one RUNDIR of several sides) compare side X with\nside Y (default AB)"),
	CLI_OPT_FLAG(
	    0, "adaptive", struct compare_opts, adaptive,
	    "(one RUNDIR of two images) add interleaved A/B repeats\nof the cells whose "
	    "gates are undecided, a round at a\ntime, until every gated cell has a verdict "
	    "or a budget\nruns out; alpha is split among the rounds' looks\n(alpha / "
	    "(max-repeats - 1)); boots VMs"),
	{ CLI_ROW_INT(0, "max-repeats", "N", 2, 1000000000, struct compare_opts, max_repeats,
		      "the most repeats per cell and side (default 20)"),
	  .with = "adaptive" },
	{ CLI_ROW_CALL(0, "max-minutes", "M", set_max_minutes,
		       "start no round after M minutes (default 60)"),
	  .with = "adaptive" },
};

/* `zbench compare RUN_A RUN_B` is the command's own; one RUNDIR is a run of two images. */
static const struct cli_form compare_forms[] = {
	{ .option = "adaptive", .args = "RUNDIR", .min_args = 1, .max_args = 1 },
	{ .args = "RUNDIR", .min_args = 1, .max_args = 1 },
};

static int compare_main(void *ctx, int argc, char **argv);

const struct cli_command cmd_compare_command = {
	.name = "compare",
	.about = "Match the cells of two run directories by their configuration (the image left\n"
		 "out), and write DIR/compare.md and DIR/compare.html: per cell and metric the\n"
		 "change from A to B in %, Welch's t-test over the repeats, the repeats paired\n"
		 "by number (geometric mean of B/A, its 95% CI, a paired t-test on the log\n"
		 "ratios, Holm-adjusted), and plots of the % change against the matrix's first\n"
		 "axis. DIR defaults to RUN_B. With one RUNDIR, a run of several images (zbench\n"
		 "run -i A -i B): its image A against its image B, each record on the side it\n"
		 "names; DIR defaults to RUNDIR.",
	CLI_OPTIONS(compare_options),
	.epilog = "Exit status: 0 on success (every gate passed), 3 when a gate failed, 4 when no\n"
		  "gate failed but one is undecided, 2 on errors (including two runs with no cell\n"
		  "in common). See docs/compare.md.",
	CLI_ARGS("RUN_A RUN_B", 2, 2),
	CLI_FORMS(compare_forms),
	.run = compare_main,
};

/* --adaptive's conditions and its share of alpha: 0, or 2 (said). */
static int adaptive_setup(struct compare_opts *o)
{
	if (o->adaptive && (o->n_runs != 1 || !o->n_gates)) {
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
			fprintf(
			    stderr,
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
	const struct {
		const char *path; /* NULL: not asked for */
		char *(*render)(const struct compare *c, const struct compare_tiers *t,
				size_t *len);
		const char *what;
	} files[] = {
		{ o->junit, compare_tiers_junit, "JUnit XML" },
		{ o->summary, compare_tiers_summary, "the summary" },
	};
	char *doc;
	size_t len;
	int rc;

	if (compare_write(cmp, o->outdir, err) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		if (!files[i].path)
			continue;
		doc = files[i].render(cmp, cmp->tiers, &len);
		rc = write_file_atomic(files[i].path, doc, len, 0644, err);
		free(doc);
		if (rc < 0)
			return error_wrap(err, "writing %s", files[i].what);
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
static int load_analyse(struct compare_opts *o, struct report_run *a, struct report_run *b,
			struct compare *cmp, struct compare_tiers *t)
{
	struct zb_error err = { 0 };

	if (o->n_runs == 1) { /* one run of several images: its side A against side B */
		if (o->phase) {
			die_message(
			    "--phase with one RUNDIR: not supported yet; compare the sides' "
			    "phases in two runs");
			return 2;
		}
		if (compare_sides_load(o->runs[0], o->sides[0], o->sides[1], a, b, &err) < 0) {
			die_message(err.msg);
			return 2;
		}
		if (!o->outdir)
			o->outdir = o->runs[0];
	} else if (o->sides_given) {
		die_message("--sides: one RUNDIR of several sides, not two runs");
		return 2;
	} else if (report_run_load_phase(o->runs[0], o->phase, a, &err) < 0) {
		die_message(err.msg);
		return 2;
	} else if (report_run_load_phase(o->runs[1], o->phase, b, &err) < 0) {
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

static int compare_main(void *ctx, int argc, char **argv)
{
	struct compare_opts *o = ctx;
	struct zb_error err = { 0 };
	struct report_run a, b;
	struct compare cmp = { 0 };
	struct compare_tiers tiers = { 0 };
	double t0 = now_wall();
	int rc;

	o->runs = argv;
	o->n_runs = argc;
	rc = adaptive_setup(o);
	if (rc == 0)
		rc = load_analyse(o, &a, &b, &cmp, &tiers);
	for (int round = 1;
	     rc == 0 && o->adaptive && compare_tiers_status(&tiers) == COMPARE_UNDECIDED; round++) {
		int r = adaptive_round(o->runs[0], o, &cmp, &tiers, round, t0);

		if (r == 1)
			break;
		release_all(&a, &b, &cmp, &tiers);
		if (r)
			return r;
		rc = load_analyse(o, &a, &b, &cmp, &tiers);
	}
	if (rc)
		return rc;
	if (outputs(&cmp, o, &err) < 0) {
		die_message(err.msg);
		rc = 2;
	} else if ((rc = compare_tiers_status(&tiers)) != COMPARE_PASSED) {
		fprintf(stderr,
			"zbench: compare: %zu gated cell(s) failed, %zu undecided, %zu gate(s) "
			"judged nowhere\n",
			tiers.n_failed, tiers.n_undecided, tiers.n_gate_unjudged);
	}
	release_all(&a, &b, &cmp, &tiers);
	return rc;
}

int cmd_compare(int argc, char **argv)
{
	struct compare_opts o = { .v = VERDICT_OPTS_DEFAULT,
				  .max_repeats = 20,
				  .max_minutes = 60,
				  .sides = { "A", "B" } };
	int rc = cli_run(&cmd_compare_command, argc, argv, &o);

	/* the gates --fail-if parsed, also when a later option or the run failed */
	for (size_t i = 0; i < o.n_gates; i++)
		compare_gate_release(&o.gates[i]);
	return rc;
}
