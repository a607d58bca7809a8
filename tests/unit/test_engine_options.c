/* Unit tests for guest/engine/options.c (good and bad values, exact messages, JSON jobs, the
 * host-side check) and for the offset generator's determinism (workload_gen.c). */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "guest/engine/ioengine.h"
#include "guest/engine/options.h"
#include "guest/engine/workload.h"

static void test_cli_values(void)
{
	static const struct {
		const char *name, *value, *msg; /* msg NULL: accepted */
	} cases[] = {
		{ "bs", "4k", NULL },
		{ "bs", "4q", "option 'bs': expected a size such as \"4k\", got \"4q\"" },
		{ "blocksize", "1M", NULL },
		{ "size", "-1", "option 'size': expected a size such as \"4k\", got \"-1\"" },
		{ "runtime", "120", NULL },
		{ "runtime", "2m", NULL },
		{ "runtime", "soon",
		  "option 'runtime': expected a duration such as \"30s\", got \"soon\"" },
		{ "rw", "randrw", NULL },
		{ "readwrite", "write", NULL },
		{ "rw", "random",
		  "option 'rw': expected one of read, write, randread, randwrite, rw, readwrite, "
		  "randrw, got \"random\"" },
		{ "rwmixread", "101",
		  "option 'rwmixread': expected an integer from 0 to 100, got \"101\"" },
		{ "numjobs", "0",
		  "option 'numjobs': expected an integer from 1 to 1024, got \"0\"" },
		{ "direct", "1", NULL },
		{ "direct", "true", NULL },
		{ "direct", NULL, NULL },
		{ "direct", "yes", "option 'direct': expected true/false or 1/0, got \"yes\"" },
		{ "sync", "dsync", NULL },
		{ "sync", "1", NULL },
		{ "ioengine", "psync", NULL },
		{ "ioengine", "libaio", NULL },
		{ "ioengine", "io_uring", NULL },
		{ "ioengine", "posixaio",
		  "option 'ioengine': unknown I/O engine \"posixaio\" (this build has: psync, "
		  "libaio, "
		  "io_uring)" },
		{ "bssplit", "4k/50:64k/50", NULL },
		{ "bssplit", "4k/50:64k/40",
		  "option 'bssplit': the percentages must add up to 100, got \"4k/50:64k/40\"" },
		{ "bssplit", "4k/50:4q",
		  "option 'bssplit': expected a block size such as \"4k\" (at most 64M), got "
		  "\"4q\"" },
		{ "bssplit", "4k/50,8k/100",
		  "option 'bssplit': expected bs/percent[:bs/percent...] (one list for reads and "
		  "writes), got \"4k/50,8k/100\"" },
		{ "rate_process", "poisson", NULL },
		{ "rate_process", "exp",
		  "option 'rate_process': expected one of linear, poisson, got \"exp\"" },
		{ "buffer_compress_percentage", "75", NULL },
		{ "buffer_pattern", "0xdeadbeef", NULL },
		{ "buffer_pattern", "0xdeadbeeg",
		  "option 'buffer_pattern': expected hex digits after 0x, got \"0xdeadbeeg\"" },
		{ "dedupe_percentage", "101",
		  "option 'dedupe_percentage': expected an integer from 0 to 100, got \"101\"" },
		{ "bs", NULL, "option 'bs': needs a value (--bs=VALUE)" },
		{ "name", "", "option 'name': expected a non-empty string" },
		{ "randseed", "12345678901234", NULL },
		{ "randseed", "-3",
		  "option 'randseed': expected a non-negative integer, got \"-3\"" },
		{ "iodepthh", "1", "unknown option 'iodepthh'" },
		/* fio's batching options and their aliases */
		{ "iodepth_batch_submit", "4", NULL },
		{ "iodepth_batch", "0", NULL },
		{ "iodepth_batch_submit", "-1",
		  "option 'iodepth_batch_submit': expected an integer from 0 to 65536, got "
		  "\"-1\"" },
		{ "iodepth_batch_complete", "2", NULL },
		{ "iodepth_batch_complete_min", "0", NULL },
		{ "iodepth_batch_complete_max", "16", NULL },
		{ "iodepth_batch_complete_max", "all",
		  "option 'iodepth_batch_complete_max': expected an integer from 0 to 65536, got "
		  "\"all\"" },
		{ "overwrite", "1", NULL },
		{ "overwrite", NULL, NULL },
		/* random_distribution: fio's NAME[:VALUE[:CENTER]] */
		{ "random_distribution", "random", NULL },
		{ "random_distribution", "zipf", NULL },
		{ "random_distribution", "zipf:1.2", NULL },
		{ "random_distribution", "zipf:0.8:0.25", NULL },
		{ "random_distribution", "pareto:0.3", NULL },
		{ "random_distribution", "normal:5", NULL },
		{ "random_distribution", "normal:5:1", NULL },
		{ "random_distribution", "zipf:1",
		  "option 'random_distribution': zipf theta must be above 0 and not 1, got \"1\"" },
		{ "random_distribution", "zipf:-2",
		  "option 'random_distribution': zipf theta must be above 0 and not 1, got "
		  "\"-2\"" },
		{ "random_distribution", "pareto:1.5",
		  "option 'random_distribution': pareto h must be between 0 and 1, got \"1.5\"" },
		{ "random_distribution", "normal:100",
		  "option 'random_distribution': normal deviation must be a percent from 0 to "
		  "below "
		  "100, got \"100\"" },
		{ "random_distribution", "normal:5%",
		  "option 'random_distribution': expected random, zipf[:theta], pareto[:h] or "
		  "normal[:dev] with an optional :center, got \"normal:5%\"" },
		{ "random_distribution", "zipf:1.2:1.5",
		  "option 'random_distribution': the center must be a number from 0 to 1, got "
		  "\"1.5\"" },
		{ "random_distribution", "zipf:nan",
		  "option 'random_distribution': expected random, zipf[:theta], pareto[:h] or "
		  "normal[:dev] with an optional :center, got \"zipf:nan\"" },
		{ "random_distribution", "random:1",
		  "option 'random_distribution': expected random, zipf[:theta], pareto[:h] or "
		  "normal[:dev] with an optional :center, got \"random:1\"" },
		{ "random_distribution", "gauss:5",
		  "option 'random_distribution': expected random, zipf[:theta], pareto[:h] or "
		  "normal[:dev] with an optional :center, got \"gauss:5\"" },
		{ "random_distribution", "zoned:60/10:40/90",
		  "option 'random_distribution': fio's \"zoned\" distribution is not supported" },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct job job;
		char msg[512] = "";
		int ret;

		engine_job_init(&job);
		ret = engine_option_set(&job, cases[i].name, cases[i].value, msg, sizeof(msg));
		if (cases[i].msg) {
			CHECK(ret == -1);
			CHECK_STR(msg, cases[i].msg);
		} else {
			CHECK(ret == 0);
			if (ret)
				fprintf(stderr, "  %s=%s: %s\n", cases[i].name, cases[i].value,
					msg);
		}
		engine_job_release(&job);
	}
}

static void test_parsed_fields(void)
{
	struct job job;
	char msg[256];

	engine_job_init(&job);
	CHECK(job.bs == 4096 && job.numjobs == 1 && job.rwmixread == 50 && job.loops == 1);
	CHECK(job.rw == ENGINE_RW_READ && !job.time_based && job.randrepeat);
	CHECK_STR(job.ioengine, "psync");
	CHECK(engine_option_set(&job, "runtime", "120", msg, sizeof(msg)) == 0);
	CHECK(job.runtime_us == 120000000ull);
	CHECK(engine_option_set(&job, "ramp_time", "1500ms", msg, sizeof(msg)) == 0);
	CHECK(job.ramp_time_us == 1500000ull);
	CHECK(engine_option_set(&job, "sync", "dsync", msg, sizeof(msg)) == 0);
	CHECK(job.sync_flags == O_DSYNC);
	CHECK(engine_option_set(&job, "rwmixwrite", "30", msg, sizeof(msg)) == 0);
	CHECK(job.rwmixread == 70);
	CHECK(engine_option_set(&job, "time_based", NULL, msg, sizeof(msg)) == 0);
	CHECK(job.time_based);
	CHECK(engine_option_set(&job, "size", "64M", msg, sizeof(msg)) == 0);
	CHECK(job.size == 64ull << 20);
	CHECK(engine_job_validate(&job, msg, sizeof(msg)) == 0);
	engine_job_release(&job);

	/* fio's defaults: submit one at a time, reap one at a time, uniform offsets */
	engine_job_init(&job);
	CHECK(job.iodepth_batch_submit == 1 && job.iodepth_batch_complete_min == 1 &&
	      job.iodepth_batch_complete_max == 0);
	CHECK(job.dist == ENGINE_DIST_RANDOM && !job.overwrite);
	CHECK(engine_option_set(&job, "iodepth_batch", "8", msg, sizeof(msg)) == 0);
	CHECK(engine_option_set(&job, "iodepth_batch_complete", "4", msg, sizeof(msg)) == 0);
	CHECK(job.iodepth_batch_submit == 8 && job.iodepth_batch_complete_min == 4);
	CHECK(engine_option_set(&job, "random_distribution", "zipf", msg, sizeof(msg)) == 0);
	CHECK(job.dist == ENGINE_DIST_ZIPF && job.dist_value == 1.1 && job.dist_center == -1);
	CHECK(engine_option_set(&job, "random_distribution", "pareto", msg, sizeof(msg)) == 0);
	CHECK(job.dist == ENGINE_DIST_PARETO && job.dist_value == 0.2);
	CHECK(engine_option_set(&job, "random_distribution", "normal:2.5:0.75", msg, sizeof(msg)) ==
	      0);
	CHECK(job.dist == ENGINE_DIST_NORMAL && job.dist_value == 2.5 && job.dist_center == 0.75);
	CHECK(engine_option_set(&job, "random_distribution", "random", msg, sizeof(msg)) == 0);
	CHECK(job.dist == ENGINE_DIST_RANDOM);
	engine_job_release(&job);
}

/* fio's rule for filename with directory: "directory/filename", whatever filename is. */
static void test_shared_path(void)
{
	static const struct {
		const char *directory, *filename, *want; /* want NULL: per-thread files */
	} cases[] = {
		{ "/stripe", "f", "/stripe/f" },
		{ "/stripe", "/stripe/f", "/stripe//stripe/f" },
		{ "/stripe", "a/b", "/stripe/a/b" },
		{ NULL, "/dev/zvol/tank/v", "/dev/zvol/tank/v" },
		{ "/stripe", NULL, NULL },
	};
	char path[PATH_MAX], msg[256], *longname;
	struct job job;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		engine_job_init(&job);
		if (cases[i].directory)
			CHECK(engine_option_set(&job, "directory", cases[i].directory, msg,
						sizeof(msg)) == 0);
		if (cases[i].filename)
			CHECK(engine_option_set(&job, "filename", cases[i].filename, msg,
						sizeof(msg)) == 0);
		CHECK(engine_option_set(&job, "size", "1M", msg, sizeof(msg)) == 0);
		CHECK(engine_job_validate(&job, msg, sizeof(msg)) == 0);
		if (cases[i].want) {
			CHECK(engine_job_shared_path(&job, path, sizeof(path)) == 1);
			CHECK_STR(path, cases[i].want);
		} else {
			CHECK(engine_job_shared_path(&job, path, sizeof(path)) == 0);
		}
		engine_job_release(&job);
	}
	/* a joined path that does not fit is refused, not cut */
	longname = malloc(PATH_MAX);
	CHECK(longname != NULL);
	if (!longname)
		return;
	memset(longname, 'a', PATH_MAX - 4);
	longname[PATH_MAX - 4] = '\0';
	engine_job_init(&job);
	CHECK(engine_option_set(&job, "directory", "/stripe", msg, sizeof(msg)) == 0);
	CHECK(engine_option_set(&job, "filename", longname, msg, sizeof(msg)) == 0);
	CHECK(engine_option_set(&job, "size", "1M", msg, sizeof(msg)) == 0);
	CHECK(engine_job_shared_path(&job, path, sizeof(path)) == -1);
	CHECK(engine_job_validate(&job, msg, sizeof(msg)) == -1);
	CHECK_STR(msg, "options 'directory' and 'filename': the path is too long");
	engine_job_release(&job);
	free(longname);
}

static void test_validate(void)
{
	static const struct {
		const char *args[4][2];
		const char *msg;
	} cases[] = {
		{ { { "size", "1M" } }, NULL },
		{ { { "bs", "4k" } },
		  "option 'size': required unless 'filename' names an existing "
		  "file or device" },
		{ { { "size", "1M" }, { "bs", "0" } }, "option 'bs': must be greater than 0" },
		{ { { "size", "1k" } }, "option 'size': smaller than bs" },
		{ { { "size", "1M" }, { "direct", "1" }, { "bs", "1000" } },
		  "option 'direct': bs and offset must be multiples of 512" },
		{ { { "size", "1M" }, { "time_based", "1" } },
		  "option 'time_based': needs a runtime" },
		{ { { "filename", "/dev/null" } }, NULL },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct job job;
		char msg[512] = "";
		int ret;

		engine_job_init(&job);
		for (int a = 0; a < 4 && cases[i].args[a][0]; a++)
			CHECK(engine_option_set(&job, cases[i].args[a][0], cases[i].args[a][1], msg,
						sizeof(msg)) == 0);
		ret = engine_job_validate(&job, msg, sizeof(msg));
		if (cases[i].msg) {
			CHECK(ret == -1);
			CHECK_STR(msg, cases[i].msg);
		} else {
			CHECK(ret == 0);
		}
		engine_job_release(&job);
	}
}

static void test_option_check(void)
{
	static const struct {
		const char *name, *json, *msg;
	} cases[] = {
		{ "bs", "\"16k\"", NULL },
		{ "bs", "4096", NULL },
		{ "bs", "\"4q\"", "expected a size such as \"4k\", got \"4q\"" },
		{ "runtime", "30", NULL },
		{ "runtime", "\"30s\"", NULL },
		{ "direct", "true", NULL },
		{ "direct", "1", NULL },
		{ "direct", "2", "expected true/false or 1/0, got \"2\"" },
		{ "time_based", "false", NULL },
		{ "numjobs", "4", NULL },
		{ "numjobs", "\"4\"", NULL },
		{ "numjobs", "4.5", "expected a string, integer or boolean" },
		{ "numjobs", "[1]", "expected a string, integer or boolean" },
		{ "target", "\"pool\"", "unknown option" },
		{ "ioengine", "\"aio\"",
		  "unknown I/O engine \"aio\" (this build has: psync, libaio, io_uring)" },
		/* the matrix knows the new options through the same table */
		{ "iodepth_batch_submit", "8", NULL },
		{ "iodepth_batch", "8", NULL },
		{ "iodepth_batch_complete_max", "\"16\"", NULL },
		{ "overwrite", "true", NULL },
		{ "random_distribution", "\"zipf:1.2\"", NULL },
		{ "random_distribution", "\"zipf:x\"",
		  "expected random, zipf[:theta], pareto[:h] or normal[:dev] with an optional "
		  ":center, got \"zipf:x\"" },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *v = json_loads(cases[i].json, JSON_DECODE_ANY, NULL);
		char msg[512] = "";
		int ret;

		CHECK(v != NULL);
		ret = engine_option_check(cases[i].name, v, msg, sizeof(msg));
		if (cases[i].msg) {
			CHECK(ret == -1);
			CHECK_STR(msg, cases[i].msg);
		} else {
			CHECK(ret == 0);
		}
		json_decref(v);
	}
}

static void test_json_job(void)
{
	json_t *obj = json_loads("{\"name\":\"j\",\"rw\":\"randwrite\",\"bs\":\"16k\",\"size\":"
				 "1048576,\"direct\":true,\"runtime\":5,\"time_based\":1}",
				 0, NULL),
	       *resolved, *given;
	struct job job, again;
	char msg[256];

	engine_job_init(&job);
	CHECK(engine_job_from_json(&job, obj, msg, sizeof(msg)) == 0);
	CHECK(job.rw == ENGINE_RW_RANDWRITE && job.bs == 16384 && job.size == 1048576);
	CHECK(job.direct && job.time_based && job.runtime_us == 5000000);
	given = engine_job_given_json(&job);
	CHECK_STR(json_string_value(json_object_get(given, "bs")), "16k");
	CHECK_STR(json_string_value(json_object_get(given, "direct")), "1");
	CHECK(json_object_get(given, "numjobs") == NULL);
	/* The resolved dump reads back to the same job. */
	resolved = engine_job_resolved_json(&job);
	CHECK_STR(json_string_value(json_object_get(resolved, "runtime")), "5s");
	/* --dry-run's contract: it reads back once the null entries are dropped */
	{
		const char *key;
		json_t *v;
		void *tmp;

		json_object_foreach_safe (resolved, tmp, key, v) {
			if (json_is_null(v))
				json_object_del(resolved, key);
		}
	}
	engine_job_init(&again);
	CHECK(engine_job_from_json(&again, resolved, msg, sizeof(msg)) == 0);
	CHECK(again.bs == job.bs && again.rw == job.rw && again.runtime_us == job.runtime_us &&
	      again.direct == job.direct && again.rwmixread == job.rwmixread);
	engine_job_release(&again);
	json_decref(resolved);
	json_decref(given);
	json_decref(obj);

	obj = json_loads("{\"bs\":\"4k\",\"fsync_every\":1}", 0, NULL);
	CHECK(engine_job_from_json(&job, obj, msg, sizeof(msg)) == -1);
	CHECK_STR(msg, "unknown option 'fsync_every'");
	json_decref(obj);
	engine_job_release(&job);
}

static void test_offsets(void)
{
	struct job job;
	struct workload_offsets a, b, c;
	char msg[256];
	uint64_t x, y, z;
	int same = 0, inrange = 1;

	engine_job_init(&job);
	engine_option_set(&job, "rw", "randread", msg, sizeof(msg));
	engine_option_set(&job, "randseed", "42", msg, sizeof(msg));
	engine_option_set(&job, "offset", "8k", msg, sizeof(msg));
	workload_offsets_init(&a, &job, 1 << 20, 0);
	workload_offsets_init(&b, &job, 1 << 20, 0);
	workload_offsets_init(&c, &job, 1 << 20, 1);
	for (int i = 0; i < 10000; i++) {
		workload_offsets_next(&a, &x);
		workload_offsets_next(&b, &y);
		workload_offsets_next(&c, &z);
		CHECK(x == y);
		same += x == z;
		inrange &= x >= 8192 && x + 4096 <= 8192 + (1 << 20) && x % 4096 == 0;
	}
	CHECK(inrange);
	CHECK(same < 100); /* another thread gets another sequence */
	engine_option_set(&job, "randseed", "43", msg, sizeof(msg));
	workload_offsets_init(&c, &job, 1 << 20, 0);
	workload_offsets_init(&a, &job, 1 << 20, 0);
	same = 0;
	engine_option_set(&job, "randseed", "42", msg, sizeof(msg));
	workload_offsets_init(&b, &job, 1 << 20, 0);
	for (int i = 0; i < 1000; i++) {
		workload_offsets_next(&b, &y);
		workload_offsets_next(&c, &z);
		same += y == z;
	}
	CHECK(same < 10); /* another seed gets another sequence */

	/* Sequential: covers the region once, then says so (not time_based). */
	engine_option_set(&job, "rw", "read", msg, sizeof(msg));
	engine_option_set(&job, "offset", "0", msg, sizeof(msg));
	workload_offsets_init(&a, &job, 16384, 0);
	for (uint64_t want = 0; want < 16384; want += 4096) {
		CHECK(workload_offsets_next(&a, &x));
		CHECK(x == want);
	}
	CHECK(!workload_offsets_next(&a, &x));
	engine_job_release(&job);
}

static void test_ioengine_check(void)
{
	struct ioengine_ops broken = ioengine_psync;
	char msg[256];

	CHECK(ioengine_ops_check(&ioengine_psync, msg, sizeof(msg)) == 0);
	CHECK(ioengine_find("psync") == &ioengine_psync);
	CHECK(ioengine_find("nope") == NULL);
	broken.version = 99;
	CHECK(ioengine_ops_check(&broken, msg, sizeof(msg)) == -1);
	broken = ioengine_psync;
	broken.flags = 0; /* async without getevents/event */
	CHECK(ioengine_ops_check(&broken, msg, sizeof(msg)) == -1);
	CHECK_STR(msg, "I/O engine \"psync\": an async engine needs commit, getevents and event");
	CHECK(ioengine_ops_check(&ioengine_libaio, msg, sizeof(msg)) == 0);
	CHECK(ioengine_ops_check(&ioengine_io_uring, msg, sizeof(msg)) == 0);
}

int main(void)
{
	test_cli_values();
	test_parsed_fields();
	test_validate();
	test_shared_path();
	test_option_check();
	test_json_job();
	test_offsets();
	test_ioengine_check();
	return check_summary("engine_options");
}
