/* The one table of metrics (builder/matrix/metrics.h) and its one reader. */
#include "metrics.h"

#include <math.h>
#include <string.h>

#define METRIC_SCALE_SUM	    1
#define METRIC_SCALE_CLAT_MEAN	    1e-6
#define METRIC_SCALE_CLAT_PCT	    1e-6
#define METRIC_SCALE_DISKS	    1
#define METRIC_SCALE_KSTAT	    1
#define METRIC_SCALE_KSTAT_COUNTED  1
#define METRIC_SCALE_DISKS_PER_BYTE 1
#define METRIC_SCALE_DISKS_PER_IO   1
#define METRIC_SCALE_MODEL	    1
#define METRIC_SCALE_MODEL_PER_IO   1

const struct metric_def metric_table[METRIC_COUNT] = {
#define METRIC_ROW_(id, k, h, t, u, f, r, w, fig, hi)                                              \
	[METRIC_##id] = { .key = k,                                                                \
			  .title = t,                                                              \
			  .unit = u,                                                               \
			  .scale = METRIC_SCALE_##h,                                               \
			  .higher_is_better = hi,                                                  \
			  .is_count = METRIC_HOW_IS_COUNT(METRIC_##h),                             \
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

const char *metric_unit_label(const struct metric_def *d)
{
	return *d->unit ? d->unit : d->is_count ? "ratio" : "IOPS";
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
	default: /* a count is not the engine's */
		break;
	}
	return 0;
}

int metric_read_fio(const json_t *fio, enum metric_id m, double *out)
{
	static const char *const dirs[] = { "read", "write" };
	const json_t *jobs = json_object_get(fio, "jobs"), *job;
	const struct metric_def *def;
	double sum = 0, weight = 0, max = -1;
	int found = 0;
	size_t i;

	if ((unsigned)m >= METRIC_COUNT || metric_table[m].is_count || !json_is_array(jobs) ||
	    json_array_size(jobs) == 0)
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

/* ---- the count tier ------------------------------------------------------------------------ */

/* A count from a record: a finite number >= 0 (counters are never negative; a guest that says
 * so is wrong or hostile). */
static int count_get(const json_t *o, const char *key, double *v)
{
	const json_t *j = json_object_get(o, key);
	double x;

	if (!json_is_number(j))
		return -1;
	x = json_number_value(j);
	if (!isfinite(x) || x < 0)
		return -1;
	*v = x;
	return 0;
}

/* `field` of each member of `parent` (per disk), of its `sub` object when sub is set, summed;
 * -1 when none has it. */
static int members_sum(const json_t *parent, const char *sub, const char *field, double *v)
{
	const json_t *d;
	const char *name;
	int found = 0;

	*v = 0;
	json_object_foreach ((json_t *)parent, name, d) {
		double x;

		if (count_get(sub ? json_object_get(d, sub) : d, field, &x) < 0)
			continue;
		*v += x;
		found = 1;
	}
	return found ? 0 : -1;
}

/* The engine's jobs[].DIR.field summed over its jobs and the directions `def` counts. */
static int engine_sum(const json_t *fio, const struct metric_def *def, const char *field, double *v)
{
	static const char *const dirs[] = { "read", "write" };
	const json_t *job;
	size_t i;
	int found = 0;

	*v = 0;
	for (int k = 0; k < 2; k++) {
		if (!(k == 0 ? def->read : def->write))
			continue;
		json_array_foreach (json_object_get(fio, "jobs"), i, job) {
			double x;

			if (count_get(json_object_get(job, dirs[k]), field, &x) < 0)
				continue;
			*v += x;
			found = 1;
		}
	}
	return found ? 0 : -1;
}

/* telemetry_summary.GROUP.NAME for a field "GROUP.NAME". */
static int kstat_get(const json_t *ts, const char *field, double *v)
{
	const char *dot = strchr(field, '.');
	char group[32];

	if (!dot || (size_t)(dot - field) >= sizeof(group))
		return -1;
	memcpy(group, field, (size_t)(dot - field));
	group[dot - field] = '\0';
	return count_get(json_object_get(ts, group), dot + 1, v);
}

static int count_read(const json_t *res, const struct metric_def *def, double *out)
{
	const json_t *disks = json_object_get(json_object_get(res, "telemetry_summary"), "disks");
	/* a phased record's disk_model spans every phase while its fio is one of them: none */
	const json_t *models =
	    json_object_get(res, "phase_results") ? NULL : json_object_get(res, "disk_model");
	double num, den;

	switch (def->how) {
	case METRIC_DISKS:
		return members_sum(disks, "counts", def->field, out);
	case METRIC_KSTAT_COUNTED:
		if (members_sum(disks, "counts", "w_bytes", &num) < 0)
			return -1;
		/* fall through */
	case METRIC_KSTAT:
		return kstat_get(json_object_get(res, "telemetry_summary"), def->field, out);
	case METRIC_DISKS_PER_BYTE:
	case METRIC_DISKS_PER_IO:
		if (members_sum(disks, "counts", def->field, &num) < 0)
			return -1;
		break;
	case METRIC_MODEL:
		return members_sum(models, NULL, def->field, out);
	case METRIC_MODEL_PER_IO:
		if (members_sum(models, NULL, def->field, &num) < 0)
			return -1;
		break;
	default:
		return -1;
	}
	if (engine_sum(json_object_get(res, "fio"), def,
		       def->how == METRIC_DISKS_PER_BYTE ? "io_bytes" : "total_ios", &den) < 0 ||
	    den <= 0)
		return -1;
	*out = num / den;
	return 0;
}

int metric_read(const json_t *res, enum metric_id m, double *out)
{
	if ((unsigned)m >= METRIC_COUNT)
		return -1;
	if (!metric_table[m].is_count)
		return metric_read_fio(json_object_get(res, "fio"), m, out);
	if (count_read(res, &metric_table[m], out) < 0 || !isfinite(*out))
		return -1;
	*out *= metric_table[m].scale;
	return 0;
}

int metric_table_check(void)
{
	for (size_t m = 0; m < METRIC_COUNT; m++) {
		const struct metric_def *d = &metric_table[m];

		if ((m < METRIC_FIGURED) != (d->figure != FIGURE_NONE) ||
		    (m >= METRIC_FIGURED && m < METRIC_REPORTED) != d->is_count ||
		    (d->is_count && !d->field) || (unsigned)d->figure >= FIGURE_COUNT || !d->key ||
		    !d->title || !d->unit || (d->figure && !metric_figures[d->figure].stem) ||
		    (!d->read && !d->write))
			return -1;
	}
	return 0;
}
