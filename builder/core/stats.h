/* Statistics over the repeats of a cell (docs/reports.md): summaries with a Student-t confidence
 * interval, Welch's t-test for two sets of repeats, and Spearman's rank correlation.
 *
 * Pure functions of their inputs: no allocation visible to callers, no I/O. A result that does
 * not exist (a standard deviation of one value, a test with fewer than two values on a side) is
 * NAN, never 0, so a report can say "n=1" instead of printing a made-up number.
 */
#ifndef ZB_STATS_H
#define ZB_STATS_H

#include <stddef.h>

struct stats_summary {
	size_t n;
	double mean;
	double sd;	/* sample standard deviation (n - 1); NAN when n < 2 */
	double cv;	/* sd / |mean|; NAN when n < 2 or mean == 0 */
	double ci_half; /* half-width of the 95% confidence interval of the mean; NAN when n < 2 */
	double ci_lo, ci_hi; /* mean -/+ ci_half */
};

/* Summarise x[0..n-1]. With n == 0 every field but n is NAN. */
void stats_summarize(const double *x, size_t n, struct stats_summary *s);

/* Regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1 (a continued
 * fraction, evaluated on the side of x where it converges fast); NAN outside the domain. */
double stats_betai(double a, double b, double x);

/* Cumulative distribution function of Student's t with `df` > 0 degrees of freedom (df need not
 * be an integer: Welch's df is not). */
double stats_t_cdf(double t, double df);

/* The t with stats_t_cdf(t, df) == p, for 0 < p < 1 (bisection on the CDF). */
double stats_t_quantile(double p, double df);

struct stats_welch {
	double t;  /* (mean_a - mean_b) / standard error of the difference */
	double df; /* Welch-Satterthwaite degrees of freedom */
	double p;  /* two-sided p-value */
};

/* Welch's unequal-variance t-test of a[0..na-1] against b[0..nb-1]. Returns < 0 (and leaves *w
 * as NANs) when either side has fewer than two values: there is no test to do. When both sides
 * have zero variance, p is 1 if the means are equal and 0 otherwise. */
int stats_welch(const double *a, size_t na, const double *b, size_t nb, struct stats_welch *w);

struct stats_paired {
	size_t n;	     /* pairs used: both values > 0 */
	double mean_log;     /* mean of ln(b_i / a_i) */
	double ratio;	     /* exp(mean_log): the geometric mean of b_i / a_i */
	double ci_lo, ci_hi; /* 95% confidence interval of the ratio (Student t, n - 1 df) */
	double t, df;	     /* mean_log / its standard error, n - 1 */
	double p;	     /* two-sided p-value of "the ratio is 1" */
};

/* Paired t-test on log ratios: pair i is (a[i], b[i]), the same repeat of the same cell in A
 * and in B; pairs where either value is not > 0 are left out. Logs make the test one of the
 * ratio B/A (a multiplicative change, the same whether the metric is IOPS or latency) and
 * tame the right skew of throughput. Returns < 0 (fields NAN but n) with fewer than two pairs.
 * When every pair has the same ratio, p is 1 if that ratio is 1 and 0 otherwise (as Welch's). */
int stats_paired_log(const double *a, const double *b, size_t n, struct stats_paired *out);

/* Holm's step-down adjustment of the p-values p[0..n-1] for n tests (family-wise error rate):
 * adj[i] = max over the j ranked at or before i of min(1, (n - rank_j) p_j). NAN p-values are
 * not tests: they stay NAN and do not count in n. adj may be p (adjusted in place). */
void stats_holm(const double *p, size_t n, double *adj);

/* Spearman's rank correlation of the pairs (x[i], y[i]); ties get their average rank. NAN when
 * n < 2 or either side is constant. */
double stats_spearman(const double *x, const double *y, size_t n);

#endif
