/* --output-format=normal: a short human summary in fio's words (not its full layout). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

static void normal_dir(FILE *out, const char *name, const struct workload_dir *d,
		       uint64_t runtime_ns)
{
	double secs = (double)runtime_ns / 1e9;

	if (!d->ios)
		return;
	fprintf(out,
		"  %s: IOPS=%.0f, BW=%.1fMiB/s (%" PRIu64 "MiB/%.1fs)\n"
		"    clat (usec): min=%.1f, max=%.1f, avg=%.2f, stdev=%.2f\n"
		"    clat percentiles (usec): 50th=%.1f, 99th=%.1f, 99.9th=%.1f\n",
		name, secs > 0 ? (double)d->ios / secs : 0.0,
		secs > 0 ? (double)d->bytes / secs / 1048576.0 : 0.0, d->bytes >> 20, secs,
		(double)d->clat.min / 1e3, (double)d->clat.max / 1e3, d->clat.mean / 1e3,
		stats_lat_stddev(&d->clat) / 1e3,
		(double)stats_hist_percentile(&d->clat_hist, 50, d->clat.min, d->clat.max) / 1e3,
		(double)stats_hist_percentile(&d->clat_hist, 99, d->clat.min, d->clat.max) / 1e3,
		(double)stats_hist_percentile(&d->clat_hist, 99.9, d->clat.min, d->clat.max) / 1e3);
}

void output_normal(FILE *out, const struct workload_run *run)
{
	const struct job *job = run->job;
	struct workload_thread *merged = NULL;
	unsigned n = run->nthreads;

	/* group_reporting: one merged entry, as in the JSON */
	if (job->group_reporting && (merged = calloc(1, sizeof(*merged)))) {
		for (unsigned i = 0; i < run->nthreads; i++)
			workload_thread_merge(merged, &run->threads[i]);
		n = 1;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct workload_thread *t = merged ? merged : &run->threads[i];

		fprintf(out, "%s: (%s %u): err=%d: rw=%s, bs=%" PRIu64 ", ioengine=%s\n", job->name,
			merged ? "group of" : "thread", merged ? run->nthreads : i, t->error,
			engine_rw_name(job->rw), job->bs, run->ops->name);
		if (t->error)
			fprintf(out, "  error: %s\n", t->errmsg);
		normal_dir(out, "read", &t->dir[IO_DDIR_READ], t->runtime_ns);
		normal_dir(out, "write", &t->dir[IO_DDIR_WRITE], t->runtime_ns);
		if (t->sync_lat.n)
			fprintf(out,
				"  sync: %" PRIu64 " syncs (%" PRIu64 " fsyncs), avg=%.1fusec\n",
				t->sync_lat.n, t->fsyncs, t->sync_lat.mean / 1e3);
	}
	free(merged);
}
