/* Unit tests for guest/engine/stats.c: the histogram's percentile error bound against exact
 * sorted samples, bucket layout, Welford moments and merging. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "guest/engine/stats.h"
#include "guest/engine/workload.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Draw n values with the given shape, check every default percentile within 1/128. */
static void check_percentiles(const char *shape, unsigned n, uint64_t seed)
{
	struct stats_hist *h = calloc(1, sizeof(*h));
	uint64_t *v = malloc(n * sizeof(*v));
	struct engine_rand r;
	int bad = 0;

	engine_rand_seed(&r, seed);
	for (unsigned i = 0; i < n; i++) {
		uint64_t x;

		if (!strcmp(shape, "uniform"))
			x = engine_rand_below(&r, 1000000);
		else if (!strcmp(shape, "small"))
			x = engine_rand_below(&r, 300);
		else /* lognormal-ish: spans ns to seconds */
			x = (uint64_t)exp(4.0 + 16.0 * (double)engine_rand_below(&r, 1u << 20) /
						    (double)(1u << 20));
		v[i] = x;
		stats_hist_add(h, x);
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	for (int i = 0; i < STATS_NPERCENTILES; i++) {
		double p = stats_percentiles[i];
		uint64_t rank = (uint64_t)ceil(p / 100.0 * n), exact, got;
		double err;

		if (rank < 1)
			rank = 1;
		exact = v[rank - 1];
		got = stats_hist_percentile(h, p, v[0], v[n - 1]);
		err = exact ? fabs((double)got - (double)exact) / (double)exact : (double)got;
		if (err > 1.0 / 128 + 1e-12) {
			fprintf(stderr, "%s p%g: exact %llu got %llu (err %.4f)\n", shape, p,
				(unsigned long long)exact, (unsigned long long)got, err);
			bad++;
		}
		if (exact < 128)
			CHECK(got == exact);
	}
	CHECK(bad == 0);
	free(v);
	free(h);
}

static void test_bucket_layout(void)
{
	static const uint64_t probes[] = { 0,	 1,    63,	  64,	      127,
					   128,	 129,  255,	  256,	      1000,
					   4095, 4096, 123456789, 1ull << 40, UINT64_MAX };
	unsigned prev = 0;

	CHECK(stats_hist_index(UINT64_MAX) == STATS_HIST_BUCKETS - 1);
	for (unsigned i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		uint64_t lo, hi, v = probes[i];
		unsigned idx = stats_hist_index(v);

		stats_hist_bucket_bounds(idx, &lo, &hi);
		CHECK(lo <= v && v <= hi);
		CHECK((double)(hi - lo + 1) <= (double)lo / 64.0 + 1 || hi == lo);
		CHECK(idx >= prev);
		prev = idx;
	}
	/* Buckets tile the line: each starts right after the previous one. */
	for (unsigned i = 1; i < STATS_HIST_BUCKETS; i++) {
		uint64_t lo, hi, plo, phi;

		stats_hist_bucket_bounds(i - 1, &plo, &phi);
		stats_hist_bucket_bounds(i, &lo, &hi);
		if (lo != phi + 1) {
			CHECK(lo == phi + 1);
			break;
		}
	}
}

static void test_welford_merge(void)
{
	struct stats_lat all = { 0 }, a = { 0 }, b = { 0 }, empty = { 0 };
	static const uint64_t vals[] = { 5, 7, 1000, 3, 3, 9, 12, 50000, 8, 1 };
	double mean = 0, var = 0;
	unsigned n = sizeof(vals) / sizeof(vals[0]);

	for (unsigned i = 0; i < n; i++) {
		stats_lat_add(&all, vals[i]);
		stats_lat_add(i < 4 ? &a : &b, vals[i]);
		mean += (double)vals[i] / n;
	}
	for (unsigned i = 0; i < n; i++)
		var += ((double)vals[i] - mean) * ((double)vals[i] - mean) / (n - 1);
	stats_lat_merge(&a, &b);
	stats_lat_merge(&a, &empty);
	CHECK(a.n == n && all.n == n);
	CHECK(a.min == 1 && a.max == 50000);
	CHECK(fabs(a.mean - mean) < 1e-9 && fabs(all.mean - mean) < 1e-9);
	CHECK(fabs(stats_lat_stddev(&a) - sqrt(var)) < 1e-6);
	CHECK(fabs(stats_lat_stddev(&all) - sqrt(var)) < 1e-6);
	stats_lat_merge(&empty, &all);
	CHECK(empty.n == n && empty.min == 1);
}

static void test_hist_merge(void)
{
	struct stats_hist *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

	for (uint64_t v = 1; v < 100000; v += 7)
		stats_hist_add(v % 2 ? a : b, v);
	stats_hist_merge(a, b);
	CHECK(a->count == (100000 - 1 + 6) / 7);
	CHECK(stats_hist_percentile(a, 100, 1, 99996) == 99996);
	CHECK(stats_hist_percentile(b, 50, 1, 0) != 0); /* min > max: no clamping */
	free(a);
	free(b);
}

static void test_series(void)
{
	struct stats_series s = { 0 };
	double mn, mx, mean, sd;

	stats_series_summary(&s, &mn, &mx, &mean, &sd);
	CHECK(mn == 0 && mx == 0 && mean == 0 && sd == 0);
	for (int i = 1; i <= 100; i++)
		stats_series_push(&s, i);
	stats_series_summary(&s, &mn, &mx, &mean, &sd);
	CHECK(mn == 1 && mx == 100 && fabs(mean - 50.5) < 1e-9);
	CHECK(fabs(sd - 29.011491975882) < 1e-6);
	stats_series_release(&s);
}

int main(void)
{
	static const struct {
		const char *shape;
		unsigned n;
		uint64_t seed;
	} cases[] = {
		{ "uniform", 100000, 1 }, { "uniform", 7, 2 }, { "small", 5000, 3 },
		{ "wide", 200000, 4 },	  { "wide", 1, 5 },    { "wide", 1000, 6 },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_percentiles(cases[i].shape, cases[i].n, cases[i].seed);
	test_bucket_layout();
	test_welford_merge();
	test_hist_merge();
	test_series();
	return check_summary("engine_stats");
}
