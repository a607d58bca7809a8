/* Unit tests for the engine's workload pieces: the rate scheduler (linear spacing, Poisson
 * arrivals through a Kolmogorov-Smirnov test that also has to reject a non-exponential
 * sequence), bssplit and rwmix proportions, randseed reproducibility, buffer compressibility
 * (zstd), dedupe, buffer_pattern, and short real runs on /dev/shm for fsync/fdatasync every N,
 * loops and the libaio/io_uring engines. */
#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "guest/engine/buffers.h"
#include "guest/engine/options.h"
#include "guest/engine/rate.h"
#include "guest/engine/workload.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* KS statistic of `v` (sorted in place) against the exponential with the sample's own mean. */
static double ks_exp(double *v, size_t n)
{
	double mean = 0, d = 0;

	for (size_t i = 0; i < n; i++)
		mean += v[i];
	mean /= (double)n;
	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++) {
		double f = 1 - exp(-v[i] / mean);
		double lo = fabs(f - (double)i / (double)n),
		       hi = fabs((double)(i + 1) / (double)n - f);

		if (lo > d)
			d = lo;
		if (hi > d)
			d = hi;
	}
	return d;
}

static void job_set(struct job *job, const char *name, const char *value)
{
	char msg[256];

	if (engine_option_set(job, name, value, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "%s\n", msg);
		CHECK(0);
	}
}

static void test_rate_sched(void)
{
	enum { N = 50000 };
	static double iv[N];
	struct rate_sched s;
	uint64_t prev, t;
	double sum = 0;

	/* linear: exactly 1e9/iops apart */
	rate_sched_init(&s, 1000, ENGINE_RATE_LINEAR, 1, 1000000000ull);
	prev = rate_sched_next(&s);
	CHECK(prev >= 1000000000ull && prev < 1001000000ull);
	for (int i = 0; i < N; i++) {
		t = rate_sched_next(&s);
		iv[i] = (double)(t - prev);
		prev = t;
		CHECK(iv[i] >= 999999 && iv[i] <= 1000001);
	}
	/* a constant sequence must fail the exponential test: the test can fail */
	CHECK(ks_exp(iv, N) > 0.3);

	/* poisson: mean 1/iops and exponential (KS, alpha = 0.001: 1.95 / sqrt(n)) */
	rate_sched_init(&s, 64, ENGINE_RATE_POISSON, 7, 0);
	prev = rate_sched_next(&s);
	for (int i = 0; i < N; i++) {
		t = rate_sched_next(&s);
		iv[i] = (double)(t - prev);
		sum += iv[i];
		prev = t;
	}
	CHECK(fabs(sum / N / (1e9 / 64) - 1) < 0.02);
	CHECK(ks_exp(iv, N) < 1.95 / sqrt(N));
	/* uniform intervals are not exponential either */
	for (int i = 0; i < N; i++)
		iv[i] = (double)(i % 1000);
	CHECK(ks_exp(iv, N) > 1.95 / sqrt(N));
	CHECK(rate_exp1(UINT64_MAX) >= 0 && isfinite(rate_exp1(0)));
}

static void test_bssplit_rwmix(void)
{
	struct workload_mix m, m2;
	unsigned n4 = 0, n8 = 0, n64 = 0, reads = 0, same = 0;
	struct job job;
	const int N = 200000;

	engine_job_init(&job);
	job_set(&job, "bssplit", "4k/10:8k:64k");
	CHECK(job.nbss == 3);
	CHECK(job.bss[0].pct == 10 && job.bss[1].pct == 45 && job.bss[2].pct == 45);
	CHECK(engine_job_max_bs(&job) == 65536 && engine_job_min_bs(&job) == 4096);
	job_set(&job, "bssplit", "4k/20:8k/30:64k/50");
	job_set(&job, "rw", "randrw");
	job_set(&job, "rwmixread", "70");
	workload_mix_init(&m, &job, 0);
	workload_mix_init(&m2, &job, 0);
	for (int i = 0; i < N; i++) {
		uint64_t bs = workload_mix_bs(&m);
		enum io_ddir d = workload_mix_ddir(&m);

		n4 += bs == 4096;
		n8 += bs == 8192;
		n64 += bs == 65536;
		reads += d == IO_DDIR_READ;
		same += bs == workload_mix_bs(&m2) && d == workload_mix_ddir(&m2);
	}
	CHECK(n4 + n8 + n64 == (unsigned)N);
	CHECK(fabs((double)n4 / N - 0.20) < 0.005);
	CHECK(fabs((double)n8 / N - 0.30) < 0.005);
	CHECK(fabs((double)n64 / N - 0.50) < 0.005);
	CHECK(fabs((double)reads / N - 0.70) < 0.005);
	CHECK(same == (unsigned)N); /* same seed, same thread: same sequence */

	/* random offsets with mixed sizes: aligned to the smallest, inside the region */
	{
		struct workload_offsets o;
		uint64_t off;
		int ok = 1;

		workload_offsets_init(&o, &job, 1 << 20, 3);
		for (int i = 0; i < 10000; i++) {
			uint64_t len = i % 2 ? 65536 : 4096;

			workload_offsets_next_len(&o, len, &off);
			ok &= off % 4096 == 0 && off + len <= (1 << 20);
		}
		CHECK(ok);
	}
	engine_job_release(&job);
}

/* zstd's compressed size over the original, or -1. libzstd is loaded at run time (it is a
 * test-only dependency: libzstd1, present wherever zstd is installed). */
static double zstd_ratio(const void *buf, size_t len)
{
	static void *lib;
	static size_t (*bound)(size_t);
	static size_t (*compress)(void *, size_t, const void *, size_t, int);
	static unsigned (*is_error)(size_t);
	size_t cap, n;
	void *out;

	if (!lib) {
		lib = dlopen("libzstd.so.1", RTLD_NOW);
		if (!lib) {
			fprintf(stderr, "libzstd.so.1: %s\n", dlerror());
			return -1;
		}
		*(void **)&bound = dlsym(lib, "ZSTD_compressBound");
		*(void **)&compress = dlsym(lib, "ZSTD_compress");
		*(void **)&is_error = dlsym(lib, "ZSTD_isError");
		if (!bound || !compress || !is_error)
			return -1;
	}
	cap = bound(len);
	out = malloc(cap);
	n = compress(out, cap, buf, len, 3);
	free(out);
	return is_error(n) ? -1 : (double)n / (double)len;
}

static void test_buffers(void)
{
	enum { LEN = 1 << 20 };
	unsigned char *buf = malloc(LEN), *buf2 = malloc(LEN);
	struct bufgen g;
	struct job job;
	double r;

	engine_job_init(&job);
	bufgen_init(&g, &job, 1);
	bufgen_fill(&g, buf, LEN);
	r = zstd_ratio(buf, LEN);
	CHECK(r > 0.99); /* default: incompressible */

	job_set(&job, "buffer_compress_percentage", "75");
	bufgen_init(&g, &job, 1);
	bufgen_fill(&g, buf, LEN);
	r = zstd_ratio(buf, LEN);
	printf("buffer_compress_percentage=75: zstd ratio %.3f\n", r);
	CHECK(r > 0.22 && r < 0.30);
	/* every later write stays as compressible, and differs from the one before */
	memcpy(buf2, buf, LEN);
	bufgen_next(&g, buf, LEN);
	CHECK(memcmp(buf, buf2, LEN) != 0);
	r = zstd_ratio(buf, LEN);
	CHECK(r > 0.22 && r < 0.30);

	job_set(&job, "buffer_compress_percentage", "50");
	job_set(&job, "buffer_pattern", "0xdeadbeef");
	CHECK(job.pattern_len == 4 && job.pattern[0] == 0xde && job.pattern[3] == 0xef);
	bufgen_init(&g, &job, 1);
	bufgen_fill(&g, buf, LEN);
	CHECK(buf[256] == 0xde && buf[257] == 0xad && buf[260] == 0xde); /* second half of chunk */
	r = zstd_ratio(buf, LEN);
	CHECK(r > 0.47 && r < 0.55);

	/* a pattern alone: every buffer is the pattern */
	job_set(&job, "buffer_compress_percentage", "0");
	job_set(&job, "buffer_pattern", "'ab'");
	bufgen_init(&g, &job, 1);
	bufgen_fill(&g, buf, 4096);
	bufgen_next(&g, buf, 4096);
	CHECK(buf[0] == 'a' && buf[1] == 'b' && buf[4094] == 'a' && buf[4095] == 'b');
	engine_job_release(&job);

	/* dedupe_percentage=40: about 40% of the writes repeat an earlier buffer */
	{
		enum { NW = 5000, BS = 4096 };
		uint64_t *h = calloc(NW, sizeof(*h));
		unsigned dups = 0;

		engine_job_init(&job);
		job_set(&job, "dedupe_percentage", "40");
		bufgen_init(&g, &job, 9);
		for (int i = 0; i < NW; i++) {
			uint64_t x = 1469598103934665603ull;

			bufgen_next(&g, buf, BS);
			for (int k = 0; k < BS; k++)
				x = (x ^ buf[k]) * 1099511628211ull;
			h[i] = x;
		}
		qsort(h, NW, sizeof(*h), cmp_u64);
		for (int i = 1; i < NW; i++)
			dups += h[i] == h[i - 1];
		printf("dedupe_percentage=40: %.1f%% duplicate writes\n", 100.0 * dups / NW);
		CHECK(fabs((double)dups / NW - 0.40) < 0.03);
		free(h);
		engine_job_release(&job);
	}
	free(buf);
	free(buf2);
}

/* A short real run in a scratch directory on /dev/shm. */
static int run_job(struct workload_run *run, struct job *job, char *dir)
{
	char msg[512];
	int ret;

	job_set(job, "directory", dir);
	ret = engine_job_validate(job, msg, sizeof(msg));
	if (ret == 0)
		ret = workload_run(run, job, -1, msg, sizeof(msg));
	if (ret < 0)
		fprintf(stderr, "run: %s\n", msg);
	for (unsigned i = 0; ret == 0 && i < run->nthreads; i++)
		if (run->threads[i].error) {
			fprintf(stderr, "run: %s\n", run->threads[i].errmsg);
			ret = -1;
		}
	return ret;
}

static void test_runs(char *dir)
{
	static const char *const engines[] = { "psync", "libaio", "io_uring" };
	struct workload_run run;
	struct job job;

	/* fsync every 8 writes, 3 loops over 256 KiB of 4 KiB writes: 192 writes, 23 fsyncs, one
	 * after every 8th issued write that another I/O follows, none after the job's last (fio
	 * >= 3.38; fio 3.33 measured 25: it synced twice at each loop boundary, resetting its
	 * last_was_sync between loops) */
	for (int th = 0; th < 2; th++) {
		engine_job_init(&job);
		job_set(&job, "name", "fs");
		job_set(&job, "rw", "write");
		job_set(&job, "size", "256k");
		job_set(&job, "loops", "3");
		job_set(&job, "fsync", "8");
		job_set(&job, "thread", th ? "1" : "0");
		CHECK(run_job(&run, &job, dir) == 0);
		CHECK(run.threads[0].dir[IO_DDIR_WRITE].ios == 192);
		CHECK(run.threads[0].dir[IO_DDIR_WRITE].bytes == 3 * 256 * 1024);
		CHECK(run.threads[0].sync_lat.n == 23);
		CHECK(run.threads[0].fsyncs == 23);
		workload_release(&run);
		engine_job_release(&job);
	}
	engine_job_init(&job);
	job_set(&job, "name", "fds");
	job_set(&job, "rw", "randwrite");
	job_set(&job, "size", "256k");
	job_set(&job, "fdatasync", "16");
	job_set(&job, "numjobs", "2");
	CHECK(run_job(&run, &job, dir) == 0);
	for (unsigned i = 0; i < 2; i++) {
		/* after writes 16, 32 and 48, not after the last; fio's "sync" total_ios counts
		 * fsyncs only (0 here), its lat_ns every sync */
		CHECK(run.threads[i].dir[IO_DDIR_WRITE].ios == 64);
		CHECK(run.threads[i].sync_lat.n == 3);
		CHECK(run.threads[i].fsyncs == 0);
	}
	workload_release(&run);
	engine_job_release(&job);

	/* every engine, randrw with bssplit and iodepth 8, as threads and as processes */
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		engine_job_init(&job);
		job_set(&job, "name", "eng");
		job_set(&job, "ioengine", engines[e]);
		job_set(&job, "iodepth", "8");
		job_set(&job, "rw", "randrw");
		job_set(&job, "bssplit", "4k/50:16k/50");
		job_set(&job, "size", "1M");
		job_set(&job, "numjobs", "2");
		job_set(&job, "thread", e == 1 ? "1" : "0");
		CHECK(run_job(&run, &job, dir) == 0);
		for (unsigned i = 0; i < 2; i++) {
			const struct workload_thread *t = &run.threads[i];
			uint64_t bytes = t->dir[0].bytes + t->dir[1].bytes;

			CHECK(t->dir[0].ios > 0 && t->dir[1].ios > 0);
			/* one pass: 1 MiB, the last I/O may go past it */
			CHECK(bytes >= (1 << 20) && bytes < (1 << 20) + 16384);
			if (e)
				CHECK(t->dir[0].slat.n == t->dir[0].ios);
		}
		workload_release(&run);
		engine_job_release(&job);
	}
}

/* fio's get_io_u() issues a sync after every N-th ISSUED write (fsync=N, fdatasync=N), when the
 * next I/O unit is wanted, whatever the engine and depth: 256 4k random writes give 255 syncs
 * with N=1 and 63 with N=4 at every iodepth (fio 3.33 at depth 1 with psync, libaio and
 * io_uring: measured the same). Counting writes as they complete synced once per queue's worth
 * at depth 64 (4 for 256 writes). end_fsync adds an fsync that fio's statistics leave out. */
static void test_sync_every(char *dir)
{
	static const char *const engines[] = { "psync", "libaio", "io_uring" };
	static const char *const depths[] = { "1", "4", "64" };
	static const struct {
		const char *opt, *every;
		uint64_t syncs, fsyncs;
	} cases[] = { { "fsync", "1", 255, 255 },
		      { "fsync", "4", 63, 63 },
		      { "fdatasync", "1", 255, 0 } };
	struct workload_run run;
	struct job job;

	for (size_t e = 0; e < 3; e++)
		for (size_t d = 0; d < 3; d++)
			for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
				const struct workload_thread *t;

				engine_job_init(&job);
				job_set(&job, "name", "every");
				job_set(&job, "ioengine", engines[e]);
				job_set(&job, "iodepth", depths[d]);
				job_set(&job, "rw", "randwrite");
				job_set(&job, "size", "1M");
				job_set(&job, cases[c].opt, cases[c].every);
				job_set(&job, "thread", "1");
				CHECK(run_job(&run, &job, dir) == 0);
				t = &run.threads[0];
				CHECK(t->dir[IO_DDIR_WRITE].ios == 256);
				CHECK(t->sync_lat.n == cases[c].syncs);
				CHECK(t->fsyncs == cases[c].fsyncs);
				if (t->sync_lat.n != cases[c].syncs)
					fprintf(stderr, "%s iodepth=%s %s=%s: %" PRIu64 " syncs\n",
						engines[e], depths[d], cases[c].opt, cases[c].every,
						t->sync_lat.n);
				workload_release(&run);
				engine_job_release(&job);
			}
	engine_job_init(&job);
	job_set(&job, "name", "end");
	job_set(&job, "rw", "randwrite");
	job_set(&job, "size", "256k");
	job_set(&job, "fsync", "8");
	job_set(&job, "end_fsync", "1");
	CHECK(run_job(&run, &job, dir) == 0);
	CHECK(run.threads[0].sync_lat.n == 7 && run.threads[0].fsyncs == 7);
	workload_release(&run);
	engine_job_release(&job);
	/* rw mix: a sync only right after the N-th write (fio >= 3.38; 3.33 also synced again after
	 * a read at the same count) */
	engine_job_init(&job);
	job_set(&job, "name", "mix");
	job_set(&job, "rw", "randrw");
	job_set(&job, "size", "1M");
	job_set(&job, "fsync", "2");
	CHECK(run_job(&run, &job, dir) == 0);
	{
		uint64_t w = run.threads[0].dir[IO_DDIR_WRITE].ios, n = run.threads[0].sync_lat.n;

		CHECK(w > 0 && (n == w / 2 || n + 1 == w / 2));
	}
	workload_release(&run);
	engine_job_release(&job);
}

static uint64_t sum7(const uint64_t v[WORKLOAD_NBATCH])
{
	uint64_t s = 0;

	for (int i = 0; i < WORKLOAD_NBATCH; i++)
		s += v[i];
	return s;
}

/* fio's submission and completion batching, counted by the runner per call: by default one I/O
 * per submit call and one per reap (fio's iodepth_batch_submit=1, complete_min=1 and max
 * defaulting to min); whole batches with iodepth_batch_submit=8, complete_min=8; depth 1 when
 * polling (both complete bounds 0, where fio still waits for one after every I/O). */
static void test_batching(char *dir)
{
	static const char *const engines[] = { "libaio", "io_uring" };
	struct workload_run run;
	struct job job;

	for (size_t e = 0; e < 2; e++) {
		const struct workload_thread *t;

		/* defaults: 256 reads, 256 submit calls of one, 256 reaps of one */
		engine_job_init(&job);
		job_set(&job, "name", "batch");
		job_set(&job, "ioengine", engines[e]);
		job_set(&job, "iodepth", "8");
		job_set(&job, "rw", "randread");
		job_set(&job, "size", "1M");
		job_set(&job, "thread", "1");
		CHECK(run_job(&run, &job, dir) == 0);
		t = &run.threads[0];
		printf("%s defaults: %lu reads, %lu submit calls, %lu reaps\n", engines[e],
		       (unsigned long)t->dir[0].ios, (unsigned long)sum7(t->submit_calls),
		       (unsigned long)sum7(t->complete_calls));
		CHECK(t->dir[0].ios == 256);
		CHECK(sum7(t->submit_calls) == 256 && t->submit_calls[1] == 256);
		CHECK(sum7(t->complete_calls) == 256 && t->complete_calls[1] == 256);
		CHECK(sum7(t->depth_ios) == 256);
		workload_release(&run);

		/* whole batches of 8 each way: 32 submit calls of 8, 32 reaps of 8 */
		job_set(&job, "iodepth_batch_submit", "8");
		job_set(&job, "iodepth_batch_complete_min", "8");
		CHECK(run_job(&run, &job, dir) == 0);
		t = &run.threads[0];
		printf("%s batch 8/8: %lu reads, %lu submit calls, %lu reaps\n", engines[e],
		       (unsigned long)t->dir[0].ios, (unsigned long)sum7(t->submit_calls),
		       (unsigned long)sum7(t->complete_calls));
		CHECK(sum7(t->submit_calls) == 32 && t->submit_calls[2] == 32);
		CHECK(sum7(t->complete_calls) == 32 && t->complete_calls[2] == 32);
		CHECK(t->depth_ios[3] == 256); /* every batch went in at depth 8 */
		workload_release(&run);

		/* polling: every I/O is reaped before the next, so the depth is 1 */
		job_set(&job, "iodepth_batch_submit", "1");
		job_set(&job, "iodepth_batch_complete_min", "0");
		job_set(&job, "iodepth_batch_complete_max", "0");
		CHECK(run_job(&run, &job, dir) == 0);
		t = &run.threads[0];
		CHECK(t->depth_ios[0] == 256 && sum7(t->submit_calls) == 256);
		workload_release(&run);
		engine_job_release(&job);
	}
	/* a sync engine: one call of one each way, at depth 1 (fio counts psync so) */
	engine_job_init(&job);
	job_set(&job, "name", "batch");
	job_set(&job, "rw", "randread");
	job_set(&job, "size", "256k");
	job_set(&job, "thread", "1");
	CHECK(run_job(&run, &job, dir) == 0);
	CHECK(run.threads[0].submit_calls[1] == 64 && run.threads[0].complete_calls[1] == 64 &&
	      run.threads[0].depth_ios[0] == 64);
	workload_release(&run);
	engine_job_release(&job);
}

/* overwrite=1 lays out a write job's file (every block written before the job), as fio does;
 * without it a random write job's file stays sparse where the job did not write. */
static void test_overwrite(char *dir)
{
	struct workload_run run;
	char path[512];
	struct stat st;
	struct job job;

	for (int ow = 0; ow < 2; ow++) {
		engine_job_init(&job);
		job_set(&job, "name", ow ? "ow1" : "ow0");
		job_set(&job, "rw", "randwrite");
		job_set(&job, "size", "1M");
		job_set(&job, "overwrite", ow ? "1" : "0");
		CHECK(run_job(&run, &job, dir) == 0);
		snprintf(path, sizeof(path), "%s/%s.0.0", dir, ow ? "ow1" : "ow0");
		CHECK(stat(path, &st) == 0);
		printf("overwrite=%d: %lld of 1048576 bytes allocated\n", ow,
		       (long long)st.st_blocks * 512);
		/* 256 random writes with repetition touch ~63% of the 256 blocks */
		if (ow)
			CHECK(st.st_blocks * 512 >= 1048576);
		else
			CHECK(st.st_blocks * 512 < 1048576 * 8 / 10);
		workload_release(&run);
		engine_job_release(&job);
	}
}

/* filename with directory: one file, directory/filename (missing directories made, as fio),
 * shared by every worker, laid out once; no per-worker files. */
static void test_shared_file(char *dir)
{
	struct workload_run run;
	char path[512];
	struct stat st;
	struct job job;

	engine_job_init(&job);
	job_set(&job, "name", "sh");
	job_set(&job, "filename", "sub/f");
	job_set(&job, "rw", "randread");
	job_set(&job, "size", "256k");
	job_set(&job, "numjobs", "4");
	CHECK(run_job(&run, &job, dir) == 0);
	for (unsigned i = 0; i < 4; i++)
		CHECK(run.threads[i].dir[0].ios == 64);
	snprintf(path, sizeof(path), "%s/sub/f", dir);
	CHECK(stat(path, &st) == 0 && st.st_size == 262144);
	snprintf(path, sizeof(path), "%s/sh.0.0", dir);
	CHECK(stat(path, &st) < 0);
	workload_release(&run);
	engine_job_release(&job);
}

int main(void)
{
	char dir[] = "/dev/shm/zbench-test-XXXXXX";
	char cmd[128];

	test_rate_sched();
	test_bssplit_rwmix();
	test_buffers();
	if (mkdtemp(dir)) {
		test_runs(dir);
		test_sync_every(dir);
		test_batching(dir);
		test_overwrite(dir);
		test_shared_file(dir);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	} else {
		CHECK(!"mkdtemp /dev/shm");
	}
	return check_summary("engine_workload");
}
