/* Rendering an iozone-mode run: the JSON document (fio's top level with a one-job summary, plus
 * the "iozone" object) and iozone's own text report. docs/engine.md describes both. */
#include <inttypes.h>
#include <string.h>

#include "iozone.h"
#include "output.h"

/* Wall time of one step: from the first child's start to the last child's end. */
static uint64_t step_ns(const struct iozone_run *run, unsigned step)
{
	uint64_t first = UINT64_MAX, last = 0;

	for (unsigned c = 0; c < run->nchild; c++) {
		const struct iozone_result *r = iozone_result(run, step, c);

		first = r->start_ns < first ? r->start_ns : first;
		last = r->end_ns > last ? r->end_ns : last;
	}
	return last > first ? last - first : 0;
}

static json_t *dir_json(uint64_t bytes, uint64_t ios, uint64_t ns)
{
	double secs = (double)ns / 1e9;
	double bw = secs > 0 ? (double)bytes / secs : 0.0;

	return json_pack("{s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:I, s:I}", "io_bytes",
			 (json_int_t)bytes, "io_kbytes", (json_int_t)(bytes / 1024), "bw_bytes",
			 (json_int_t)bw, "bw", (json_int_t)(bw / 1024), "iops",
			 secs > 0 ? (double)ios / secs : 0.0, "runtime",
			 (json_int_t)((ns + 500000) / 1000000), "total_ios", (json_int_t)ios,
			 "short_ios", (json_int_t)0, "drop_ios", (json_int_t)0);
}

/* fio's "jobs": one job summing every read-type and every write-type test (all children):
 * iops = I/Os / time spent in those tests, so a reader that sums jobs[].read.iops gets the
 * average rate of the read tests. */
static json_t *jobs_json(const struct iozone_run *run)
{
	uint64_t bytes[2] = { 0, 0 }, ios[2] = { 0, 0 }, ns[2] = { 0, 0 };
	json_t *job;

	for (unsigned s = 0; s < run->nsteps; s++) {
		int d = iozone_tests[run->tests[s % run->ntests]].writes;

		for (unsigned c = 0; c < run->nchild; c++) {
			bytes[d] += iozone_result(run, s, c)->bytes;
			ios[d] += iozone_result(run, s, c)->ios;
		}
		ns[d] += step_ns(run, s);
	}
	job = json_pack("{s:s, s:i, s:i, s:o, s:o, s:o, s:o, s:I}", "jobname", run->job->name,
			"groupid", 0, "error", 0, "job options", engine_job_given_json(run->job),
			"read", dir_json(bytes[0], ios[0], ns[0]), "write",
			dir_json(bytes[1], ios[1], ns[1]), "trim", dir_json(0, 0, 0), "job_runtime",
			(json_int_t)((ns[0] + ns[1]) / 1000000));
	return json_pack("[o]", job);
}

static json_t *auto_result(const struct iozone_run *run, unsigned s)
{
	const struct iozone_pair *p = &run->pairs[s / run->ntests];
	const struct iozone_result *r = iozone_result(run, s, 0);
	uint64_t ns = r->end_ns - r->start_ns;

	return json_pack("{s:s, s:I, s:I, s:f, s:I, s:f}", "test",
			 iozone_tests[run->tests[s % run->ntests]].name, "file_kb",
			 (json_int_t)(p->file >> 10), "record_kb", (json_int_t)(p->rec >> 10),
			 "kbps", iozone_kbps(r->bytes, ns), "bytes", (json_int_t)r->bytes,
			 "seconds", (double)ns / 1e9);
}

static json_t *throughput_result(const struct iozone_run *run, unsigned s)
{
	const struct iozone_pair *p = &run->pairs[s / run->ntests];
	enum iozone_test t = run->tests[s % run->ntests];
	json_t *per = json_array();
	struct iozone_aggregate a;

	iozone_aggregate(run, s, &a);
	for (unsigned c = 0; c < run->nchild; c++) {
		const struct iozone_result *r = iozone_result(run, s, c);
		uint64_t ns = r->end_ns - r->start_ns;

		json_array_append_new(
		    per, json_pack("{s:i, s:f, s:f, s:f, s:b}", "child", (int)c, "kbps",
				   iozone_kbps(r->bytes, ns), "xfer_kb", (double)r->bytes / 1024.0,
				   "seconds", (double)ns / 1e9, "stonewalled", r->stonewalled));
	}
	return json_pack("{s:s, s:s, s:I, s:I, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:o}", "test",
			 iozone_tests[t].name, "label", iozone_tests[t].label, "file_kb",
			 (json_int_t)(p->file >> 10), "record_kb", (json_int_t)(p->rec >> 10),
			 "children", (int)run->nchild, "children_kbps", a.children_kbps,
			 "parent_kbps", a.parent_kbps, "min_kbps", a.min_kbps, "max_kbps",
			 a.max_kbps, "avg_kbps", a.avg_kbps, "min_xfer_kb", a.min_xfer_kb,
			 "per_child", per);
}

json_t *iozone_json(const struct iozone_run *run)
{
	const struct job *job = run->job;
	json_t *root = output_json_root(run->timestamp, run->timestamp_ms);
	json_t *io, *results = json_array(), *tests = json_array();

	json_object_set_new(root, "jobs", jobs_json(run));
	json_object_set_new(root, "disk_util", json_array());

	for (unsigned i = 0; i < run->ntests; i++)
		json_array_append_new(tests, json_string(iozone_tests[run->tests[i]].name));
	for (unsigned s = 0; s < run->nsteps; s++)
		json_array_append_new(results, run->throughput ? throughput_result(run, s)
							       : auto_result(run, s));
	io = json_pack("{s:s, s:i, s:o, s:b, s:b, s:b, s:i, s:b, s:o}", "mode",
		       run->throughput ? "throughput" : "auto", "children", (int)run->nchild,
		       "tests", tests, "include_flush", job->include_flush, "include_close",
		       job->include_close, "direct", job->direct, "stride", job->stride,
		       "stonewall", run->throughput && job->stonewall, "results", results);
	json_object_set_new(root, "iozone", io);
	json_object_set_new(
	    root, "zbench",
	    json_pack("{s:s, s:o}", "engine", "iozone", "options", engine_job_resolved_json(job)));
	return root;
}

/* iozone's two header lines of each column of the auto table. */
static const char *const col_top[IOZ_NTESTS] = {
	[IOZ_RANDREAD] = "random",   [IOZ_RANDWRITE] = "random",  [IOZ_BKWDREAD] = "bkwd",
	[IOZ_RECREWRITE] = "record", [IOZ_STRIDEREAD] = "stride",
};
static const char *const col_name[IOZ_NTESTS] = {
	"write",   "rewrite", "read",	"reread",   "read",  "write",	"read",
	"rewrite", "read",    "fwrite", "frewrite", "fread", "freread",
};

static void print_auto(FILE *out, const struct iozone_run *run)
{
	fprintf(out, "\tAuto Mode\n");
	fprintf(out, "%16s%8s", "", "");
	for (unsigned i = 0; i < run->ntests; i++)
		fprintf(out, "%9s", col_top[run->tests[i]] ? col_top[run->tests[i]] : "");
	fprintf(out, "\n%16s%8s", "kB", "reclen");
	for (unsigned i = 0; i < run->ntests; i++)
		fprintf(out, "%9s", col_name[run->tests[i]]);
	fputc('\n', out);
	for (unsigned p = 0; p < run->npairs; p++) {
		fprintf(out, "%16" PRIu64 "%8" PRIu64, run->pairs[p].file >> 10,
			run->pairs[p].rec >> 10);
		for (unsigned i = 0; i < run->ntests; i++) {
			const struct iozone_result *r = iozone_result(run, p * run->ntests + i, 0);

			fprintf(out, "%9.0f", iozone_kbps(r->bytes, r->end_ns - r->start_ns));
		}
		fputc('\n', out);
	}
}

static void print_throughput(FILE *out, const struct iozone_run *run)
{
	fprintf(out, "\tThroughput test with %u processes\n", run->nchild);
	fprintf(out,
		"\tEach process writes a %" PRIu64 " kByte file in %" PRIu64 " kByte records\n\n",
		run->pairs[0].file >> 10, run->pairs[0].rec >> 10);
	for (unsigned s = 0; s < run->nsteps; s++) {
		const char *label = iozone_tests[run->tests[s % run->ntests]].label;
		struct iozone_aggregate a;
		char what[64];

		iozone_aggregate(run, s, &a);
		snprintf(what, sizeof(what), "%2u %s", run->nchild, label);
		fprintf(out, "\tChildren see throughput for %-20s = %12.2f kB/sec\n", what,
			a.children_kbps);
		fprintf(out, "\tParent sees throughput for %-21s = %12.2f kB/sec\n", what,
			a.parent_kbps);
		fprintf(out, "\tMin throughput per process %21s = %12.2f kB/sec\n", "", a.min_kbps);
		fprintf(out, "\tMax throughput per process %21s = %12.2f kB/sec\n", "", a.max_kbps);
		fprintf(out, "\tAvg throughput per process %21s = %12.2f kB/sec\n", "", a.avg_kbps);
		fprintf(out, "\tMin xfer %39s = %12.2f kB\n\n", "", a.min_xfer_kb);
	}
}

void iozone_print(FILE *out, const struct iozone_run *run)
{
	const struct job *job = run->job;

	fprintf(out, "\tzbench-engine iozone mode (%s)\n", ENGINE_VERSION_STRING);
	if (job->include_flush)
		fprintf(out, "\tInclude fsync in write timing\n");
	if (job->include_close)
		fprintf(out, "\tInclude close in write timing\n");
	if (job->direct)
		fprintf(out, "\tO_DIRECT feature enabled\n");
	fprintf(out, "\tFile stride size set to %d * record size.\n", job->stride);
	fprintf(out, "\tOutput is in kBytes/sec\n\n");
	if (run->throughput)
		print_throughput(out, run);
	else
		print_auto(out, run);
}
