/* fio's JSON output: the field names, units and nesting of fio 3.x's --output-format=json (and
 * json+ "bins"), so tools that read fio's output read ours. What fio has no place for (the
 * per-second samples) goes under a top-level "zbench" object, which fio readers ignore. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output.h"

static const char *const ddir_names[IO_DDIR_COUNT] = { "read", "write", "trim" };

static json_t *lat_json(const struct stats_lat *s)
{
	return json_pack("{s:I, s:I, s:f, s:f, s:I}", "min", (json_int_t)s->min, "max",
			 (json_int_t)s->max, "mean", s->n ? s->mean : 0.0, "stddev",
			 stats_lat_stddev(s), "N", (json_int_t)s->n);
}

static json_t *clat_json(const struct workload_dir *d, bool plus)
{
	json_t *o = lat_json(&d->clat);
	char key[32];

	if (d->clat.n) {
		json_t *pct = json_object();

		for (int i = 0; i < STATS_NPERCENTILES; i++) {
			snprintf(key, sizeof(key), "%f", stats_percentiles[i]);
			json_object_set_new(
			    pct, key,
			    json_integer((json_int_t)stats_hist_percentile(
				&d->clat_hist, stats_percentiles[i], d->clat.min, d->clat.max)));
		}
		json_object_set_new(o, "percentile", pct);
	}
	if (plus && d->clat_hist.count) {
		json_t *bins = json_object();

		for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++) {
			if (!d->clat_hist.bucket[i])
				continue;
			snprintf(key, sizeof(key), "%" PRIu64, stats_hist_bucket_value(i));
			json_object_set_new(bins, key,
					    json_integer((json_int_t)d->clat_hist.bucket[i]));
		}
		json_object_set_new(o, "bins", bins);
	}
	return o;
}

/* One direction. `runtime_ns` is the job's; `group_bw` the summed bandwidth (bytes/s) of all
 * entries of the group in this direction, for bw_agg; the series are the per-second samples. */
static json_t *dir_json(const struct workload_dir *d, uint64_t runtime_ns, double group_bw,
			const struct stats_series *iops, const struct stats_series *bw, bool plus)
{
	double secs = d->ios ? (double)runtime_ns / 1e9 : 0.0;
	uint64_t runtime_ms = d->ios ? (runtime_ns + 500000) / 1000000 : 0;
	double bw_bytes = secs > 0 ? (double)d->bytes / secs : 0.0;
	double bmin, bmax, bmean, bdev, imin, imax, imean, idev;
	json_t *o;

	stats_series_summary(bw, &bmin, &bmax, &bmean, &bdev);
	stats_series_summary(iops, &imin, &imax, &imean, &idev);
	o = json_object();
	json_object_set_new(o, "io_bytes", json_integer((json_int_t)d->bytes));
	json_object_set_new(o, "io_kbytes", json_integer((json_int_t)(d->bytes / 1024)));
	json_object_set_new(o, "bw_bytes", json_integer((json_int_t)bw_bytes));
	json_object_set_new(o, "bw", json_integer((json_int_t)(bw_bytes / 1024)));
	json_object_set_new(o, "iops", json_real(secs > 0 ? (double)d->ios / secs : 0.0));
	json_object_set_new(o, "runtime", json_integer((json_int_t)runtime_ms));
	json_object_set_new(o, "total_ios", json_integer((json_int_t)d->ios));
	json_object_set_new(o, "short_ios", json_integer((json_int_t)d->short_ios));
	json_object_set_new(o, "drop_ios", json_integer((json_int_t)d->drop_ios));
	json_object_set_new(o, "slat_ns", lat_json(&d->slat));
	json_object_set_new(o, "clat_ns", clat_json(d, plus));
	json_object_set_new(o, "lat_ns", lat_json(&d->lat));
	json_object_set_new(o, "bw_min", json_integer((json_int_t)bmin));
	json_object_set_new(o, "bw_max", json_integer((json_int_t)bmax));
	json_object_set_new(
	    o, "bw_agg",
	    json_real(group_bw > 0 && bw_bytes > 0 ? 100.0 * bw_bytes / group_bw : 0.0));
	json_object_set_new(o, "bw_mean", json_real(bmean));
	json_object_set_new(o, "bw_dev", json_real(bdev));
	json_object_set_new(o, "bw_samples", json_integer(bw->n));
	json_object_set_new(o, "iops_min", json_integer((json_int_t)imin));
	json_object_set_new(o, "iops_max", json_integer((json_int_t)imax));
	json_object_set_new(o, "iops_mean", json_real(imean));
	json_object_set_new(o, "iops_stddev", json_real(idev));
	json_object_set_new(o, "iops_samples", json_integer(iops->n));
	return o;
}

/* fio's latency distribution: percent of I/Os per range, keyed by the range's upper bound
 * ("250" in latency_us: [100 us, 250 us)). Computed from the histogram (bucket midpoints), so a
 * value within 1/128 of a bound may land in the neighbouring range. */
static void latency_buckets(json_t *job, const struct workload_thread *t)
{
	static const unsigned bounds[] = { 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 };
	static const unsigned ms_extra = 2000;
	double counts[3][12] = { { 0 } };
	uint64_t total = 0;
	char key[16];

	for (int d = 0; d < IO_DDIR_COUNT; d++) {
		const struct stats_hist *h = &t->dir[d].clat_hist;

		total += h->count;
		for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++) {
			uint64_t v, scale;
			unsigned unit, b;

			if (!h->bucket[i])
				continue;
			v = stats_hist_bucket_value(i);
			unit = v < 1000 ? 0 : v < 1000000 ? 1 : 2;
			scale = unit == 0 ? 1 : unit == 1 ? 1000 : 1000000;
			for (b = 0; b < 10 && v >= bounds[b] * scale; b++)
				;
			if (b == 10) /* only ms gets here: [1000 ms, 2000 ms) or beyond */
				b = v < ms_extra * scale ? 10 : 11;
			counts[unit][b] += (double)h->bucket[i];
		}
	}
	for (int unit = 0; unit < 3; unit++) {
		static const char *const names[] = { "latency_ns", "latency_us", "latency_ms" };
		json_t *o = json_object();
		unsigned n = unit == 2 ? 12 : 10;

		for (unsigned b = 0; b < n; b++) {
			double pct = total ? 100.0 * counts[unit][b] / (double)total : 0.0;

			if (b < 10)
				snprintf(key, sizeof(key), "%u", bounds[b]);
			else
				snprintf(key, sizeof(key), b == 10 ? "2000" : ">=2000");
			/* fio shows a nonzero share below 0.01% as 0.01 */
			if (pct > 0 && pct < 0.01)
				pct = 0.01;
			json_object_set_new(o, key, json_real(pct));
		}
		json_object_set_new(job, names[unit], o);
	}
}

/* fio's key names of iodepth_level and of iodepth_submit/iodepth_complete. */
static const char *const level_keys[WORKLOAD_NBATCH] = { "1", "2", "4", "8", "16", "32", ">=64" };
static const char *const batch_keys[WORKLOAD_NBATCH] = { "0", "4", "8", "16", "32", "64", ">=64" };

/* A bucketed count as fio prints it: percent of the total per key (all 0 when empty). */
static json_t *batch_dist(const uint64_t count[WORKLOAD_NBATCH],
			  const char *const keys[WORKLOAD_NBATCH])
{
	json_t *o = json_object();
	uint64_t total = 0;

	for (int i = 0; i < WORKLOAD_NBATCH; i++)
		total += count[i];
	for (int i = 0; i < WORKLOAD_NBATCH; i++)
		json_object_set_new(
		    o, keys[i], json_real(total ? 100.0 * (double)count[i] / (double)total : 0.0));
	return o;
}

static json_t *job_json(const struct workload_run *run, const struct workload_thread *t,
			const struct stats_series series[IO_DDIR_COUNT][2],
			const double group_bw[IO_DDIR_COUNT], bool plus)
{
	const struct job *job = run->job;
	double secs = (double)t->runtime_ns / 1e9, cpu_secs = (double)t->cpu_runtime_ns / 1e9;
	json_t *o = json_object(), *sync;

	json_object_set_new(o, "jobname", json_string(job->name));
	json_object_set_new(o, "groupid", json_integer(0));
	json_object_set_new(o, "error", json_integer(t->error));
	json_object_set_new(o, "eta", json_integer(0));
	json_object_set_new(o, "elapsed", json_integer((json_int_t)ceil(secs)));
	json_object_set_new(o, "job options", engine_job_given_json(job));
	for (int d = 0; d < IO_DDIR_COUNT; d++)
		json_object_set_new(o, ddir_names[d],
				    dir_json(&t->dir[d], t->runtime_ns, group_bw[d], &series[d][0],
					     &series[d][1], plus));
	/* fio's shape: total_ios counts the fsyncs, lat_ns (its N) fsyncs and fdatasyncs */
	sync = json_pack("{s:I, s:o}", "total_ios", (json_int_t)t->fsyncs, "lat_ns",
			 lat_json(&t->sync_lat));
	json_object_set_new(o, "sync", sync);
	/* fio: the summed runtime of the merged workers (ms) */
	json_object_set_new(o, "job_runtime",
			    json_integer((json_int_t)(t->cpu_runtime_ns / 1000000)));
	/* as fio: CPU time over the summed runtime of the merged workers (a per-worker average) */
	json_object_set_new(o, "usr_cpu",
			    json_real(cpu_secs > 0 ? 100.0 * t->usr_sec / cpu_secs : 0.0));
	json_object_set_new(o, "sys_cpu",
			    json_real(cpu_secs > 0 ? 100.0 * t->sys_sec / cpu_secs : 0.0));
	json_object_set_new(o, "ctx", json_integer((json_int_t)t->ctx));
	json_object_set_new(o, "majf", json_integer((json_int_t)t->majf));
	json_object_set_new(o, "minf", json_integer((json_int_t)t->minf));
	json_object_set_new(o, "iodepth_level", batch_dist(t->depth_ios, level_keys));
	json_object_set_new(o, "iodepth_submit", batch_dist(t->submit_calls, batch_keys));
	json_object_set_new(o, "iodepth_complete", batch_dist(t->complete_calls, batch_keys));
	latency_buckets(o, t);
	json_object_set_new(o, "latency_depth", json_integer(job->iodepth));
	json_object_set_new(o, "latency_target", json_integer(0));
	json_object_set_new(o, "latency_percentile", json_real(100.0));
	json_object_set_new(o, "latency_window", json_integer(0));
	return o;
}

/* rate_iops: the offered load against what was achieved, and the latency from each I/O's
 * scheduled arrival (open loop: queueing behind a slow I/O counts). */
static json_t *rate_json(const struct workload_run *run)
{
	const struct job *job = run->job;
	struct workload_thread *m = calloc(1, sizeof(*m));
	double target = (double)job->rate_iops * run->nthreads, achieved = 0;
	json_t *o = json_object();

	if (!m)
		return o;
	for (unsigned i = 0; i < run->nthreads; i++) {
		const struct workload_thread *t = &run->threads[i];
		uint64_t ios = t->dir[0].ios + t->dir[1].ios;

		if (t->runtime_ns)
			achieved += (double)ios / ((double)t->runtime_ns / 1e9);
		workload_thread_merge(m, t);
	}
	json_object_set_new(
	    o, "process",
	    json_string(job->rate_process == ENGINE_RATE_POISSON ? "poisson" : "linear"));
	json_object_set_new(o, "target_iops_per_job", json_integer(job->rate_iops));
	json_object_set_new(o, "target_iops", json_real(target));
	json_object_set_new(o, "achieved_iops", json_real(achieved));
	json_object_set_new(o, "deviation_pct",
			    json_real(target > 0 ? 100.0 * (achieved - target) / target : 0.0));
	for (int d = 0; d < 2; d++) {
		const struct workload_dir *dir = &m->dir[d];
		json_t *lat = lat_json(&dir->olat), *pct = json_object();
		char key[32];

		if (!dir->olat.n) {
			json_decref(pct);
			json_decref(lat);
			continue;
		}
		for (int i = 0; i < STATS_NPERCENTILES; i++) {
			snprintf(key, sizeof(key), "%f", stats_percentiles[i]);
			json_object_set_new(pct, key,
					    json_integer((json_int_t)stats_hist_percentile(
						&dir->olat_hist, stats_percentiles[i],
						dir->olat.min, dir->olat.max)));
		}
		json_object_set_new(lat, "percentile", pct);
		json_object_set_new(o, d == 0 ? "read_sched_lat_ns" : "write_sched_lat_ns", lat);
	}
	free(m);
	return o;
}

static double dir_bw(const struct workload_thread *t, int d)
{
	return t->runtime_ns && t->dir[d].ios
		   ? (double)t->dir[d].bytes / ((double)t->runtime_ns / 1e9)
		   : 0.0;
}

/* The whole run's submit and complete calls and the I/Os they carried (counted phase): fio's
 * iodepth_submit/complete give only the shape, these give calls per I/O. */
static json_t *calls_json(const struct workload_run *run)
{
	uint64_t submit = 0, complete = 0, ios = 0;

	for (unsigned i = 0; i < run->nthreads; i++) {
		const struct workload_thread *t = &run->threads[i];

		for (int b = 0; b < WORKLOAD_NBATCH; b++) {
			submit += t->submit_calls[b];
			complete += t->complete_calls[b];
			ios += t->depth_ios[b];
		}
	}
	return json_pack("{s:I, s:I, s:I}", "submit", (json_int_t)submit, "complete",
			 (json_int_t)complete, "ios", (json_int_t)ios);
}

json_t *output_json_root(time_t timestamp, uint64_t timestamp_ms)
{
	json_t *root = json_object();
	char tbuf[64];
	struct tm tm;

	json_object_set_new(root, "fio version", json_string(ENGINE_VERSION_STRING));
	json_object_set_new(root, "timestamp", json_integer((json_int_t)timestamp));
	json_object_set_new(root, "timestamp_ms", json_integer((json_int_t)timestamp_ms));
	localtime_r(&timestamp, &tm);
	strftime(tbuf, sizeof(tbuf), "%a %b %e %H:%M:%S %Y", &tm);
	json_object_set_new(root, "time", json_string(tbuf));
	json_object_set_new(root, "global options", json_object());
	return root;
}

json_t *output_json_build(const struct workload_run *run, bool plus)
{
	const struct job *job = run->job;
	json_t *root = output_json_root(run->timestamp, run->timestamp_ms), *jobs = json_array();
	json_t *zb, *samples, *errors;
	double group_bw[IO_DDIR_COUNT] = { 0 };

	for (unsigned i = 0; i < run->nthreads; i++)
		for (int d = 0; d < IO_DDIR_COUNT; d++)
			group_bw[d] += dir_bw(&run->threads[i], d);

	if (job->group_reporting) {
		struct workload_thread *m = calloc(1, sizeof(*m));
		struct stats_series series[IO_DDIR_COUNT][2];

		memset(series, 0, sizeof(series));
		if (m) {
			for (unsigned i = 0; i < run->nthreads; i++)
				workload_thread_merge(m, &run->threads[i]);
			for (int d = 0; d < 2; d++) {
				bool active =
				    d == 0 ? engine_rw_reads(job->rw) : engine_rw_writes(job->rw);

				for (unsigned s = 0; active && s < run->nsamples; s++) {
					stats_series_push(&series[d][0], run->samples[s].iops[d]);
					stats_series_push(&series[d][1], run->samples[s].bw_kib[d]);
				}
			}
			json_array_append_new(jobs, job_json(run, m, series, group_bw, plus));
			for (int d = 0; d < IO_DDIR_COUNT; d++) {
				stats_series_release(&series[d][0]);
				stats_series_release(&series[d][1]);
			}
			free(m);
		}
	} else {
		for (unsigned i = 0; i < run->nthreads; i++) {
			const struct workload_thread *t = &run->threads[i];
			struct stats_series series[IO_DDIR_COUNT][2];

			for (int d = 0; d < IO_DDIR_COUNT; d++) {
				series[d][0] = t->dir[d].iops;
				series[d][1] = t->dir[d].bw_kib;
			}
			json_array_append_new(jobs, job_json(run, t, series, group_bw, plus));
		}
	}
	json_object_set_new(root, "jobs", jobs);
	json_object_set_new(root, "disk_util", json_array());

	zb = json_object();
	json_object_set_new(zb, "engine", json_string(run->ops->name));
	json_object_set_new(zb, "options", engine_job_resolved_json(job));
	samples = json_array();
	for (unsigned s = 0; s < run->nsamples; s++) {
		const struct workload_sample *p = &run->samples[s];

		json_array_append_new(
		    samples, json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "t", p->t,
				       "read_iops", p->iops[0], "write_iops", p->iops[1], "read_bw",
				       p->bw_kib[0], "write_bw", p->bw_kib[1], "read_lat_mean_ns",
				       p->lat_mean_ns[0], "write_lat_mean_ns", p->lat_mean_ns[1]));
	}
	json_object_set_new(zb, "samples", samples);
	json_object_set_new(zb, "calls", calls_json(run));
	if (job->rate_iops)
		json_object_set_new(zb, "rate", rate_json(run));
	errors = json_array();
	for (unsigned i = 0; i < run->nthreads; i++)
		if (run->threads[i].error)
			json_array_append_new(errors, json_string(run->threads[i].errmsg));
	json_object_set_new(zb, "errors", errors);
	json_object_set_new(root, "zbench", zb);
	return root;
}
