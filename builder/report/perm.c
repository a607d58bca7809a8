/* The paired sign-flip permutation test (builder/report/perm.h). */
#include "perm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "core/util.h"

size_t perm_min_pairs(double alpha)
{
	size_t n = 1;

	while (n < 62 && 2.0 / ldexp(1.0, (int)n) > alpha)
		n++;
	return n;
}

uint64_t perm_splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The sign vectors as two sums each: sx = sum s_i x_i and ss = sum s_i, so that the statistic
 * of the data shifted by d, |sum s_i (x_i - d)|, is |sx - d ss| in O(1) per vector. The first is
 * the identity (all +1). */
struct flips {
	double *sx, *ss;
	size_t m;
};

static void flips_make(const double *x, size_t n, uint64_t seed, struct flips *f)
{
	int exact = n <= PERM_EXACT_MAX;
	size_t m = exact ? (size_t)1 << n : PERM_DRAWS + 1;

	f->m = m;
	f->sx = xcalloc(m, sizeof(double));
	f->ss = xcalloc(m, sizeof(double));
	for (size_t k = 0; k < m; k++) {
		uint64_t bits = 0, st = seed;
		double sx = 0, ss = 0;

		if (!exact && k > 0) {
			st = seed ^ (0x5851f42d4c957f2dULL * (uint64_t)k);
			bits = perm_splitmix(&st);
		} else if (exact) {
			bits = (uint64_t)k;
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t b;

			if (!exact && k > 0 && i > 0 && i % 64 == 0)
				bits = perm_splitmix(&st);
			b = exact ? (bits >> i) & 1 : (bits >> (i % 64)) & 1;
			sx += b ? -x[i] : x[i];
			ss += b ? -1 : 1;
		}
		f->sx[k] = sx;
		f->ss[k] = ss;
	}
}

/* Two-sided p of the data shifted by d: the share of sign vectors whose |sum| is at least the
 * observed one (a relative tolerance, so that ties by symmetry count as ties). */
static double flips_p(const struct flips *f, double d)
{
	double obs = fabs(f->sx[0] - d * f->ss[0]), tol = 1e-12 * (obs > 1 ? obs : 1);
	size_t ge = 0;

	for (size_t k = 0; k < f->m; k++)
		ge += fabs(f->sx[k] - d * f->ss[k]) >= obs - tol;
	return (double)ge / (double)f->m;
}

/* The end of the interval on one side of `mid` (p(mid) = 1): bisection between mid and `far`,
 * where the test rejects. */
static double flips_bound(const struct flips *f, double alpha, double mid, double far)
{
	for (int i = 0; i < 60; i++) {
		double d = mid + (far - mid) / 2;

		if (flips_p(f, d) > alpha)
			mid = d;
		else
			far = d;
	}
	return mid + (far - mid) / 2;
}

int perm_paired_log(const double *a, const double *b, size_t n, double alpha, uint64_t seed,
		    struct perm_result *out)
{
	double *x = xcalloc(n + 1, sizeof(double)), sum = 0, ss = 0, lo, hi, mean;
	struct flips f;
	size_t k = 0;

	memset(out, 0, sizeof(*out));
	out->ratio = out->p = out->ci_lo = out->ci_hi = out->sd_log = out->mde = NAN;
	for (size_t i = 0; i < n; i++)
		if (a[i] > 0 && b[i] > 0 && isfinite(a[i]) && isfinite(b[i])) {
			x[k] = log(b[i] / a[i]);
			sum += x[k++];
		}
	out->n = k;
	if (k < 2) {
		free(x);
		return -1;
	}
	mean = sum / (double)k;
	lo = hi = x[0];
	for (size_t i = 0; i < k; i++) {
		ss += (x[i] - mean) * (x[i] - mean);
		lo = x[i] < lo ? x[i] : lo;
		hi = x[i] > hi ? x[i] : hi;
	}
	out->ratio = exp(mean);
	out->sd_log = sqrt(ss / (double)(k - 1));
	flips_make(x, k, seed, &f);
	out->p = flips_p(&f, 0);
	if (k < perm_min_pairs(alpha)) {
		/* every shift keeps p >= 2 / 2^n > alpha: no interval, nothing detectable */
		out->ci_lo = 0;
		out->ci_hi = INFINITY;
		out->mde = INFINITY;
	} else {
		/* beyond every log ratio all signs agree: p = 2 / 2^n (exact) <= alpha */
		double w = (hi - lo) + 1e-6;

		out->ci_lo = exp(flips_bound(&f, alpha, mean, lo - w));
		out->ci_hi = exp(flips_bound(&f, alpha, mean, hi + w));
		out->mde = exp((stats_t_quantile(1 - alpha / 2, (double)(k - 1)) +
				stats_t_quantile(0.8, (double)(k - 1))) *
			       out->sd_log / sqrt((double)k)) -
			   1;
	}
	free(f.sx);
	free(f.ss);
	free(x);
	return 0;
}
