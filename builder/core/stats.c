/* Statistics over repeats (builder/core/stats.h). Written for a handful of values per cell: plain
 * two-pass formulas, no streaming, no allocation beyond the ranks of one Spearman call. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"

void stats_summarize(const double *x, size_t n, struct stats_summary *s)
{
	double sum = 0, ss = 0;

	s->n = n;
	s->mean = s->sd = s->cv = s->ci_half = s->ci_lo = s->ci_hi = NAN;
	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	s->mean = sum / (double)n;
	if (n < 2)
		return;
	/* two passes: the deviations are small next to the values (IOPS in the thousands vary
	 * by a few percent), where sum-of-squares minus square-of-sum loses the digits */
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - s->mean) * (x[i] - s->mean);
	s->sd = sqrt(ss / (double)(n - 1));
	s->cv = s->mean != 0 ? s->sd / fabs(s->mean) : NAN;
	s->ci_half = stats_t_quantile(0.975, (double)(n - 1)) * s->sd / sqrt((double)n);
	s->ci_lo = s->mean - s->ci_half;
	s->ci_hi = s->mean + s->ci_half;
}

#define BETAI_EPS     1e-15
#define BETAI_TINY    1e-300
#define BETAI_MAX_ITS 10000

/* The continued fraction of I_x(a, b) (the one that converges for x < (a + 1) / (a + b + 2)),
 * evaluated with the modified Lentz method: every partial denominator is kept away from zero so
 * the recurrences never divide by it. */
static double betai_cf(double a, double b, double x)
{
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	if (fabs(d) < BETAI_TINY)
		d = BETAI_TINY;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= BETAI_MAX_ITS; m++) {
		double m2 = 2.0 * m, num, step;

		/* even term: m (b - m) x / ((a + 2m - 1)(a + 2m)) */
		num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + num * d;
		c = 1 + num / c;
		if (fabs(d) < BETAI_TINY)
			d = BETAI_TINY;
		if (fabs(c) < BETAI_TINY)
			c = BETAI_TINY;
		d = 1 / d;
		h *= d * c;
		/* odd term: -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)) */
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + num * d;
		c = 1 + num / c;
		if (fabs(d) < BETAI_TINY)
			d = BETAI_TINY;
		if (fabs(c) < BETAI_TINY)
			c = BETAI_TINY;
		d = 1 / d;
		step = d * c;
		h *= step;
		if (fabs(step - 1) < BETAI_EPS)
			break;
	}
	return h;
}

double stats_betai(double a, double b, double x)
{
	double front;

	if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1))
		return NAN;
	if (x == 0 || x == 1)
		return x;
	/* x^a (1-x)^b / B(a, b), in logarithms: the factors over- and underflow on their own for
	 * the large a and b of Welch tests with many repeats */
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * betai_cf(a, b, x) / a;
	/* I_x(a, b) = 1 - I_{1-x}(b, a): the fraction converges fast only on this side */
	return 1 - front * betai_cf(b, a, 1 - x) / b;
}

double stats_t_cdf(double t, double df)
{
	double tail;

	if (!(df > 0) || isnan(t))
		return NAN;
	if (isinf(t))
		return t > 0 ? 1 : 0;
	/* P(|T| > |t|) = I_{df/(df+t^2)}(df/2, 1/2); written with t^2/df so large t keeps digits */
	tail = 0.5 * stats_betai(df / 2, 0.5, 1 / (1 + t * t / df));
	return t > 0 ? 1 - tail : tail;
}

double stats_t_quantile(double p, double df)
{
	double lo, hi;

	if (!(p > 0) || !(p < 1) || !(df > 0))
		return NAN;
	if (p == 0.5)
		return 0;
	if (p < 0.5)
		return -stats_t_quantile(1 - p, df);
	/* bracket [0, hi] with cdf(hi) >= p, then bisect: the CDF is monotonic, and 200 halvings
	 * reach the last bit of a double whatever the bracket */
	lo = 0;
	hi = 1;
	while (stats_t_cdf(hi, df) < p && hi < 1e300)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; i++) {
		double mid = lo + (hi - lo) / 2;

		if (stats_t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return lo + (hi - lo) / 2;
}

int stats_welch(const double *a, size_t na, const double *b, size_t nb, struct stats_welch *w)
{
	struct stats_summary sa, sb;
	double va, vb, se2;

	w->t = w->df = w->p = NAN;
	if (na < 2 || nb < 2)
		return -1;
	stats_summarize(a, na, &sa);
	stats_summarize(b, nb, &sb);
	va = sa.sd * sa.sd / (double)na;
	vb = sb.sd * sb.sd / (double)nb;
	se2 = va + vb;
	if (se2 == 0) {
		/* two sets of identical values: nothing varies, so any difference is certain */
		w->df = (double)(na + nb - 2);
		w->t = sa.mean == sb.mean ? 0 : (sa.mean > sb.mean ? INFINITY : -INFINITY);
		w->p = sa.mean == sb.mean ? 1 : 0;
		return 0;
	}
	w->t = (sa.mean - sb.mean) / sqrt(se2);
	w->df = se2 * se2 / (va * va / (double)(na - 1) + vb * vb / (double)(nb - 1));
	w->p = stats_betai(w->df / 2, 0.5, 1 / (1 + w->t * w->t / w->df));
	return 0;
}

int stats_paired_log(const double *a, const double *b, size_t n, struct stats_paired *out)
{
	double sum = 0, ss = 0, d, se, q;
	size_t k = 0;

	memset(out, 0, sizeof(*out));
	out->mean_log = out->ratio = out->ci_lo = out->ci_hi = NAN;
	out->t = out->df = out->p = NAN;
	for (size_t i = 0; i < n; i++)
		if (a[i] > 0 && b[i] > 0) {
			sum += log(b[i] / a[i]);
			k++;
		}
	out->n = k;
	if (k < 2)
		return -1;
	out->mean_log = sum / (double)k;
	for (size_t i = 0; i < n; i++)
		if (a[i] > 0 && b[i] > 0) {
			d = log(b[i] / a[i]) - out->mean_log;
			ss += d * d;
		}
	out->df = (double)(k - 1);
	out->ratio = exp(out->mean_log);
	se = sqrt(ss / (double)(k - 1) / (double)k);
	/* identical ratios up to rounding: nothing varies, so the ratio is certain */
	if (se <= 1e-12 * (fabs(out->mean_log) > 1 ? fabs(out->mean_log) : 1)) {
		int one = fabs(out->mean_log) <= 1e-12;

		out->t = one ? 0 : (out->mean_log > 0 ? INFINITY : -INFINITY);
		out->p = one ? 1 : 0;
		out->ci_lo = out->ci_hi = out->ratio;
		return 0;
	}
	out->t = out->mean_log / se;
	out->p = stats_betai(out->df / 2, 0.5, out->df / (out->df + out->t * out->t));
	q = stats_t_quantile(0.975, out->df);
	out->ci_lo = exp(out->mean_log - q * se);
	out->ci_hi = exp(out->mean_log + q * se);
	return 0;
}

/* A value and where it stood, sorted by value and then by place (stable, so ties keep their
 * order and ranks and adjusted p-values are deterministic). */
struct ranked {
	double v;
	size_t i;
};

static int ranked_cmp(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;

	if (a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

void stats_holm(const double *p, size_t n, double *adj)
{
	struct ranked *r = xcalloc(n + 1, sizeof(*r));
	size_t m = 0;
	double run = 0;

	for (size_t i = 0; i < n; i++) {
		if (!isnan(p[i]))
			r[m++] = (struct ranked){ .v = p[i], .i = i };
		adj[i] = NAN; /* after reading p[i]: adj may be p */
	}
	qsort(r, m, sizeof(*r), ranked_cmp);
	for (size_t k = 0; k < m; k++) {
		double v = (double)(m - k) * r[k].v;

		if (v > 1)
			v = 1;
		if (v > run)
			run = v;
		adj[r[k].i] = run;
	}
	free(r);
}

/* ranks[i] = the 1-based rank of x[i], ties sharing the average of their ranks */
static void rank(const double *x, size_t n, double *ranks)
{
	struct ranked *r = xcalloc(n, sizeof(*r));
	size_t i = 0;

	for (size_t k = 0; k < n; k++)
		r[k] = (struct ranked){ .v = x[k], .i = k };
	qsort(r, n, sizeof(*r), ranked_cmp);
	while (i < n) {
		size_t j = i;
		double avg;

		while (j + 1 < n && r[j + 1].v == r[i].v)
			j++;
		avg = (double)(i + j) / 2 + 1;
		for (size_t k = i; k <= j; k++)
			ranks[r[k].i] = avg;
		i = j + 1;
	}
	free(r);
}

double stats_spearman(const double *x, const double *y, size_t n)
{
	double *rx, *ry, mean = (double)(n + 1) / 2, sxy = 0, sxx = 0, syy = 0;

	if (n < 2)
		return NAN;
	rx = xcalloc(n, sizeof(*rx));
	ry = xcalloc(n, sizeof(*ry));
	rank(x, n, rx);
	rank(y, n, ry);
	/* Pearson's r of the ranks: the 1 - 6 sum d^2 / (n (n^2 - 1)) shortcut is wrong with ties
	 */
	for (size_t i = 0; i < n; i++) {
		sxy += (rx[i] - mean) * (ry[i] - mean);
		sxx += (rx[i] - mean) * (rx[i] - mean);
		syy += (ry[i] - mean) * (ry[i] - mean);
	}
	free(rx);
	free(ry);
	if (sxx == 0 || syy == 0)
		return NAN;
	return sxy / sqrt(sxx * syy);
}
