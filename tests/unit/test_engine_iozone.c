/* iozone mode: test sequencing, size ranges, KB/s arithmetic, stride order, aggregates, option
 * checks, two tiny real runs on /dev/shm and a child killed under a running throughput test. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "guest/engine/iozone.h"
#include "guest/engine/options.h"

static void job_set(struct job *job, const char *name, const char *value)
{
	char msg[512];

	if (engine_option_set(job, name, value, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "setting %s=%s: %s\n", name, value, msg);
		CHECK(0);
	}
}

static void test_sequence(void)
{
	static const struct {
		const char *tests;
		unsigned n;
		enum iozone_test first, last;
	} cases[] = {
		{ NULL, IOZ_NTESTS, IOZ_WRITE, IOZ_REFREAD },
		{ "0", 2, IOZ_WRITE, IOZ_REWRITE },
		{ "2", 4, IOZ_WRITE, IOZ_RANDWRITE }, /* write comes along: it makes the file */
		{ "1,7", 6, IOZ_WRITE, IOZ_REFREAD },
		{ "random,stride", 5, IOZ_WRITE, IOZ_STRIDEREAD },
		{ "4", 3, IOZ_WRITE, IOZ_RECREWRITE },
	};
	enum iozone_test seq[IOZ_NTESTS];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct job job;
		unsigned n;

		engine_job_init(&job);
		if (cases[i].tests)
			job_set(&job, "tests", cases[i].tests);
		n = iozone_sequence(job.iozone_groups, seq);
		CHECK(n == cases[i].n);
		CHECK(seq[0] == cases[i].first);
		CHECK(seq[n - 1] == cases[i].last);
		for (unsigned k = 1; k < n; k++)
			CHECK(seq[k] > seq[k - 1]); /* iozone's column order */
		engine_job_release(&job);
	}
	/* "1,7": write rewrite read reread fread refread */
	CHECK(iozone_sequence(1u << 1 | 1u << 7, seq) == 6 && seq[2] == IOZ_READ &&
	      seq[4] == IOZ_FREAD);
}

static void test_tests_option(void)
{
	static const char *const bad[] = { "8", "-1", "0,,x", "write,bogus", "" };
	char msg[512];
	struct job job;

	engine_job_init(&job);
	CHECK(job.iozone_groups == 0xff);
	job_set(&job, "tests", "0,2");
	CHECK(job.iozone_groups == 0x5);
	job_set(&job, "tests", "fwrite,fread,backward");
	CHECK(job.iozone_groups == (1u << 6 | 1u << 7 | 1u << 3));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(engine_option_set(&job, "tests", bad[i], msg, sizeof(msg)) < 0);
	CHECK(strstr(msg, "option 'tests'") != NULL);
	engine_job_release(&job);
}

static void test_pairs(void)
{
	struct iozone_pair p[200];
	struct job job;
	unsigned n;

	/* iozone -a: files 64k..512M, records 4k..16M, record <= file, and records under 64k
	 * skipped on files of 32M and more: 5+6+...+13 = 81 below 32M, 9 each for 32M..512M */
	engine_job_init(&job);
	job_set(&job, "mode", "iozone");
	n = iozone_pairs(&job, p, 200);
	CHECK(n == 81 + 5 * 9);
	CHECK(p[0].file == 64 << 10 && p[0].rec == 4 << 10);
	CHECK(p[4].file == 64 << 10 && p[4].rec == 64 << 10);
	CHECK(p[5].file == 128 << 10 && p[5].rec == 4 << 10);
	CHECK(p[81].file == 32 << 20 && p[81].rec == 64 << 10);
	CHECK(p[n - 1].file == 512ull << 20 && p[n - 1].rec == 16 << 20);
	for (unsigned i = 0; i < n; i++)
		CHECK(p[i].rec <= p[i].file);
	/* -z keeps the small records: 13 each for 32M..512M */
	job_set(&job, "all_record_sizes", "1");
	CHECK(iozone_pairs(&job, NULL, 0) == 81 + 5 * 13);
	/* -n/-g/-y/-q bound the ranges; a cap only limits what is written */
	job_set(&job, "min_file_size", "1m");
	job_set(&job, "max_file_size", "4m");
	job_set(&job, "min_record_size", "64k");
	job_set(&job, "max_record_size", "1m");
	n = iozone_pairs(&job, p, 2);
	CHECK(n == 3 * 5);
	CHECK(p[0].file == 1 << 20 && p[0].rec == 64 << 10 && p[1].rec == 128 << 10);
	/* -r: only that record size; -s: only that file size (iozone -a -r 4k / -s) */
	job_set(&job, "bs", "8k");
	CHECK(iozone_pairs(&job, p, 200) == 3 && p[2].file == 4 << 20 && p[2].rec == 8 << 10);
	job_set(&job, "size", "2m");
	CHECK(iozone_pairs(&job, p, 200) == 1 && p[0].file == 2 << 20 && p[0].rec == 8 << 10);
	engine_job_release(&job);

	/* throughput mode: the one pair (size, bs), whatever the ranges say */
	engine_job_init(&job);
	job_set(&job, "mode", "iozone");
	job_set(&job, "children", "8");
	job_set(&job, "size", "1g");
	job_set(&job, "bs", "128k");
	CHECK(iozone_pairs(&job, p, 200) == 1 && p[0].file == 1ull << 30 && p[0].rec == 128 << 10);
	engine_job_release(&job);
}

static void test_kbps(void)
{
	CHECK(iozone_kbps(1 << 20, 1000000000ull) == 1024.0);
	CHECK(iozone_kbps(65536, 500000000ull) == 128.0);
	CHECK(iozone_kbps(4096, 1000) == 4.0 * 1e6);
	CHECK(iozone_kbps(4096, 0) == 0.0);
}

static void test_record_order(void)
{
	static const uint64_t ns[] = { 1, 16, 34, 64, 100, 4096 };
	static const uint64_t strides[] = { 1, 2, 17, 34, 64 };

	for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++) {
		uint64_t n = ns[a];
		unsigned char *seen = calloc(n, 1);

		for (size_t b = 0; b < sizeof(strides) / sizeof(strides[0]); b++) {
			bool once = true;

			memset(seen, 0, n);
			for (uint64_t i = 0; i < n; i++) {
				uint64_t r = iozone_record_index(IOZ_STRIDEREAD, i, n, strides[b]);

				if (r >= n || seen[r]++)
					once = false;
			}
			CHECK(once); /* every record exactly once, whatever the stride */
		}
		CHECK(iozone_record_index(IOZ_BKWDREAD, 0, n, 17) == n - 1);
		CHECK(iozone_record_index(IOZ_BKWDREAD, n - 1, n, 17) == 0);
		CHECK(iozone_record_index(IOZ_RECREWRITE, n / 2, n, 17) == 0);
		CHECK(iozone_record_index(IOZ_READ, n - 1, n, 17) == n - 1);
		free(seen);
	}
	/* stride 17 over 64 records: 0, 17, 34, 51, 4, ... */
	CHECK(iozone_record_index(IOZ_STRIDEREAD, 4, 64, 17) == 4);
	CHECK(iozone_record_index(IOZ_STRIDEREAD, 3, 64, 17) == 51);
	/* stride 2 over 16: cycle 0 is the evens, cycle 1 the odds */
	CHECK(iozone_record_index(IOZ_STRIDEREAD, 8, 16, 2) == 1);
}

static void test_aggregate(void)
{
	struct iozone_result res[3] = {
		/* 1 MiB in 1 s, 2 MiB in 1 s, 1 MiB in 0.5 s (stonewalled): 1024, 2048, 2048 */
		{ .bytes = 1 << 20, .start_ns = 1000000000, .end_ns = 2000000000 },
		{ .bytes = 2 << 20, .start_ns = 1000000000, .end_ns = 2000000000 },
		{ .bytes = 1 << 20,
		  .start_ns = 1500000000,
		  .end_ns = 2000000000,
		  .stonewalled = 1 },
	};
	struct iozone_pair pair = { .file = 2 << 20, .rec = 128 << 10 };
	struct iozone_run run = { .throughput = true,
				  .nchild = 3,
				  .npairs = 1,
				  .ntests = 1,
				  .nsteps = 1,
				  .pairs = &pair,
				  .results = res };
	struct iozone_aggregate a;

	iozone_aggregate(&run, 0, &a);
	CHECK(a.children_kbps == 1024.0 + 2048.0 + 2048.0);
	CHECK(a.min_kbps == 1024.0 && a.max_kbps == 2048.0);
	CHECK(a.avg_kbps == (1024.0 + 2048.0 + 2048.0) / 3);
	CHECK(a.min_xfer_kb == 1024.0);
	CHECK(a.parent_kbps == 4096.0); /* 4 MiB from the first start to the last end, 1 s */
}

static void test_validate(void)
{
	static const struct {
		const char *opts[6][2];
		const char *want; /* NULL: valid */
	} cases[] = {
		{ { { "mode", "iozone" } }, NULL },
		{ { { "mode", "iozone" }, { "numjobs", "2" } }, "use children" },
		{ { { "mode", "iozone" }, { "children", "2" } }, "option 'size'" },
		{ { { "mode", "iozone" }, { "children", "2" }, { "size", "1m" } }, NULL },
		{ { { "mode", "iozone" }, { "ioengine", "libaio" } }, "option 'ioengine'" },
		{ { { "mode", "iozone" }, { "time_based", "1" } }, "option 'time_based'" },
		{ { { "mode", "iozone" }, { "min_file_size", "1m" }, { "max_file_size", "64k" } },
		  "min_file_size" },
		{ { { "mode", "iozone" }, { "min_record_size", "0" } }, "min_record_size" },
		{ { { "mode", "iozone" },
		    { "children", "2" },
		    { "size", "1m" },
		    { "filename", "/tmp/x" } },
		  "a file each" },
		{ { { "size", "1m" } }, NULL }, /* fio mode is unchanged */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char msg[512] = "";
		struct job job;
		int ret;

		engine_job_init(&job);
		for (int k = 0; k < 6 && cases[i].opts[k][0]; k++)
			job_set(&job, cases[i].opts[k][0], cases[i].opts[k][1]);
		ret = engine_job_validate(&job, msg, sizeof(msg));
		if (cases[i].want)
			CHECK(ret < 0 && strstr(msg, cases[i].want));
		else
			CHECK(ret == 0);
		if ((ret < 0) != (cases[i].want != NULL))
			fprintf(stderr, "case %zu: %s\n", i, msg);
		engine_job_release(&job);
	}
}

static char tmpdir[64];

static void test_run_auto(void)
{
	struct iozone_run run;
	char msg[1024], path[128];
	struct job job;
	bool whole = true;

	engine_job_init(&job);
	job_set(&job, "mode", "iozone");
	job_set(&job, "directory", tmpdir);
	job_set(&job, "min_file_size", "64k");
	job_set(&job, "max_file_size", "128k");
	job_set(&job, "max_record_size", "8k");
	job_set(&job, "include_flush", "1");
	CHECK(engine_job_validate(&job, msg, sizeof(msg)) == 0);
	CHECK(iozone_run(&run, &job, -1, msg, sizeof(msg)) == 0);
	CHECK(run.npairs == 4 && run.ntests == IOZ_NTESTS && run.nsteps == 4 * IOZ_NTESTS);
	for (unsigned s = 0; s < run.nsteps; s++) {
		const struct iozone_result *r = iozone_result(&run, s, 0);

		if (r->bytes != run.pairs[s / run.ntests].file || r->end_ns <= r->start_ns ||
		    r->ios != run.pairs[s / run.ntests].file / run.pairs[s / run.ntests].rec)
			whole = false;
	}
	CHECK(whole);
	snprintf(path, sizeof(path), "%s/job.0.0", tmpdir);
	CHECK(access(path, F_OK) < 0 && errno == ENOENT); /* removed after each file size */
	{
		json_t *doc = iozone_json(&run);
		json_t *io = json_object_get(doc, "iozone");
		json_t *first = json_array_get(json_object_get(io, "results"), 0);
		json_t *jobs = json_object_get(doc, "jobs");

		CHECK_STR(json_string_value(json_object_get(io, "mode")), "auto");
		CHECK(json_array_size(json_object_get(io, "results")) == run.nsteps);
		CHECK_STR(json_string_value(json_object_get(first, "test")), "write");
		CHECK(json_integer_value(json_object_get(first, "file_kb")) == 64);
		CHECK(json_integer_value(json_object_get(first, "record_kb")) == 4);
		CHECK(json_real_value(json_object_get(first, "kbps")) > 0);
		CHECK(json_array_size(jobs) == 1);
		/* 7 read tests x (64k + 64k + 128k + 128k) */
		CHECK(json_integer_value(json_object_get(
			  json_object_get(json_array_get(jobs, 0), "read"), "io_kbytes")) ==
		      7 * 384);
		json_decref(doc);
	}
	iozone_release(&run);
	engine_job_release(&job);
}

static void test_run_throughput(void)
{
	struct iozone_run run;
	struct job job;
	char msg[1024];
	bool whole = true;

	engine_job_init(&job);
	job_set(&job, "mode", "iozone");
	job_set(&job, "directory", tmpdir);
	job_set(&job, "children", "3");
	job_set(&job, "size", "256k");
	job_set(&job, "bs", "16k");
	job_set(&job, "tests", "0,1,2");
	job_set(&job, "stonewall", "0");
	CHECK(iozone_run(&run, &job, -1, msg, sizeof(msg)) == 0);
	CHECK(run.nsteps == 6 && run.nchild == 3);
	for (unsigned s = 0; s < run.nsteps; s++) {
		struct iozone_aggregate a;

		for (unsigned c = 0; c < run.nchild; c++)
			if (iozone_result(&run, s, c)->bytes != 256 << 10)
				whole = false;
		iozone_aggregate(&run, s, &a);
		CHECK(a.min_kbps > 0 && a.min_kbps <= a.avg_kbps && a.avg_kbps <= a.max_kbps);
		CHECK(a.min_xfer_kb == 256.0);
	}
	CHECK(whole);
	iozone_release(&run);
	engine_job_release(&job);
}

/* The OOM killer's part: kill child 1 as soon as it exists. */
static void *killer(void *arg)
{
	struct iozone_run *run = arg;

	for (int i = 0; i < 200000; i++) {
		pid_t pid = iozone_child_pid(run, 1);

		if (pid > 0) {
			kill(pid, SIGKILL);
			return NULL;
		}
		usleep(50);
	}
	return NULL;
}

static void test_child_killed(void)
{
	struct iozone_run run;
	struct job job;
	char msg[1024] = "";
	pthread_t th;
	int ret;

	memset(&run, 0, sizeof(run));
	engine_job_init(&job);
	job_set(&job, "mode", "iozone");
	job_set(&job, "directory", tmpdir);
	job_set(&job, "children", "2");
	job_set(&job, "size", "64m");
	job_set(&job, "bs", "4k");
	job_set(&job, "stonewall", "0");
	pthread_create(&th, NULL, killer, &run);
	ret = iozone_run(&run, &job, -1, msg, sizeof(msg));
	pthread_join(th, NULL);
	CHECK(ret < 0);
	CHECK(strstr(msg, "iozone child 1 (pid ") != NULL);
	CHECK(strstr(msg, "killed by signal 9") != NULL);
	if (!strstr(msg, "killed by signal 9"))
		fprintf(stderr, "message: %s\n", msg);
	CHECK(iozone_child_pid(&run, 0) == 0 && iozone_child_pid(&run, 1) == 0); /* reaped */
	iozone_release(&run);
	engine_job_release(&job);
}

int main(void)
{
	char cmd[128];

	test_sequence();
	test_tests_option();
	test_pairs();
	test_kbps();
	test_record_order();
	test_aggregate();
	test_validate();

	snprintf(tmpdir, sizeof(tmpdir), "/dev/shm/zb-iozone.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/zb-iozone.XXXXXX");
		if (!mkdtemp(tmpdir)) {
			CHECK(0);
			return check_summary("engine_iozone");
		}
	}
	test_run_auto();
	test_run_throughput();
	test_child_killed();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	CHECK(system(cmd) == 0);
	return check_summary("engine_iozone");
}
