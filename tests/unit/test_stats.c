/* builder/core/stats.c against known values (reference values from mpmath at 30 digits, and the
 * closed forms noted beside each case). */
#include <math.h>

#include "check.h"
#include "core/stats.h"

/* |got - want| within tol, relative to |want| when that is above 1 */
static int close_to(double got, double want, double tol)
{
	return fabs(got - want) <= tol * (fabs(want) > 1 ? fabs(want) : 1);
}

#define CLOSE(a, b, tol) close_to((a), (b), (tol))

static const struct {
	double a, b, x, want;
} betai_cases[] = {
	{ 1, 1, 0.3, 0.3 },    /* I_x(1,1) = x */
	{ 3, 1, 0.5, 0.125 },  /* I_x(a,1) = x^a */
	{ 1, 4, 0.5, 0.9375 }, /* I_x(1,b) = 1 - (1-x)^b */
	{ 7, 7, 0.5, 0.5 },    /* symmetry */
	{ 0.5, 0.5, 0.3, 0.36901011956554538 },
	{ 2, 3, 0.4, 0.5248 },
	{ 10, 0.5, 0.9, 0.15164090963470997 },
	{ 0.5, 10, 0.01, 0.34207182484321553 },
	{ 100, 100, 0.45, 0.07838793271222053 },
	{ 2.5, 0.5, 0.999, 0.94634234530818643 },
	{ 0, 1, 0.5, NAN },
	{ 1, 1, 1.5, NAN },
	{ 2, 2, 0, 0 },
	{ 2, 2, 1, 1 },
};

static const struct {
	double t, df, want;
} tcdf_cases[] = {
	{ 1, 1, 0.75 },		       /* Cauchy: 1/2 + atan(t)/pi */
	{ 1, 2, 0.78867513459481287 }, /* df 2: 1/2 + t / (2 sqrt(2 + t^2)) */
	{ 0, 7, 0.5 },
	{ 2.0, 5, 0.94903026058507082 },
	{ -1.5, 3.3, 0.11125159835964593 }, /* fractional df, as Welch's */
	{ 0.3, 100, 0.61760005984984826 },
	{ 10, 2, 0.99507377148833715 },
	{ -4, 1, 0.077979130377369325 },
	{ INFINITY, 3, 1 },
	{ -INFINITY, 3, 0 },
};

/* two-sided 95%: the familiar table */
static const struct {
	double df, want;
} t975_cases[] = {
	{ 1, 12.7062047362 }, { 2, 4.30265272975 },   { 3, 3.18244630528 },  { 4, 2.7764451052 },
	{ 5, 2.57058183564 }, { 9, 2.2621571628 },    { 10, 2.22813885199 }, { 29, 2.04522964213 },
	{ 30, 2.0422724563 }, { 100, 1.98397151852 },
};

static void test_betai(void)
{
	for (size_t i = 0; i < sizeof(betai_cases) / sizeof(betai_cases[0]); i++) {
		double got = stats_betai(betai_cases[i].a, betai_cases[i].b, betai_cases[i].x);

		if (isnan(betai_cases[i].want)) {
			CHECK(isnan(got));
		} else {
			CHECK(CLOSE(got, betai_cases[i].want, 1e-12));
			if (!CLOSE(got, betai_cases[i].want, 1e-12))
				fprintf(stderr, "  betai case %zu: got %.17g\n", i, got);
		}
	}
	/* a deep tail keeps its relative precision instead of rounding to 0 */
	CHECK(CLOSE(stats_betai(30, 0.5, 0.2) / 1.2265219714158839e-22, 1, 1e-10));
}

static void test_t(void)
{
	for (size_t i = 0; i < sizeof(tcdf_cases) / sizeof(tcdf_cases[0]); i++) {
		double got = stats_t_cdf(tcdf_cases[i].t, tcdf_cases[i].df);

		CHECK(CLOSE(got, tcdf_cases[i].want, 1e-12));
		if (!CLOSE(got, tcdf_cases[i].want, 1e-12))
			fprintf(stderr, "  t_cdf case %zu: got %.17g\n", i, got);
	}
	for (size_t i = 0; i < sizeof(t975_cases) / sizeof(t975_cases[0]); i++) {
		double got = stats_t_quantile(0.975, t975_cases[i].df);

		CHECK(CLOSE(got, t975_cases[i].want, 1e-9));
		CHECK(CLOSE(stats_t_quantile(0.025, t975_cases[i].df), -t975_cases[i].want, 1e-9));
	}
	CHECK(stats_t_quantile(0.5, 4) == 0);
	CHECK(isnan(stats_t_quantile(1, 4)));
	CHECK(isnan(stats_t_cdf(1, 0)));
}

static void test_summary(void)
{
	/* 2 4 4 4 5 5 7 9: mean 5, sample sd sqrt(32/7) */
	static const double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	/* large values with small spread: the two-pass variance keeps the digits */
	static const double big[] = { 1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16 };
	struct stats_summary s;

	stats_summarize(x, 8, &s);
	CHECK(s.n == 8);
	CHECK(CLOSE(s.mean, 5, 1e-15));
	CHECK(CLOSE(s.sd, sqrt(32.0 / 7), 1e-14));
	CHECK(CLOSE(s.cv, sqrt(32.0 / 7) / 5, 1e-14));
	/* t(0.975, 7) = 2.36462425159278 */
	CHECK(CLOSE(s.ci_half, 2.36462425159278 * sqrt(32.0 / 7) / sqrt(8), 1e-9));
	CHECK(CLOSE(s.ci_lo, 5 - s.ci_half, 1e-15));
	CHECK(CLOSE(s.ci_hi, 5 + s.ci_half, 1e-15));

	stats_summarize(big, 4, &s);
	CHECK(CLOSE(s.sd, sqrt(30.0), 1e-9));

	stats_summarize(x, 1, &s);
	CHECK(s.n == 1 && s.mean == 2 && isnan(s.sd) && isnan(s.cv) && isnan(s.ci_half));
	stats_summarize(x, 0, &s);
	CHECK(s.n == 0 && isnan(s.mean));
}

static void test_welch(void)
{
	/* Wikipedia's first Welch example: t = -2.46, df = 24.99, p = 0.021 */
	static const double a1[] = { 27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
				     21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4 };
	static const double a2[] = { 27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
				     24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4 };
	static const double b1[] = { 10, 11, 12 }, b2[] = { 20, 22, 25, 21 };
	static const double c1[] = { 100, 101 }, c2[] = { 99, 103, 98.5 };
	static const double same[] = { 5, 5, 5 }, other[] = { 6, 6 };
	struct stats_welch w;

	CHECK(stats_welch(a1, 15, a2, 15, &w) == 0);
	CHECK(CLOSE(w.t, -2.45535639828601, 1e-12));
	CHECK(CLOSE(w.df, 24.9885292902314, 1e-12));
	CHECK(CLOSE(w.p, 0.021378001462867, 1e-10));

	CHECK(stats_welch(b1, 3, b2, 4, &w) == 0);
	CHECK(CLOSE(w.t, -8.98146239020499, 1e-12));
	CHECK(CLOSE(w.df, 4.41818181818182, 1e-12));
	CHECK(CLOSE(w.p, 0.000530949646203261, 1e-10));

	CHECK(stats_welch(c1, 2, c2, 3, &w) == 0);
	CHECK(CLOSE(w.t, 0.22086305214969, 1e-12));
	CHECK(CLOSE(w.df, 2.44909852485886, 1e-12));
	CHECK(CLOSE(w.p, 0.842287203285369, 1e-10));

	/* the test is symmetric in its p-value */
	{
		struct stats_welch r;

		stats_welch(c2, 3, c1, 2, &r);
		CHECK(CLOSE(r.p, w.p, 1e-14) && CLOSE(r.t, -w.t, 1e-14));
	}

	CHECK(stats_welch(c1, 1, c2, 3, &w) < 0 && isnan(w.p));
	CHECK(stats_welch(same, 3, same, 3, &w) == 0 && w.p == 1);
	CHECK(stats_welch(same, 3, other, 2, &w) == 0 && w.p == 0);
}

static void test_spearman(void)
{
	static const double x[] = { 1, 2, 3, 4, 5 };
	static const double y[] = { 2, 1, 4, 3, 5 }; /* sum d^2 = 4: 1 - 24/120 = 0.8 */
	static const double down[] = { 50, 40, 30, 20, 10 };
	static const double tx[] = { 1, 2, 2, 3 }, ty[] = { 1, 2, 3, 4 }; /* 4.5/sqrt(22.5) */
	static const double flat[] = { 3, 3, 3 };
	/* monotonic but not linear: rank correlation is exactly 1 */
	static const double curve[] = { 1, 8, 27, 64, 125 };

	CHECK(CLOSE(stats_spearman(x, y, 5), 0.8, 1e-15));
	CHECK(CLOSE(stats_spearman(x, down, 5), -1, 1e-15));
	CHECK(CLOSE(stats_spearman(x, curve, 5), 1, 1e-15));
	CHECK(CLOSE(stats_spearman(tx, ty, 4), 4.5 / sqrt(22.5), 1e-15));
	CHECK(isnan(stats_spearman(x, flat, 3)));
	CHECK(isnan(stats_spearman(x, y, 1)));
}

/* Paired t-test on log ratios: reference values from mpmath at 30 digits (ln(b/a), its mean and
 * sample sd, t = mean / (sd / sqrt(n)), p = I_{df/(df+t^2)}(df/2, 1/2), CI exp(mean -/+ q se)
 * with q the t quantile 0.975). */
static const struct {
	double a[5], b[5];
	size_t n;
	double ratio, t, p, lo, hi;
} paired_cases[] = {
	{ { 100, 110, 95, 105, 102 },
	  { 90, 101, 88, 93, 95 },
	  5,
	  0.91215673594618052,
	  -9.7994541860358827,
	  0.00060782622427821996,
	  0.88870186581529709,
	  0.93623063362051566 },
	{ { 10, 12, 11 },
	  { 11, 12.5, 11.2 },
	  3,
	  1.0527265996093965,
	  2.2410257148397665,
	  0.15431162937674282,
	  0.95382963733905506,
	  1.1618776038631541 },
	{ { 50, 60 },
	  { 55, 57 },
	  2,
	  1.0222524150130436,
	  0.30024449051708554,
	  0.81431005558602245,
	  0.40277449623159325,
	  2.5945038967887639 },
};

static void test_paired(void)
{
	struct stats_paired st;

	for (size_t i = 0; i < sizeof(paired_cases) / sizeof(paired_cases[0]); i++) {
		CHECK(stats_paired_log(paired_cases[i].a, paired_cases[i].b, paired_cases[i].n,
				       &st) == 0);
		CHECK(st.n == paired_cases[i].n);
		CHECK(CLOSE(st.ratio, paired_cases[i].ratio, 1e-12));
		CHECK(CLOSE(st.t, paired_cases[i].t, 1e-9));
		CHECK(CLOSE(st.p, paired_cases[i].p, 1e-9));
		CHECK(CLOSE(st.ci_lo, paired_cases[i].lo, 1e-7));
		CHECK(CLOSE(st.ci_hi, paired_cases[i].hi, 1e-7));
	}
	/* a pair with a zero is left out: one pair left, no test */
	CHECK(stats_paired_log((double[]){ 1, 0 }, (double[]){ 2, 3 }, 2, &st) < 0);
	CHECK(st.n == 1 && isnan(st.p) && isnan(st.ratio));
	/* the same ratio in every pair: certain */
	CHECK(stats_paired_log((double[]){ 1, 2, 4 }, (double[]){ 2, 4, 8 }, 3, &st) == 0);
	CHECK(st.p == 0 && CLOSE(st.ratio, 2, 1e-12) && CLOSE(st.ci_lo, 2, 1e-12));
	CHECK(stats_paired_log((double[]){ 3, 5 }, (double[]){ 3, 5 }, 2, &st) == 0);
	CHECK(st.p == 1 && CLOSE(st.ratio, 1, 1e-12));
}

static void test_holm(void)
{
	double adj[4];

	/* sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> 0.06 */
	stats_holm((double[]){ 0.01, 0.04, 0.03, 0.005 }, 4, adj);
	CHECK(CLOSE(adj[3], 0.02, 1e-15) && CLOSE(adj[0], 0.03, 1e-15));
	CHECK(CLOSE(adj[2], 0.06, 1e-15) && CLOSE(adj[1], 0.06, 1e-15));
	/* a NAN is no test: two tests */
	stats_holm((double[]){ 0.01, NAN, 0.04 }, 3, adj);
	CHECK(CLOSE(adj[0], 0.02, 1e-15) && isnan(adj[1]) && CLOSE(adj[2], 0.04, 1e-15));
	/* capped at 1 */
	stats_holm((double[]){ 0.6, 0.7 }, 2, adj);
	CHECK(adj[0] == 1 && adj[1] == 1);
	/* in place (adj == p), as compare's families call it: the same as apart */
	{
		double p[] = { 0.01, NAN, 0.04, 0.03, 0.005 };

		stats_holm(p, 5, p);
		CHECK(CLOSE(p[4], 0.02, 1e-15) && CLOSE(p[0], 0.03, 1e-15) && isnan(p[1]));
		CHECK(CLOSE(p[3], 0.06, 1e-15) && CLOSE(p[2], 0.06, 1e-15));
	}
}

int main(void)
{
	test_betai();
	test_t();
	test_summary();
	test_welch();
	test_spearman();
	test_paired();
	test_holm();
	return check_summary("stats");
}
