/* One fio-shaped result as one fio job (builder/report/export.h): what fio-plot's importer needs
 * (one job per file, complete "job options") and what fio's clat tools need (clat_ns.bins). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "export.h"
#include "guest/engine/options.h"

static const char *const ddirs[] = { "read", "write", "trim" };

static double num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* A double from a record as a JSON integer: NaN is 0, anything beyond int64 the nearest end
 * (a cast out of range is undefined behaviour). */
static json_int_t to_int(double d)
{
	if (!(d == d))
		return 0;
	if (d >= 9223372036854775807.0)
		return INT64_MAX;
	if (d <= -9223372036854775808.0)
		return INT64_MIN;
	return (json_int_t)d;
}

/* a + b of non-negative counts, saturating at INT64_MAX (a record's counts may be anything). */
static json_int_t count_add(json_int_t a, json_int_t b)
{
	a = a > 0 ? a : 0;
	b = b > 0 ? b : 0;
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static int bin_cmp(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;

	return (a[0] > b[0]) - (a[0] < b[0]);
}

/* Sum `key` of every job's direction into `dst`, as an integer when the first one is. */
static void sum_field(json_t *dst, const json_t *jobs, const char *dir, const char *key)
{
	double s = 0;
	size_t i;
	json_t *job;

	json_array_foreach (jobs, i, job)
		s += num(json_object_get(job, dir), key);
	if (json_is_integer(json_object_get(dst, key)))
		json_object_set_new(dst, key, json_integer(to_int(s)));
	else if (json_object_get(dst, key))
		json_object_set_new(dst, key, json_real(s));
}

/* fio's percentile of bins ({"ns": count}): the smallest value whose cumulative count reaches
 * ceil(p/100 * N). */
static json_t *percentiles_from_bins(const json_t *bins, const json_t *like)
{
	size_t n = json_object_size(bins), k = 0;
	uint64_t(*v)[2] = xcalloc(n ? n : 1, sizeof(*v)), total = 0;
	json_t *out = json_object(), *c;
	const char *key;

	json_object_foreach ((json_t *)bins, key, c) {
		v[k][0] = strtoull(key, NULL, 10);
		v[k][1] = json_is_integer(c) && json_integer_value(c) > 0
			      ? (uint64_t)json_integer_value(c)
			      : 0;
		total = v[k][1] > UINT64_MAX - total ? UINT64_MAX : total + v[k][1];
		k++;
	}
	/* n log n: a record may carry any number of bins (160k took 9 s with an insertion sort) */
	qsort(v, n, sizeof(*v), bin_cmp);
	json_object_foreach ((json_t *)like, key, c) {
		/* p clamped to [0, 100] (a key is record text: 1e300, -5, nan), rank at least 1 */
		double p = strtod(key, NULL);
		long double r;
		uint64_t rank, cum = 0, at = 0;

		p = p == p ? fmin(fmax(p, 0), 100) : 100;
		/* long double: the rank of a total near 2^64 stays exact (double rounds by 2048) */
		r = ceill((long double)p / 100.0L * (long double)total);
		rank = r < 1 ? 1 : r >= (long double)total ? total : (uint64_t)r;
		for (size_t i = 0; i < n; i++) {
			cum = v[i][1] > UINT64_MAX - cum ? UINT64_MAX : cum + v[i][1];
			at = v[i][0];
			if (cum >= rank)
				break;
		}
		json_object_set_new(out, key,
				    json_integer(at > INT64_MAX ? INT64_MAX : (json_int_t)at));
	}
	free(v);
	return out;
}

/* Pool one latency object (min, max, mean, stddev, N; bins, percentile) of every job. */
static void merge_lat(json_t *dst, const json_t *jobs, const char *dir, const char *lat)
{
	double n = 0, sum = 0, sq = 0, mn = INFINITY, mx = 0;
	json_t *job, *bins = NULL, *pct = NULL;
	int has_bins = 1;
	size_t i;

	json_array_foreach (jobs, i, job) {
		const json_t *l = json_object_get(json_object_get(job, dir), lat);
		double ni = num(l, "N"), mi = num(l, "mean"), si = num(l, "stddev");
		const json_t *b = json_object_get(l, "bins"), *p = json_object_get(l, "percentile");
		const char *key;
		json_t *c;

		if (ni <= 0)
			continue;
		n += ni, sum += ni * mi, sq += ni * (si * si + mi * mi);
		mn = fmin(mn, num(l, "min")), mx = fmax(mx, num(l, "max"));
		if (!json_is_object(b))
			has_bins = 0;
		else {
			if (!bins)
				bins = json_object();
			json_object_foreach ((json_t *)b, key, c) {
				json_int_t was = json_integer_value(json_object_get(bins, key));

				json_object_set_new(
				    bins, key, json_integer(count_add(was, json_integer_value(c))));
			}
		}
		/* without bins: the largest of the jobs' (an upper bound, as the report) */
		if (json_is_object(p)) {
			if (!pct)
				pct = json_deep_copy(p);
			json_object_foreach ((json_t *)p, key, c)
				if (json_number_value(c) >
				    json_number_value(json_object_get(pct, key)))
					json_object_set(pct, key, c);
		}
	}
	if (n <= 0) {
		json_decref(bins);
		json_decref(pct);
		return;
	}
	json_object_set_new(dst, "N", json_integer(to_int(n)));
	json_object_set_new(dst, "min", json_integer(to_int(mn)));
	json_object_set_new(dst, "max", json_integer(to_int(mx)));
	json_object_set_new(dst, "mean", json_real(sum / n));
	json_object_set_new(dst, "stddev",
			    json_real(sqrt(fmax(0, sq / n - (sum / n) * (sum / n)))));
	if (bins && has_bins) {
		if (pct)
			json_object_set_new(dst, "percentile", percentiles_from_bins(bins, pct));
		json_object_set_new(dst, "bins", bins);
		bins = NULL;
	} else if (pct) {
		json_object_set(dst, "percentile", pct);
		json_object_del(dst, "bins");
	}
	json_decref(bins);
	json_decref(pct);
}

/* fio's latency_ns/us/ms shares, weighted by each job's I/Os. */
static void merge_shares(json_t *dst, const json_t *jobs)
{
	static const char *const groups[] = { "latency_ns", "latency_us", "latency_ms" };
	double total = 0;
	size_t i;
	json_t *job;

	json_array_foreach (jobs, i, job)
		for (int d = 0; d < 3; d++)
			total += num(json_object_get(job, ddirs[d]), "total_ios");
	for (int g = 0; g < 3; g++) {
		json_t *out = json_object_get(dst, groups[g]), *c;
		const char *key;

		json_object_foreach (out, key, c) {
			double s = 0;

			json_array_foreach (jobs, i, job) {
				double w = 0;

				for (int d = 0; d < 3; d++)
					w += num(json_object_get(job, ddirs[d]), "total_ios");
				s += w * num(json_object_get(job, groups[g]), key);
			}
			json_object_set_new(out, key, json_real(total > 0 ? s / total : 0));
		}
	}
}

static void merge_jobs(json_t *dst, const json_t *jobs)
{
	static const char *const sums[] = { "io_bytes", "io_kbytes", "bw_bytes",  "bw",
					    "iops",	"total_ios", "short_ios", "drop_ios",
					    "bw_mean",	"iops_mean", "bw_min",	  "bw_max",
					    "iops_min", "iops_max" };
	size_t n = json_array_size(jobs), i;
	json_t *job;

	for (int d = 0; d < 3; d++) {
		json_t *o = json_object_get(dst, ddirs[d]);
		double var = 0, rt = 0;

		if (!json_is_object(o))
			continue;
		for (size_t k = 0; k < sizeof(sums) / sizeof(sums[0]); k++)
			sum_field(o, jobs, ddirs[d], sums[k]);
		json_array_foreach (jobs, i, job) {
			const json_t *jd = json_object_get(job, ddirs[d]);

			var += num(jd, "iops_stddev") * num(jd, "iops_stddev");
			rt = fmax(rt, num(jd, "runtime"));
		}
		if (json_object_get(o, "iops_stddev"))
			json_object_set_new(o, "iops_stddev", json_real(sqrt(var)));
		json_object_set_new(o, "runtime", json_integer(to_int(rt)));
		merge_lat(json_object_get(o, "slat_ns"), jobs, ddirs[d], "slat_ns");
		merge_lat(json_object_get(o, "clat_ns"), jobs, ddirs[d], "clat_ns");
		merge_lat(json_object_get(o, "lat_ns"), jobs, ddirs[d], "lat_ns");
	}
	merge_shares(dst, jobs);
	{
		double usr = 0, sys = 0;

		json_array_foreach (jobs, i, job)
			usr += num(job, "usr_cpu"), sys += num(job, "sys_cpu");
		json_object_set_new(dst, "usr_cpu", json_real(usr / (double)n));
		json_object_set_new(dst, "sys_cpu", json_real(sys / (double)n));
	}
}

/* A JSON scalar as fio writes a job option: a string. */
static json_t *option_string(const json_t *v)
{
	char buf[64];

	if (json_is_string(v))
		return json_string(json_string_value(v));
	if (json_is_integer(v))
		bprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		bprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
	else if (json_is_boolean(v))
		bprintf(buf, sizeof(buf), "%d", json_is_true(v));
	else
		return NULL;
	return json_string(buf);
}

json_t *export_fio_one_job(const json_t *fio, const json_t *options)
{
	static const char *const required[] = { "rw", "bs", "iodepth", "numjobs" };
	const json_t *jobs = json_object_get(fio, "jobs");
	json_t *out, *job, *opts, *v;
	const char *key;

	if (!json_is_array(jobs) || !json_array_size(jobs) ||
	    !json_is_object(json_array_get(jobs, 0)))
		return NULL;
	out = json_deep_copy(fio);
	job = json_deep_copy(json_array_get(jobs, 0));
	if (json_array_size(jobs) > 1)
		merge_jobs(job, jobs);
	opts = json_object_get(job, "job options");
	if (!json_is_object(opts)) {
		opts = json_object();
		json_object_set_new(job, "job options", opts);
	}
	json_object_foreach ((json_t *)options, key, v) {
		json_t *s = option_string(v);

		if (s)
			json_object_set_new(opts, key, s);
	}
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		struct engine_option_value ov;

		if (json_object_get(opts, required[i]))
			continue;
		/* the engine's default, spelled as its table spells it */
		if (engine_option_parse(required[i], NULL, &ov) == 0) {
			char buf[32];

			if (ov.kind == ENGINE_OPTION_INT)
				bprintf(buf, sizeof(buf), "%lld", ov.i);
			else if (ov.kind == ENGINE_OPTION_SIZE)
				bprintf(buf, sizeof(buf), "%" PRIu64, ov.u);
			else
				bprintf(buf, sizeof(buf), "%s", ov.text ? ov.text : "");
			json_object_set_new(opts, required[i], json_string(buf));
		}
	}
	json_object_set_new(out, "jobs", json_pack("[o]", job));
	return out;
}
