/* Latency statistics for the workload engine.
 *
 * struct stats_lat keeps count, min, max and Welford's running mean and sum of squared
 * deviations (numerically stable, mergeable with Chan's formula). struct stats_hist is a
 * log-linear histogram in the spirit of HdrHistogram and fio's own: values below 2 * 64 ns have a
 * bucket each (exact); above, every power-of-two range [2^k, 2^(k+1)) is split into 64 linear
 * sub-buckets of width 2^(k-6). A bucket's width is at most 1/64 of its lower bound, and a value
 * is reported as its bucket's midpoint, so a reported percentile is within 1/128 (0.79%) of the
 * exact sample at that rank (and exact below 128 ns). The full uint64 range is covered, in
 * STATS_HIST_BUCKETS counters (30 KiB). */
#ifndef ZB_ENGINE_STATS_H
#define ZB_ENGINE_STATS_H

#include <stdint.h>

#define STATS_SUB_BITS 6
#define STATS_SUB      (1u << STATS_SUB_BITS)
/* index = e * 64 + (v >> e), e = max(0, msb(v) - 6); the largest is 57 * 64 + 127. */
#define STATS_HIST_BUCKETS ((64 - STATS_SUB_BITS - 1) * STATS_SUB + 2 * STATS_SUB)

struct stats_lat {
	uint64_t n;
	uint64_t min, max;
	double mean, m2; /* Welford: running mean, sum of squared deviations */
};

struct stats_hist {
	uint64_t count;
	uint64_t bucket[STATS_HIST_BUCKETS];
};

/* fio's default percentile list (percentile_list=). */
#define STATS_NPERCENTILES 17
extern const double stats_percentiles[STATS_NPERCENTILES];

void stats_lat_add(struct stats_lat *s, uint64_t v);
/* Fold `src` into `dst` (the same as having added all of src's values to dst). */
void stats_lat_merge(struct stats_lat *dst, const struct stats_lat *src);
double stats_lat_stddev(const struct stats_lat *s); /* sample stddev (n - 1), 0 if n < 2 */

unsigned stats_hist_index(uint64_t v);
/* The value a bucket reports: its midpoint (exact buckets: the value itself). */
uint64_t stats_hist_bucket_value(unsigned idx);
/* Bounds of a bucket: [lo, hi] inclusive. */
void stats_hist_bucket_bounds(unsigned idx, uint64_t *lo, uint64_t *hi);
static inline void stats_hist_add(struct stats_hist *h, uint64_t v)
{
	h->bucket[stats_hist_index(v)]++;
	h->count++;
}
void stats_hist_merge(struct stats_hist *dst, const struct stats_hist *src);
/* The value at percentile p (0 < p <= 100): the bucket holding the sample of rank ceil(p/100*N),
 * reported as its midpoint clamped to [min, max] when those are given (min <= max; then rank 1
 * is min and rank N is max, exactly). 0 if empty. */
uint64_t stats_hist_percentile(const struct stats_hist *h, double p, uint64_t min, uint64_t max);

/* A time series of per-interval values (per-second IOPS, bandwidth, ...). */
struct stats_series {
	double *v;
	unsigned n, cap;
};
int stats_series_push(struct stats_series *s, double v);
void stats_series_release(struct stats_series *s);
/* min, max, mean and sample stddev of the series (all 0 if empty). */
void stats_series_summary(const struct stats_series *s, double *min, double *max, double *mean,
			  double *stddev);

#endif
