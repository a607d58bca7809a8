/* random_distribution: skewed block indices for random offsets, drawn the way fio draws them
 * (its lib/zipf.c and lib/gauss.c, read for the method; the code is ours). Each draw is a rank
 * from the distribution, scattered over the blocks by a multiplicative hash (so the hottest
 * blocks lie all over the region, not at its start) and rotated by an offset: the given
 * :center, or for zipf and pareto a random one from the thread's seed (so each thread has hot
 * blocks of its own, as each fio job has). Contracts in workload.h. */
#include "workload.h"

#include <math.h>
#include <string.h>

/* fio sums at most this many terms of zeta(n, theta); past it the sum is a constant. */
#define ZIPF_TERMS_MAX 10000000ull
/* Terms summed one by one before the Euler-Maclaurin tail takes over. */
#define ZIPF_TERMS_EXACT 1000ull
/* The draws averaged for fio's "normal" (an Irwin-Hall approximation of a Gaussian). */
#define NORMAL_DRAWS 12

/* Uniform in [0, 1), 53 bits. */
static double rand_unit(struct engine_rand *r)
{
	return (double)(engine_rand_next(r) >> 11) * 0x1.0p-53;
}

/* Scatter rank x over [0, n): Knuth's multiplicative hash (2^64 / golden ratio), reduced mod n.
 * Like fio's, it is not a bijection when n is not a power of two: some blocks take two ranks. */
static uint64_t scatter(uint64_t x, uint64_t n)
{
	return (x * 0x9e3779b97f4a7c15ull) % n;
}

double workload_zeta(uint64_t n, double theta)
{
	uint64_t m = n < ZIPF_TERMS_EXACT ? n : ZIPF_TERMS_EXACT;
	double sum = 0, a, b, fa, fb;

	for (uint64_t i = 1; i <= m; i++)
		sum += pow((double)i, -theta);
	if (n <= m)
		return sum;
	/* sum_{i=m+1}^{n} i^-theta by Euler-Maclaurin: the integral, the end corrections and
	 * two derivative terms; at m = 1000 the next term is below 1e-20 of the sum. */
	a = (double)m;
	b = (double)n;
	fa = pow(a, -theta);
	fb = pow(b, -theta);
	sum += (pow(b, 1 - theta) - pow(a, 1 - theta)) / (1 - theta) + (fb - fa) / 2;
	sum += -theta * (fb / b - fa / a) / 12;
	sum -= -theta * (theta + 1) * (theta + 2) * (fb / (b * b * b) - fa / (a * a * a)) / 720;
	return sum;
}

/* The rotation: `center` of n (normal: centred on the middle, so 0.5 is no rotation), else a
 * random one for zipf and pareto and none for normal, as fio does. */
static uint64_t dist_offset(int kind, double center, uint64_t n, struct engine_rand *r)
{
	double c;

	if (center < 0)
		return kind == ENGINE_DIST_NORMAL ? 0 : engine_rand_below(r, n);
	c = kind == ENGINE_DIST_NORMAL ? center - 0.5 : center;
	c = fmod(c * (double)n, (double)n);
	if (c < 0)
		c += (double)n;
	return (uint64_t)c % n;
}

void workload_dist_init(struct workload_dist *d, const struct job *job, uint64_t n,
			struct engine_rand *r)
{
	memset(d, 0, sizeof(*d));
	d->kind = job->dist;
	d->n = n ? n : 1;
	if (d->kind == ENGINE_DIST_RANDOM)
		return;
	d->off = dist_offset(d->kind, job->dist_center, d->n, r);
	switch (d->kind) {
	case ENGINE_DIST_ZIPF:
		/* Gray et al., "Quickly generating billion-record synthetic databases" (1994):
		 * ranks 1 and 2 exactly, the rest from the inverse of a continuous approximation.
		 */
		d->theta = job->dist_value;
		d->zetan = workload_zeta(d->n < ZIPF_TERMS_MAX ? d->n : ZIPF_TERMS_MAX, d->theta);
		d->zeta2 = 1 + pow(0.5, d->theta);
		d->alpha = 1 / (1 - d->theta);
		d->eta = (1 - pow(2.0 / (double)d->n, 1 - d->theta)) / (1 - d->zeta2 / d->zetan);
		break;
	case ENGINE_DIST_PARETO:
		d->pareto_pow = log(job->dist_value) / log(1 - job->dist_value);
		break;
	case ENGINE_DIST_NORMAL:
		/* the given percent of the region, as a uniform jitter of that width */
		d->jitter = (uint64_t)ceil((double)d->n * job->dist_value / 100.0);
		if (d->jitter > d->n / 2)
			d->jitter = d->n / 2;
		break;
	}
}

/* fio's "normal": the mean of NORMAL_DRAWS uniform draws over [0, n] (spread n/12 whatever the
 * deviation), plus a uniform jitter of the deviation's width, halved until it lands inside. */
static uint64_t normal_rank(const struct workload_dist *d, struct engine_rand *r)
{
	uint64_t sum = 0;
	int64_t dev;

	for (int i = 0; i < NORMAL_DRAWS; i++)
		sum += engine_rand_below(r, d->n + 1);
	sum = (sum + NORMAL_DRAWS - 1) / NORMAL_DRAWS;
	if (!d->jitter)
		return sum;
	dev = (int64_t)((double)d->jitter * rand_unit(r)) - (int64_t)(d->jitter / 2);
	while (dev && ((int64_t)sum + dev < 0 || (uint64_t)((int64_t)sum + dev) >= d->n))
		dev /= 2;
	return (uint64_t)((int64_t)sum + dev);
}

/* A zipf rank past the second from the continuous approximation; clamped to [0, n], as the
 * approximation's base can fall just outside its domain at the edges. */
static uint64_t zipf_tail(const struct workload_dist *d, double u)
{
	double x = (double)d->n * pow(d->eta * u - d->eta + 1, d->alpha);

	if (!(x >= 0)) /* NaN too */
		return 0;
	return x >= (double)d->n ? d->n : (uint64_t)x;
}

uint64_t workload_dist_next(const struct workload_dist *d, struct engine_rand *r)
{
	double u, z;
	uint64_t rank;

	switch (d->kind) {
	case ENGINE_DIST_ZIPF:
		u = rand_unit(r);
		z = u * d->zetan;
		if (z < 1)
			rank = 0;
		else if (z < d->zeta2)
			rank = 1;
		else
			rank = zipf_tail(d, u);
		break;
	case ENGINE_DIST_PARETO:
		rank = (uint64_t)((double)(d->n - 1) * pow(rand_unit(r), d->pareto_pow));
		break;
	case ENGINE_DIST_NORMAL:
		rank = normal_rank(d, r);
		break;
	default:
		return engine_rand_below(r, d->n);
	}
	return (scatter(rank, d->n) + d->off) % d->n;
}
