/* `zbench compare`: two runs of the same cells (two images, two hosts), cell by cell and metric
 * by metric: % change and Welch's t-test over the repeats (docs/reports.md). */
#ifndef ZB_COMPARE_H
#define ZB_COMPARE_H

#include "core/stats.h"
#include "matrix/metrics.h"
#include "report.h"

struct compare_tiers;

/* Config paths left out when matching cells across runs: they name the image, which is what a
 * comparison of two images varies on purpose. */
extern const char *const compare_ignored_paths[];

struct compare_pair {
	const struct report_cell *a, *b;
};

/* A gate: `--fail-if 'write_iops < -5%'`. The comparison fails when, in some cell, the change
 * of `metric` from A to B is significant (Holm-adjusted p below the level) and beyond `pct` on
 * the side `below` says (B lower than A by more than 5% here); for a count metric
 * (metric->is_count), when the change of the means is beyond pct, with no statistics. */
struct compare_gate {
	const struct metric_def *metric; /* a row of builder/matrix/metrics.h */
	int below;			 /* '<': fail on a change below pct; '>': above */
	double pct;
	char *text; /* as given, for messages and JUnit */
};

/* One paired test: a metric in one matched cell, the repeats of A and B paired by number. */
struct compare_test {
	size_t pair;   /* index into compare.pairs */
	size_t metric; /* index into metric_table */
	struct stats_paired st;
	double p_adj;	 /* Holm-adjusted within the test's family; NAN without a test */
	int in_gate;	 /* the family of the gated metrics (with gates); else the shown ones */
	int significant; /* p_adj < COMPARE_ALPHA */
	int gate;	 /* the first gate naming the metric, or -1 */
	int gate_failed; /* gated, significant and beyond the threshold */
};

#define COMPARE_ALPHA 0.05

struct compare_analysis {
	struct compare_test *tests; /* per pair, per metric: the report's metrics, then gated */
	size_t n_tests;
	const struct compare_gate *gates;
	size_t n_gates;
	size_t n_family[2];	/* tests (with p) outside / inside the gates' family */
	size_t n_significant;	/* in the shown family (no gates) or the gates' */
	size_t n_gate_failed;	/* gated tests that failed */
	size_t n_gate_untested; /* gates with no test in any cell (cannot be judged: fail) */
	int same_image;		/* A/A: both runs name the same image hash */
};

struct compare;

/* One difference between the sides: `key` ("pool.ashift", "dataset.recordsize",
 * "module.zfs.zfs_txg_timeout", "kernel", "zfs_version", "package.NAME") had `a` in A and `b` in
 * B ("(absent)" when a side has none) in `cells` matched cells (0: a package of the images). */
struct compare_drift_item {
	char *key, *a, *b;
	size_t cells;
};

struct compare_drift {
	struct compare_drift_item *items; /* sorted by key */
	size_t n;
	size_t n_cell_items; /* how many came from cells (the rest from the images' packages) */
	size_t cells;	     /* matched cells with an effective configuration on both sides */
};

/* Everything that differs between the matched cells' effective configurations (statistics
 * such as "allocated" or "guid", whose source is "-", left out) and between the images'
 * packages. compare_drift_release() frees it. */
void compare_drift_find(const struct compare *c, struct compare_drift *d);
void compare_drift_release(struct compare_drift *d);

struct compare {
	const struct report_run *a, *b;
	struct compare_pair *pairs; /* in A's cell order */
	size_t n_pairs;
	size_t only_a, only_b; /* cells with no match in the other run */
	struct compare_analysis an;
	struct compare_drift drift;
	/* the verdicts in tiers (compare_verdict.h), rendered when set; borrowed */
	const struct compare_tiers *tiers;
};

/* Match the cells of two loaded runs. Fails, naming both runs, when they share no cell. */
int compare_runs(const struct report_run *a, const struct report_run *b, struct compare *out,
		 struct zb_error *err);

/* The comparison into an open document (report_doc_open()), plots through pl. */
void compare_render(struct report_doc *d, const struct compare *c, struct report_plotter *pl);

/* Write OUTDIR/compare.md, OUTDIR/compare.html and OUTDIR/compare-plots/, through
 * builder/core/outdir.h. */
int compare_write(const struct compare *c, const char *outdir, struct zb_error *err);

void compare_release(struct compare *c);

/* Parse "METRIC < -5%" / "METRIC > 10%" (any metric of builder/matrix/metrics.h, timing or
 * count; the number is a signed percentage, '%' required). 0, or -1 with err.
 * compare_gate_release() frees g->text. */
int compare_gate_parse(const char *s, struct compare_gate *g, struct zb_error *err);
void compare_gate_release(struct compare_gate *g);
/* The gate's metric name ("write_iops", "disk_flushes"). */
const char *compare_gate_key(const struct compare_gate *g);
/* The index of the first of the n gates on metric m (a row of metric_table), or -1. */
int compare_gate_find(const struct compare_gate *gates, size_t n, size_t m);

/* Pair the repeats of every matched cell and test each timing metric (the report's, and the
 * gated ones; counts have no test), Holm-adjust within the families and judge the gates (borrowed:
 * they must outlive c). compare_runs() has already done this without gates; calling it again
 * replaces the analysis. */
void compare_analyse(struct compare *c, const struct compare_gate *gates, size_t n_gates);

/* Whether the gates passed: no gated test failed and every gate was judged somewhere. */
int compare_gates_passed(const struct compare *c);

/* The analysis for machines (zbench compare --json): malloc'd JSON text. */
char *compare_json(const struct compare *c);
/* JUnit XML and the CI job's Markdown summary: compare_tiers_junit(), compare_tiers_summary(). */

#endif
