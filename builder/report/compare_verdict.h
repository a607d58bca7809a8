/* `zbench compare`'s verdicts in tiers (issue 29 item 2, docs/compare.md "Verdicts"):
 *
 * - count metrics (the count rows of builder/matrix/metrics.h: I/Os, bytes, flushes, TXGs, ZIL,
 *   ARC, the modelled disks' seeks and flushes) are compared
 *   against a stated tolerance with no statistics: they repeat almost exactly, so a change
 *   beyond the tolerance is different and one within it the same;
 * - timing metrics (builder/matrix/metrics.h: IOPS, bandwidth, latencies) get one of three
 *   verdicts from the paired permutation test (builder/report/perm.h) and a noise threshold:
 *   different (Holm-adjusted p below alpha and the change beyond the threshold), same (the whole
 *   (1 - alpha) interval within the threshold) or undecided (neither: more pairs are needed).
 *
 * A gate (`--fail-if 'METRIC OP N%'`) is judged in each cell with its own threshold on its side:
 * failed when different on that side, passed when the interval's end on that side is within
 * the threshold (a count: when the change is), undecided otherwise. A gate no cell can judge is
 * undecided. */
#ifndef ZB_COMPARE_VERDICT_H
#define ZB_COMPARE_VERDICT_H

#include <stdint.h>

#include "compare.h"
#include "perm.h"

enum verdict {
	VERDICT_SAME,
	VERDICT_DIFFERENT,
	VERDICT_UNDECIDED,
};

const char *verdict_name(enum verdict v);

struct verdict_opts {
	double alpha;	      /* the permutation test's level (default COMPARE_ALPHA) */
	double noise_pct;     /* a timing change within +-this is noise (default 5) */
	double tolerance_pct; /* a count change within +-this is the same (default 1) */
	uint64_t seed;	      /* for drawn sign vectors beyond PERM_EXACT_MAX pairs */
};

#define VERDICT_OPTS_DEFAULT                                                                       \
	{                                                                                          \
		.alpha = COMPARE_ALPHA, .noise_pct = 5, .tolerance_pct = 1, .seed = 29             \
	}

/* One verdict: a metric in one matched cell. */
struct verdict_row {
	size_t pair;   /* index into compare.pairs */
	int is_count;  /* metric_table[metric].is_count: judged against a tolerance */
	size_t metric; /* index into metric_table */
	int gate;      /* the gate judging it (index into the gates), or -1 */
	size_t n_a, n_b;
	double mean_a, mean_b;	   /* counts: over each side's ok repeats */
	double change_pct;	   /* counts: of the means; timing: of the geometric-mean ratio */
	struct perm_result perm;   /* timing only */
	double p_adj;		   /* timing: Holm within the row's family; NAN otherwise */
	double mde_pct;		   /* the minimum detectable effect, %: counts the tolerance;
				    * INFINITY when no change could be detected (too few pairs) */
	size_t need_pairs;	   /* timing: the fewest pairs that can decide at alpha */
	enum verdict verdict;	   /* two-sided, with noise_pct or tolerance_pct */
	enum verdict gate_verdict; /* with a gate: SAME passed, DIFFERENT failed */
};

struct compare_tiers {
	struct verdict_opts opts;
	const struct compare_gate *gates;
	size_t n_gates;
	struct verdict_row *rows;
	size_t n_rows;
	size_t n_failed, n_undecided; /* gated rows */
	size_t n_gate_unjudged;	      /* gates with no row in any cell */
};

/* The tiers of a matched comparison (compare_runs()); gates borrowed. Replaces *t's rows.
 * compare_tiers_release() frees them. */
void compare_tiers_analyse(const struct compare *c, const struct compare_gate *gates,
			   size_t n_gates, const struct verdict_opts *o, struct compare_tiers *t);
void compare_tiers_release(struct compare_tiers *t);

/* The gated outcome: COMPARE_PASSED, COMPARE_FAILED (some gated row different on its side) or
 * COMPARE_UNDECIDED (none failed, but some gated row or gate is undecided). */
enum { COMPARE_PASSED = 0, COMPARE_FAILED = 3, COMPARE_UNDECIDED = 4 };
int compare_tiers_status(const struct compare_tiers *t);

/* Whether gated row i still needs pairs (undecided); the cells a further round should run. */
int compare_tiers_cell_undecided(const struct compare_tiers *t, size_t pair);

/* Metric m of pair p's cells, the ok final repeats of A and B paired by repeat number (the
 * repeats A has, in its order; a repeat missing or not finite on either side left out): how many
 * pairs, in *a and *b (allocated; the caller frees both). The gates' t-test (compare_gate.c) and
 * the permutation test of a timing row read the same pairs. */
size_t compare_paired_values(const struct compare_pair *p, size_t m, double **a, double **b);

/* Decide one timing row (perm filled) or one count row (means filled) against its threshold:
 * pure, for the unit tests. `below` +1: a gate 'M < pct'; -1: 'M > pct'; 0 two-sided with
 * threshold |pct|. `p` is the (adjusted) p-value of a timing row. */
enum verdict verdict_timing(const struct perm_result *r, double p, double alpha, double pct,
			    int below);
enum verdict verdict_count(double mean_a, double mean_b, double pct, int below);

/* The tiers into a document (compare.md's "Verdicts"), as JSON (compare --json's "verdicts"),
 * JUnit XML and a Markdown job summary (malloc'd). */
struct report_doc;
void compare_tiers_render(struct report_doc *d, const struct compare *c,
			  const struct compare_tiers *t);
json_t *compare_tiers_json(const struct compare *c, const struct compare_tiers *t);
char *compare_tiers_junit(const struct compare *c, const struct compare_tiers *t, size_t *len);
char *compare_tiers_summary(const struct compare *c, const struct compare_tiers *t, size_t *len);

#endif
