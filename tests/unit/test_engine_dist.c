/* Unit tests for random_distribution (guest/engine/workload_dist.c): the shape of zipf, pareto
 * and normal against what fio's own fio-genzipf printed for the same inputs, zeta(n) against a
 * plain sum, determinism under a seed, the :center rotation, and offsets through the runner's
 * generator (aligned, inside the region, concentrated). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "guest/engine/options.h"
#include "guest/engine/workload.h"

static void job_dist(struct job *job, const char *text)
{
	char msg[256];

	engine_job_init(job);
	if (engine_option_set(job, "random_distribution", text, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "%s\n", msg);
		CHECK(0);
	}
}

static int cmp_desc(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* fio-genzipf's two figures for n blocks and n draws: the blocks hit at least once, and the
 * share of all draws that fell on the most-hit tenth of those (its "Top 10.00%" row). */
static void genzipf(const char *text, uint64_t n, uint64_t seed, uint64_t *nodes, double *top)
{
	unsigned *h = calloc(n, sizeof(*h));
	struct workload_dist d;
	struct engine_rand r;
	struct job job;
	uint64_t hit = 0, step, sum = 0;

	CHECK(h != NULL);
	if (!h)
		return;
	job_dist(&job, text);
	engine_rand_seed(&r, seed);
	workload_dist_init(&d, &job, n, &r);
	for (uint64_t i = 0; i < n; i++)
		h[workload_dist_next(&d, &r)]++;
	qsort(h, n, sizeof(*h), cmp_desc);
	while (hit < n && h[hit])
		hit++;
	step = (hit - 1) / 10 + 1;
	for (uint64_t i = 0; i < step; i++)
		sum += h[i];
	*nodes = hit;
	*top = 100.0 * (double)sum / (double)n;
	free(h);
	engine_job_release(&job);
}

static void test_shape_vs_fio(void)
{
	/* fio-genzipf (fio 3.33) -t TYPE -i VALUE -g 1 -b BS: "Top 10.00%" hits and the number
	 * of distinct blocks (the CSV's rows); 1 GiB of 4 KiB blocks is 262144 (a power of two:
	 * the hash is a bijection), of 12 KiB blocks 87381 (it is not). */
	static const struct {
		const char *dist;
		uint64_t n;
		double top;
		uint64_t nodes;
	} cases[] = {
		{ "zipf:0.8", 262144, 51.54, 103408 },	 { "zipf:1.2", 262144, 88.76, 24711 },
		{ "zipf:2", 262144, 99.24, 617 },	 { "pareto:0.2", 262144, 63.55, 81013 },
		{ "pareto:0.4", 262144, 26.54, 151001 }, { "normal:0", 262144, 23.72, 86339 },
		{ "normal:10", 262144, 23.95, 89899 },	 { "normal:50", 262144, 22.83, 133619 },
		{ "zipf:1.2", 87381, 86.38, 9710 },	 { "pareto:0.2", 87381, 63.58, 26655 },
		{ "normal:10", 87381, 23.95, 29872 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t nodes = 0;
		double top = 0, rel;

		genzipf(cases[i].dist, cases[i].n, 1379, &nodes, &top);
		rel = fabs((double)nodes - (double)cases[i].nodes) / (double)cases[i].nodes;
		printf(
		    "%-11s n=%-6lu top 10%%: %6.2f%% (fio %6.2f%%), blocks hit %6lu (fio %6lu)\n",
		    cases[i].dist, (unsigned long)cases[i].n, top, cases[i].top,
		    (unsigned long)nodes, (unsigned long)cases[i].nodes);
		/* seeds move these by up to 0.3 points and 3% of the blocks (small n, zipf) */
		CHECK(fabs(top - cases[i].top) < 1.0);
		CHECK(rel < 0.05);
	}
}

static void test_zeta(void)
{
	static const double thetas[] = { 0.5, 0.8, 1.2, 2.0 };

	for (size_t t = 0; t < sizeof(thetas) / sizeof(thetas[0]); t++) {
		double direct = 0;

		for (uint64_t i = 1; i <= 1000000; i++)
			direct += pow((double)i, -thetas[t]);
		CHECK(fabs(workload_zeta(1000000, thetas[t]) - direct) / direct < 1e-12);
	}
	/* small n is the plain sum */
	CHECK(fabs(workload_zeta(3, 2.0) - (1 + 0.25 + 1.0 / 9)) < 1e-15);
}

/* The first `k` draws of a distribution from `seed`. */
static void draws(const char *text, uint64_t n, uint64_t seed, uint64_t *out, int k)
{
	struct workload_dist d;
	struct engine_rand r;
	struct job job;

	job_dist(&job, text);
	engine_rand_seed(&r, seed);
	workload_dist_init(&d, &job, n, &r);
	for (int i = 0; i < k; i++)
		out[i] = workload_dist_next(&d, &r);
	engine_job_release(&job);
}

static void test_seed_center(void)
{
	enum { K = 1000 };
	static uint64_t a[K], b[K];
	static const char *const kinds[] = { "zipf:1.2", "pareto:0.3", "normal:5" };
	const uint64_t n = 100003;
	int same, in_range;

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		draws(kinds[k], n, 42, a, K);
		draws(kinds[k], n, 42, b, K);
		CHECK(!memcmp(a, b, sizeof(a)));
		draws(kinds[k], n, 43, b, K);
		same = in_range = 0;
		for (int i = 0; i < K; i++) {
			same += a[i] == b[i];
			in_range += a[i] < n && b[i] < n;
		}
		CHECK(same < K / 2);
		CHECK(in_range == K);
	}
	/* :center rotates every draw by center * n (normal: by (center - 0.5) * n) */
	draws("zipf:1.2:0", n, 7, a, K);
	draws("zipf:1.2:0.25", n, 7, b, K);
	same = 0;
	for (int i = 0; i < K; i++)
		same += b[i] == (a[i] + n / 4) % n;
	CHECK(same == K);
	draws("normal:5", n, 7, a, K);
	draws("normal:5:0.5", n, 7, b, K);
	CHECK(!memcmp(a, b, sizeof(a)));
	draws("normal:5:1", n, 7, b, K);
	same = 0;
	for (int i = 0; i < K; i++)
		same += b[i] == (a[i] + n / 2) % n;
	CHECK(same == K);
}

/* Through the offset generator: 256 blocks of 4k from offset 64k. Offsets are aligned and
 * inside the region; with zipf:1.2 the hottest 10% of the blocks take the share a true Zipf
 * law gives its top 10% of ranks (H(25, 1.2) / H(256, 1.2) = 75.5%; the 256 blocks are a power
 * of two, so no two ranks share a block), within 3 points; uniform stays flat. */
static void test_offsets(void)
{
	enum { NBLK = 256, DRAWS = 100000 };
	static const char *const kinds[] = { "zipf:1.2", "random" };
	char msg[256];

	for (size_t k = 0; k < 2; k++) {
		unsigned h[NBLK] = { 0 };
		struct workload_offsets o;
		uint64_t off, top = 0;
		struct job job;
		int bad = 0;

		job_dist(&job, kinds[k]);
		CHECK(engine_option_set(&job, "rw", "randread", msg, sizeof(msg)) == 0);
		CHECK(engine_option_set(&job, "offset", "64k", msg, sizeof(msg)) == 0);
		workload_offsets_init(&o, &job, NBLK * 4096, 0);
		for (int i = 0; i < DRAWS; i++) {
			if (!workload_offsets_next(&o, &off) || off < 65536 ||
			    off + 4096 > 65536 + NBLK * 4096 || off % 4096) {
				bad++;
				continue;
			}
			h[(off - 65536) / 4096]++;
		}
		CHECK(bad == 0);
		qsort(h, NBLK, sizeof(h[0]), cmp_desc);
		for (int i = 0; i < NBLK / 10; i++)
			top += h[i];
		printf("%s over %d blocks: the hottest 10%% took %.1f%%\n", kinds[k], NBLK,
		       100.0 * (double)top / DRAWS);
		if (k == 0) {
			double h25 = 0, h256 = 0;

			for (int i = 1; i <= NBLK; i++)
				h256 += pow(i, -1.2);
			for (int i = 1; i <= NBLK / 10; i++)
				h25 += pow(i, -1.2);
			CHECK(fabs((double)top / DRAWS - h25 / h256) < 0.03);
		} else {
			CHECK(top < DRAWS * 15 / 100);
		}
		engine_job_release(&job);
	}
}

int main(void)
{
	test_shape_vs_fio();
	test_zeta();
	test_seed_center();
	test_offsets();
	return check_summary("engine_dist");
}
