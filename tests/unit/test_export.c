/* zbench export's pieces (builder/report/export.h): CSV fields from hostile text, and a fio result
 * of several jobs merged into the one job fio-plot reads, with complete job options and the bins
 * summed (the percentiles computed from them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report/export.h"

static void check_field(const char *in, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	export_csv_field(f, in);
	fclose(f);
	CHECK_STR(buf, want);
	free(buf);
}

static void test_csv(void)
{
	check_field("ashift=12", "ashift=12");
	check_field("a,b", "\"a,b\"");
	check_field("say \"hi\"", "\"say \"\"hi\"\"\"");
	check_field("two\nlines", "\"two\nlines\"");
	/* a spreadsheet formula is defused, whatever its first character */
	check_field("=1+1", "\"'=1+1\"");
	check_field("+cmd", "\"'+cmd\"");
	check_field("-2", "\"'-2\"");
	check_field("@SUM(A1)", "\"'@SUM(A1)\"");
	check_field("\tx", "\"' x\"");
	/* terminal escapes and other control bytes become spaces */
	check_field("a\x1b[2Jb\x7f", "a [2Jb ");
	check_field("", "");
}

/* Two jobs of a randread: 100 and 300 I/Os, bins that overlap in one bucket. */
static const char two_jobs[] =
    "{\"fio version\": \"zbench-engine-0.1\", \"jobs\": ["
    " {\"jobname\": \"j\", \"job options\": {\"rw\": \"randread\", \"numjobs\": \"2\"},"
    "  \"read\": {\"iops\": 10.0, \"io_bytes\": 409600, \"total_ios\": 100, \"runtime\": 1000,"
    "   \"iops_stddev\": 3.0,"
    "   \"clat_ns\": {\"N\": 100, \"min\": 1000, \"max\": 5000, \"mean\": 2000.0,"
    "    \"stddev\": 0.0, \"percentile\": {\"50.000000\": 2000, \"99.000000\": 2000},"
    "    \"bins\": {\"2000\": 100}}},"
    "  \"write\": {\"iops\": 0.0, \"total_ios\": 0, \"clat_ns\": {\"N\": 0}},"
    "  \"latency_us\": {\"2\": 100.0, \"4\": 0.0}, \"usr_cpu\": 1.0, \"sys_cpu\": 3.0},"
    " {\"jobname\": \"j\", \"job options\": {\"rw\": \"randread\", \"numjobs\": \"2\"},"
    "  \"read\": {\"iops\": 30.0, \"io_bytes\": 1228800, \"total_ios\": 300, \"runtime\": 1100,"
    "   \"iops_stddev\": 4.0,"
    "   \"clat_ns\": {\"N\": 300, \"min\": 500, \"max\": 9000, \"mean\": 4000.0,"
    "    \"stddev\": 0.0, \"percentile\": {\"50.000000\": 4000, \"99.000000\": 8000},"
    "    \"bins\": {\"2000\": 50, \"4000\": 200, \"8000\": 50}}},"
    "  \"write\": {\"iops\": 0.0, \"total_ios\": 0, \"clat_ns\": {\"N\": 0}},"
    "  \"latency_us\": {\"2\": 0.0, \"4\": 100.0}, \"usr_cpu\": 3.0, \"sys_cpu\": 5.0}]}";

static void test_one_job(void)
{
	json_t *fio = json_loads(two_jobs, 0, NULL),
	       *opts = json_pack("{s:s, s:i}", "bs", "4k", "iodepth", 8);
	json_t *one = export_fio_one_job(fio, opts), *job, *rd, *clat, *o;

	CHECK(one != NULL);
	if (!one)
		return;
	CHECK(json_array_size(json_object_get(one, "jobs")) == 1);
	job = json_array_get(json_object_get(one, "jobs"), 0);
	rd = json_object_get(job, "read");
	clat = json_object_get(rd, "clat_ns");
	CHECK(json_real_value(json_object_get(rd, "iops")) == 40.0);
	CHECK(json_integer_value(json_object_get(rd, "total_ios")) == 400);
	CHECK(json_integer_value(json_object_get(rd, "io_bytes")) == 1638400);
	CHECK(json_integer_value(json_object_get(rd, "runtime")) == 1100);
	CHECK(json_real_value(json_object_get(rd, "iops_stddev")) == 5.0);
	CHECK(json_integer_value(json_object_get(clat, "N")) == 400);
	CHECK(json_integer_value(json_object_get(clat, "min")) == 500);
	CHECK(json_integer_value(json_object_get(clat, "max")) == 9000);
	CHECK(json_real_value(json_object_get(clat, "mean")) == 3500.0);
	/* pooled: the jobs' own spread is 0, the spread of their means is sqrt(3/4 * 2000^2) */
	CHECK(fabs(json_real_value(json_object_get(clat, "stddev")) - 866.0254) < 0.01);
	CHECK(json_integer_value(json_object_get(json_object_get(clat, "bins"), "2000")) == 150);
	CHECK(json_integer_value(json_object_get(json_object_get(clat, "bins"), "4000")) == 200);
	/* from the bins: rank 200 of 400 is in 4000, rank 396 in 8000 */
	CHECK(json_integer_value(
		  json_object_get(json_object_get(clat, "percentile"), "50.000000")) == 4000);
	CHECK(json_integer_value(
		  json_object_get(json_object_get(clat, "percentile"), "99.000000")) == 8000);
	/* shares weighted by I/Os: (100 * 100 + 300 * 0) / 400 */
	CHECK(json_real_value(json_object_get(json_object_get(job, "latency_us"), "2")) == 25.0);
	CHECK(json_real_value(json_object_get(job, "usr_cpu")) == 2.0);
	/* the write direction did nothing and stays so */
	CHECK(json_integer_value(json_object_get(json_object_get(job, "write"), "total_ios")) == 0);
	/* complete job options: the jobs' own, the matrix's as strings, the engine's defaults */
	o = json_object_get(job, "job options");
	CHECK_STR(json_string_value(json_object_get(o, "rw")), "randread");
	CHECK_STR(json_string_value(json_object_get(o, "numjobs")), "2");
	CHECK_STR(json_string_value(json_object_get(o, "iodepth")), "8");
	CHECK_STR(json_string_value(json_object_get(o, "bs")), "4k");
	json_decref(one);

	/* one job without options: defaults filled */
	json_array_remove(json_object_get(fio, "jobs"), 1);
	json_object_del(json_array_get(json_object_get(fio, "jobs"), 0), "job options");
	one = export_fio_one_job(fio, NULL);
	o = json_object_get(json_array_get(json_object_get(one, "jobs"), 0), "job options");
	CHECK_STR(json_string_value(json_object_get(o, "rw")), "read");
	CHECK_STR(json_string_value(json_object_get(o, "iodepth")), "1");
	CHECK_STR(json_string_value(json_object_get(o, "numjobs")), "1");
	CHECK_STR(json_string_value(json_object_get(o, "bs")), "4096");
	json_decref(one);
	/* no jobs, or jobs that are not objects: nothing */
	json_object_set_new(fio, "jobs", json_pack("[i]", 7));
	CHECK(export_fio_one_job(fio, NULL) == NULL);
	json_object_del(fio, "jobs");
	CHECK(export_fio_one_job(fio, NULL) == NULL);
	json_decref(fio);
	json_decref(opts);
}

int main(void)
{
	test_csv();
	test_one_job();
	return check_summary("export");
}
