/* The paired sign-flip permutation test on log ratios, its confidence interval by inverting the
 * test, and the minimum detectable effect (docs/compare.md "Verdicts"). Pure functions of their
 * inputs and a seed: the same pairs and seed give the same answer on every machine.
 *
 * Why a permutation test: under "A and B are the same", each pair's log ratio ln(b/a) is as
 * likely to be +x as -x, whatever the noise's shape (TCG's throughput is skewed and has
 * outliers; a t-test assumes a normal mean). Its price is that it cannot answer with few
 * pairs: the smallest two-sided p of n pairs is 2 / 2^n (0.25 with 3 pairs), so below
 * perm_min_pairs(alpha) every answer is "undecided", which is the honest one. */
#ifndef ZB_PERM_H
#define ZB_PERM_H

#include <stddef.h>
#include <stdint.h>

/* Exact enumeration of the 2^n sign vectors up to this many pairs; beyond, PERM_DRAWS random
 * ones (from the seed) and the identity. */
#define PERM_EXACT_MAX 12
#define PERM_DRAWS     8191

struct perm_result {
	size_t n;	     /* pairs used: both values > 0 and finite */
	double ratio;	     /* geometric mean of b/a (exp of the mean log ratio) */
	double p;	     /* two-sided p of "the ratio is 1"; NAN with n < 2 */
	double ci_lo, ci_hi; /* the (1 - alpha) interval of the ratio: the ratios r that the test
			      * does not reject at alpha when the data are divided by r; 0 and
			      * INFINITY when no shift can be rejected with n pairs */
	double sd_log;	     /* sample standard deviation of the log ratios; NAN with n < 2 */
	double mde;	     /* the smallest relative change (0.05: 5%) this test would call
			      * different with 80% power, from sd_log and n (normal theory);
			      * INFINITY when n < perm_min_pairs(alpha) */
};

/* The fewest pairs whose smallest two-sided p (2 / 2^n) is at or below alpha. */
size_t perm_min_pairs(double alpha);

/* splitmix64: a seeded, portable generator (the same draws on every libc), the next draw from
 * state *s; the sign flips here and history's permutations (history_show.c) draw from it. */
uint64_t perm_splitmix(uint64_t *s);

/* Test the pairs (a[i], b[i]) at level alpha (for the interval and the MDE) with the seed for
 * drawn sign vectors. Returns < 0 (fields NAN but n) with fewer than two usable pairs. */
int perm_paired_log(const double *a, const double *b, size_t n, double alpha, uint64_t seed,
		    struct perm_result *out);

#endif
