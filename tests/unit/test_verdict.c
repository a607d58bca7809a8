/* builder/report/perm.c and the verdicts of builder/report/compare_verdict.c over case tables:
 * exact permutation p-values (checked against a brute-force enumeration written apart, in
 * Python), and verdicts that must come out different, same and undecided, so that none of the
 * three can be reached by a check that cannot fail. */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "core/util.h"
#include "report/compare_verdict.h"
#include "report/perm.h"

#define MAXP 24

/* B = A * exp(x[i]) for A = 100: the log ratios are exactly x. */
static void pairs_from_logs(const double *x, size_t n, double *a, double *b)
{
	for (size_t i = 0; i < n; i++) {
		a[i] = 100;
		b[i] = 100 * exp(x[i]);
	}
}

static const struct {
	const char *what;
	size_t n;
	double x[MAXP];
	double want_p;
} p_cases[] = {
	{ "3 pairs, all up: the smallest p of 3 pairs", 3, { 0.1, 0.1, 0.1 }, 0.25 },
	{ "6 pairs, all up: 2/64", 6, { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 }, 0.03125 },
	{ "4 mixed", 4, { 0.1, 0.2, -0.05, 0.15 }, 0.25 },
	{ "6 mixed", 6, { 0.1, 0.2, -0.05, 0.15, 0.12, 0.08 }, 0.0625 },
	{ "8 around zero", 8, { 0.01, -0.02, 0.03, 0.015, -0.01, 0.02, 0.025, 0.005 }, 0.1953125 },
	{ "all zero: p 1", 5, { 0, 0, 0, 0, 0 }, 1 },
};

static void test_p(void)
{
	for (size_t i = 0; i < sizeof(p_cases) / sizeof(p_cases[0]); i++) {
		double a[MAXP], b[MAXP];
		struct perm_result r;

		pairs_from_logs(p_cases[i].x, p_cases[i].n, a, b);
		CHECK(perm_paired_log(a, b, p_cases[i].n, 0.05, 1, &r) == 0);
		if (fabs(r.p - p_cases[i].want_p) > 1e-12)
			fprintf(stderr, "case '%s': p %.10g, want %.10g\n", p_cases[i].what, r.p,
				p_cases[i].want_p);
		CHECK(fabs(r.p - p_cases[i].want_p) <= 1e-12);
	}
}

static void test_min_pairs(void)
{
	CHECK(perm_min_pairs(0.05) == 6); /* 2/32 = 0.0625 > 0.05 >= 2/64 */
	CHECK(perm_min_pairs(0.01) == 8); /* 2/128 > 0.01 >= 2/256 */
	CHECK(perm_min_pairs(0.25) == 3);
}

static void test_edges(void)
{
	double a[3] = { 100, 0, 100 }, b[3] = { 110, 50, NAN };
	struct perm_result r;

	/* a zero and a NAN pair are left out: one pair is no test */
	CHECK(perm_paired_log(a, b, 3, 0.05, 1, &r) < 0 && r.n == 1 && isnan(r.p));
	/* with too few pairs to reach alpha there is no interval and nothing detectable */
	{
		double x[3] = { 0.2, 0.2, 0.2 }, aa[3], bb[3];

		pairs_from_logs(x, 3, aa, bb);
		CHECK(perm_paired_log(aa, bb, 3, 0.05, 1, &r) == 0);
		CHECK(r.ci_lo == 0 && isinf(r.ci_hi) && isinf(r.mde));
	}
}

/* Beyond PERM_EXACT_MAX pairs the sign flips are drawn from the seed: the same seed gives the
 * same p, and a clear change is still found. */
static void test_drawn(void)
{
	double x[20], a[20], b[20];
	struct perm_result r1, r2, r3;

	for (int i = 0; i < 20; i++)
		x[i] = 0.1 + 0.01 * ((i * 7) % 5 - 2);
	pairs_from_logs(x, 20, a, b);
	CHECK(perm_paired_log(a, b, 20, 0.05, 7, &r1) == 0);
	CHECK(perm_paired_log(a, b, 20, 0.05, 7, &r2) == 0);
	CHECK(r1.p == r2.p && r1.ci_lo == r2.ci_lo && r1.ci_hi == r2.ci_hi);
	CHECK(r1.p < 0.001);
	CHECK(r1.ci_lo > 1.09 && r1.ci_hi < 1.12);
	for (int i = 0; i < 20; i++)
		x[i] = 0.05 * ((i * 7) % 5 - 2);
	pairs_from_logs(x, 20, a, b);
	CHECK(perm_paired_log(a, b, 20, 0.05, 7, &r3) == 0);
	CHECK(r3.p > 0.5);
}

/* Timing verdicts: each line's pairs with a noise threshold of 5% at alpha 0.05, two-sided and
 * as the gates 'M < -5%' and 'M > 10%'. */
static const struct {
	const char *what;
	size_t n;
	double x[MAXP]; /* log ratios */
	enum verdict two_sided, gate_below, gate_above;
} timing_cases[] = {
	{ "+20% in 8 tight pairs",
	  8,
	  { 0.182, 0.184, 0.180, 0.183, 0.181, 0.185, 0.179, 0.182 },
	  VERDICT_DIFFERENT,
	  VERDICT_SAME,
	  VERDICT_DIFFERENT },
	{ "-20% in 8 tight pairs: the fall fails 'M < -5%'",
	  8,
	  { -0.222, -0.225, -0.220, -0.224, -0.221, -0.223, -0.226, -0.222 },
	  VERDICT_DIFFERENT,
	  VERDICT_DIFFERENT,
	  VERDICT_SAME },
	{ "within 0.5% in 8 pairs: the same",
	  8,
	  { 0.003, -0.004, 0.002, -0.001, 0.004, -0.003, 0.001, -0.002 },
	  VERDICT_SAME,
	  VERDICT_SAME,
	  VERDICT_SAME },
	{ "+3% in 8 tight pairs: real, but within the noise threshold",
	  8,
	  { 0.030, 0.029, 0.031, 0.030, 0.028, 0.031, 0.029, 0.030 },
	  VERDICT_SAME,
	  VERDICT_SAME,
	  VERDICT_SAME },
	{ "+-30% in 8 pairs: undecided",
	  8,
	  { 0.22, -0.36, 0.10, -0.22, 0.26, -0.16, 0.18, -0.29 },
	  VERDICT_UNDECIDED,
	  VERDICT_UNDECIDED,
	  VERDICT_UNDECIDED },
	{ "+20% in 3 pairs: too few pairs to decide anything",
	  3,
	  { 0.182, 0.184, 0.180 },
	  VERDICT_UNDECIDED,
	  VERDICT_UNDECIDED,
	  VERDICT_UNDECIDED },
	{ "+20% in 1 pair", 1, { 0.182 }, VERDICT_UNDECIDED, VERDICT_UNDECIDED, VERDICT_UNDECIDED },
};

static void test_timing(void)
{
	for (size_t i = 0; i < sizeof(timing_cases) / sizeof(timing_cases[0]); i++) {
		double a[MAXP], b[MAXP];
		struct perm_result r;
		enum verdict v[3];

		pairs_from_logs(timing_cases[i].x, timing_cases[i].n, a, b);
		perm_paired_log(a, b, timing_cases[i].n, 0.05, 1, &r);
		v[0] = verdict_timing(&r, r.p, 0.05, 5, 0);
		v[1] = verdict_timing(&r, r.p, 0.05, -5, 1);
		v[2] = verdict_timing(&r, r.p, 0.05, 10, -1);
		if (v[0] != timing_cases[i].two_sided || v[1] != timing_cases[i].gate_below ||
		    v[2] != timing_cases[i].gate_above)
			fprintf(stderr, "case '%s': %s %s %s (p %g, ci %g..%g)\n",
				timing_cases[i].what, verdict_name(v[0]), verdict_name(v[1]),
				verdict_name(v[2]), r.p, r.ci_lo, r.ci_hi);
		CHECK(v[0] == timing_cases[i].two_sided);
		CHECK(v[1] == timing_cases[i].gate_below);
		CHECK(v[2] == timing_cases[i].gate_above);
	}
}

static const struct {
	double a, b, pct;
	int below;
	enum verdict want;
} count_cases[] = {
	{ 1000, 1000, 1, 0, VERDICT_SAME },
	{ 1000, 1009, 1, 0, VERDICT_SAME },
	{ 1000, 1011, 1, 0, VERDICT_DIFFERENT },
	{ 1000, 989, 1, 0, VERDICT_DIFFERENT },
	{ 0, 0, 1, 0, VERDICT_SAME },
	{ 0, 3, 1, 0, VERDICT_DIFFERENT },	 /* from none to some is beyond any tolerance */
	{ 1000, 900, -5, 1, VERDICT_DIFFERENT }, /* 'M < -5%': a fall of 10% fails */
	{ 1000, 970, -5, 1, VERDICT_SAME },
	{ 1000, 2000, -5, 1, VERDICT_SAME },	  /* a rise passes a gate on falls */
	{ 1000, 1060, 5, -1, VERDICT_DIFFERENT }, /* 'M > 5%' */
	{ 1000, 1040, 5, -1, VERDICT_SAME },
};

static void test_count(void)
{
	for (size_t i = 0; i < sizeof(count_cases) / sizeof(count_cases[0]); i++) {
		enum verdict v = verdict_count(count_cases[i].a, count_cases[i].b,
					       count_cases[i].pct, count_cases[i].below);

		if (v != count_cases[i].want)
			fprintf(stderr, "count case %zu: %s\n", i, verdict_name(v));
		CHECK(v == count_cases[i].want);
	}
}

/* A run of one cell, 3 ok repeats of 1000 engine writes on a modelled HDD that seeked
 * `seeks` times and flushed 250 times in each; write IOPS `iops` (a timing, with noise). */
static int planted_run(struct report_run *run, const char *dir, int seeks, double iops)
{
	static const double noise[] = { 1.0, 1.3, 0.8 };
	json_t *recs = json_array();
	struct zb_error err = { 0 };

	for (int r = 0; r < 3; r++) {
		char *text = xasprintf(
		    "{\"cell\": \"c0\", \"index\": 0, \"repeat\": %d, \"outcome\": \"ok\", "
		    "\"summary\": \"hdd\", \"config\": {\"workload\": {\"bs\": \"4k\"}}, "
		    "\"fio\": {\"jobs\": [{\"write\": {\"iops\": %g, \"total_ios\": 1000}}]}, "
		    "\"disk_model\": {\"d0\": {\"model\": \"hdd-7200\", \"seeks\": %d, "
		    "\"flushes\": 250}}}",
		    r, iops * noise[r], seeks);

		json_array_append_new(recs, json_loads(text, 0, NULL));
		free(text);
	}
	return report_run_from(run, dir, json_object(), recs, &err);
}

/* The count tier on a modelled disk's figures (issue 29; builder/matrix/metrics.h's MODEL
 * rows): a branch that seeks 30% more per write is different, whatever its timing did, and
 * gated 'model_seeks_per_io > 5%' it fails; the same seeks are the same and pass, although
 * the timings spread 30% (the timing tier cannot decide them on 3 pairs). */
static void test_model_counts_planted(void)
{
	struct report_run a = { 0 }, more = { 0 }, same = { 0 };
	struct compare_gate g = { 0 };
	struct verdict_opts o = VERDICT_OPTS_DEFAULT;
	struct zb_error err = { 0 };
	const struct metric_def *seeks = metric_find("model_seeks_per_io");
	const struct metric_def *flushes = metric_find("model_flushes_per_io");

	CHECK(planted_run(&a, "a", 600, 100) == 0);
	CHECK(planted_run(&more, "more", 780, 100) == 0);
	CHECK(planted_run(&same, "same", 600, 130) == 0);
	CHECK(compare_gate_parse("model_seeks_per_io > 5%", &g, &err) == 0);
	CHECK(g.metric == seeks && seeks && seeks->is_count && flushes);
	for (int k = 0; k < 2; k++) {
		struct compare c = { 0 };
		struct compare_tiers t = { 0 };
		int seen_seeks = 0, seen_flushes = 0;

		CHECK(compare_runs(&a, k == 0 ? &more : &same, &c, &err) == 0);
		compare_tiers_analyse(&c, &g, 1, &o, &t);
		for (size_t i = 0; i < t.n_rows; i++) {
			const struct verdict_row *r = &t.rows[i];

			if (&metric_table[r->metric] == seeks) {
				seen_seeks = 1;
				CHECK(r->is_count && r->n_a == 3 && r->n_b == 3 && r->gate == 0);
				CHECK(fabs(r->change_pct - (k == 0 ? 30 : 0)) < 1e-9);
				CHECK(r->verdict == (k == 0 ? VERDICT_DIFFERENT : VERDICT_SAME));
				CHECK(r->gate_verdict ==
				      (k == 0 ? VERDICT_DIFFERENT : VERDICT_SAME));
			}
			if (&metric_table[r->metric] == flushes) {
				seen_flushes = 1; /* 250 flushes per 1000 writes on both sides */
				CHECK(r->mean_a == 0.25 && r->mean_b == 0.25);
				CHECK(r->verdict == VERDICT_SAME);
			}
		}
		CHECK(seen_seeks && seen_flushes);
		CHECK(compare_tiers_status(&t) == (k == 0 ? COMPARE_FAILED : COMPARE_PASSED));
		compare_tiers_release(&t);
		compare_release(&c);
	}
	compare_gate_release(&g);
	report_run_release(&a);
	report_run_release(&more);
	report_run_release(&same);
}

int main(void)
{
	test_p();
	test_min_pairs();
	test_edges();
	test_drawn();
	test_timing();
	test_count();
	test_model_counts_planted();
	return check_summary("verdict");
}
