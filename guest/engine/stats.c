/* Latency statistics: Welford moments, the log-linear histogram, series. See stats.h for the
 * bucket layout and its error bound. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>

const double stats_percentiles[STATS_NPERCENTILES] = {
	1.0,  5.0,  10.0, 20.0, 30.0, 40.0, 50.0,  60.0,  70.0,
	80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99,
};

void stats_lat_add(struct stats_lat *s, uint64_t v)
{
	double delta;

	if (s->n == 0 || v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	s->n++;
	delta = (double)v - s->mean;
	s->mean += delta / (double)s->n;
	s->m2 += delta * ((double)v - s->mean);
}

void stats_lat_merge(struct stats_lat *dst, const struct stats_lat *src)
{
	double n, delta;

	if (src->n == 0)
		return;
	if (dst->n == 0) {
		*dst = *src;
		return;
	}
	n = (double)dst->n + (double)src->n;
	delta = src->mean - dst->mean;
	dst->m2 += src->m2 + delta * delta * (double)dst->n * (double)src->n / n;
	dst->mean += delta * (double)src->n / n;
	dst->n += src->n;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

double stats_lat_stddev(const struct stats_lat *s)
{
	if (s->n < 2)
		return 0.0;
	return sqrt(s->m2 / (double)(s->n - 1));
}

unsigned stats_hist_index(uint64_t v)
{
	unsigned e;

	if (v < 2 * STATS_SUB)
		return (unsigned)v;
	e = (unsigned)(63 - __builtin_clzll(v)) - STATS_SUB_BITS;
	return e * STATS_SUB + (unsigned)(v >> e);
}

void stats_hist_bucket_bounds(unsigned idx, uint64_t *lo, uint64_t *hi)
{
	unsigned e, sub;

	if (idx < 2 * STATS_SUB) {
		*lo = *hi = idx;
		return;
	}
	/* idx = e * 64 + sub with sub in [64, 128) and e >= 1 */
	e = idx / STATS_SUB - 1;
	sub = idx - e * STATS_SUB;
	*lo = (uint64_t)sub << e;
	*hi = *lo + ((1ull << e) - 1);
}

uint64_t stats_hist_bucket_value(unsigned idx)
{
	uint64_t lo, hi;

	stats_hist_bucket_bounds(idx, &lo, &hi);
	return lo + (hi - lo) / 2;
}

void stats_hist_merge(struct stats_hist *dst, const struct stats_hist *src)
{
	for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
}

uint64_t stats_hist_percentile(const struct stats_hist *h, double p, uint64_t min, uint64_t max)
{
	uint64_t rank, cum = 0, v;

	if (h->count == 0)
		return 0;
	rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	/* The extreme ranks are known exactly. */
	if (min <= max && rank == h->count)
		return max;
	if (min <= max && rank == 1)
		return min;
	for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++) {
		cum += h->bucket[i];
		if (cum >= rank) {
			v = stats_hist_bucket_value(i);
			if (min <= max) {
				if (v < min)
					v = min;
				if (v > max)
					v = max;
			}
			return v;
		}
	}
	return max; /* not reached when count matches the buckets */
}

int stats_series_push(struct stats_series *s, double v)
{
	if (s->n == s->cap) {
		unsigned cap = s->cap ? 2 * s->cap : 64;
		double *nv = realloc(s->v, cap * sizeof(*nv));

		if (!nv)
			return -1;
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = v;
	return 0;
}

void stats_series_release(struct stats_series *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

void stats_series_summary(const struct stats_series *s, double *min, double *max, double *mean,
			  double *stddev)
{
	struct stats_lat m = { 0 };
	double lo = 0, hi = 0, d;

	for (unsigned i = 0; i < s->n; i++) {
		lo = (i == 0 || s->v[i] < lo) ? s->v[i] : lo;
		hi = (i == 0 || s->v[i] > hi) ? s->v[i] : hi;
		m.n++;
		d = s->v[i] - m.mean;
		m.mean += d / (double)m.n;
		m.m2 += d * (s->v[i] - m.mean);
	}
	*min = lo;
	*max = hi;
	*mean = m.mean;
	*stddev = stats_lat_stddev(&m);
}
