/* The one table of metrics (builder/matrix/metrics.h) and its one reader. */
#include "metrics.h"

#include <math.h>
#include <string.h>

#define METRIC_SCALE_SUM       1
#define METRIC_SCALE_CLAT_MEAN 1e-6
#define METRIC_SCALE_CLAT_PCT  1e-6

const struct metric_def metric_table[METRIC_COUNT] = {
#define METRIC_ROW_(id, k, h, t, u, f, r, w, fig)                                                  \
	[METRIC_##id] = { .key = k,                                                                \
			  .title = t,                                                              \
			  .unit = u,                                                               \
			  .scale = METRIC_SCALE_##h,                                               \
			  .higher_is_better = METRIC_##h == METRIC_SUM,                            \
			  .how = METRIC_##h,                                                       \
			  .field = f,                                                              \
			  .read = r,                                                               \
			  .write = w,                                                              \
			  .figure = fig },
	METRIC_LIST(METRIC_ROW_)
#undef METRIC_ROW_
};

const struct metric_figure_def metric_figures[FIGURE_COUNT] = {
	[FIGURE_IOPS] = { "iops", "IOPS", "IOPS" },
	[FIGURE_BW] = { "bw", "Bandwidth", "KiB/s" },
	[FIGURE_LATENCY] = { "latency", "Completion latency", "ms" },
};

const struct metric_def *metric_find(const char *key)
{
	for (size_t i = 0; i < METRIC_COUNT; i++)
		if (!strcmp(key, metric_table[i].key))
			return &metric_table[i];
	return NULL;
}

static int num_get(const json_t *obj, const char *key, double *out)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_number(v))
		return -1;
	*out = json_number_value(v);
	return isfinite(*out) ? 0 : -1;
}

/* One job's figures of metric `def` in direction object `d` into the running sum, weight and
 * max; 1 if the job has them. */
static int job_metric(const struct metric_def *def, const json_t *d, double *sum, double *weight,
		      double *max)
{
	const json_t *clat = json_object_get(d, "clat_ns");
	double v, n;

	switch (def->how) {
	case METRIC_SUM:
		if (num_get(d, def->field, &v) < 0)
			return 0;
		*sum += v;
		return 1;
	case METRIC_CLAT_MEAN:
		if (num_get(clat, "mean", &v) < 0 || num_get(clat, "N", &n) < 0 || n <= 0)
			return 0;
		*sum += v * n;
		*weight += n;
		return 1;
	case METRIC_CLAT_PCT:
		if (num_get(clat, "N", &n) < 0 || n <= 0 ||
		    num_get(json_object_get(clat, "percentile"), def->field, &v) < 0)
			return 0;
		if (v > *max)
			*max = v;
		return 1;
	}
	return 0;
}

int metric_read(const json_t *fio, enum metric_id m, double *out)
{
	static const char *const dirs[] = { "read", "write" };
	const json_t *jobs = json_object_get(fio, "jobs"), *job;
	const struct metric_def *def;
	double sum = 0, weight = 0, max = -1;
	int found = 0;
	size_t i;

	if ((unsigned)m >= METRIC_COUNT || !json_is_array(jobs) || json_array_size(jobs) == 0)
		return -1;
	def = &metric_table[m];
	for (int k = 0; k < 2; k++) {
		if (!(k == 0 ? def->read : def->write))
			continue;
		json_array_foreach (jobs, i, job)
			found |=
			    job_metric(def, json_object_get(job, dirs[k]), &sum, &weight, &max);
	}
	if (!found)
		return -1;
	if (def->how == METRIC_CLAT_MEAN)
		sum /= weight;
	else if (def->how == METRIC_CLAT_PCT)
		sum = max;
	*out = sum * def->scale;
	return 0;
}

int metric_table_check(void)
{
	for (size_t m = 0; m < METRIC_COUNT; m++) {
		const struct metric_def *d = &metric_table[m];

		if ((m < METRIC_REPORTED) != (d->figure != FIGURE_NONE) ||
		    (unsigned)d->figure >= FIGURE_COUNT || !d->key || !d->title || !d->unit ||
		    (d->figure && !metric_figures[d->figure].stem) || (!d->read && !d->write))
			return -1;
	}
	return 0;
}
