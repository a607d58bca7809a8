/* The job runner: lays out files, runs `numjobs` threads of one job through an I/O engine,
 * samples progress once a second, and keeps the results for output_json.c. In three files:
 * workload_gen.c (the random streams, offsets and mix of each I/O), workload_worker.c (one
 * worker: layout, then the I/O loop) and workload.c (setup, the workers started, the sampler).
 *
 * Lifecycle: workload_run() on a zeroed struct workload_run, read the results, then
 * workload_release(). */
#ifndef ZB_ENGINE_WORKLOAD_H
#define ZB_ENGINE_WORKLOAD_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "ioengine.h"
#include "options.h"
#include "stats.h"

#define NSEC_PER_SEC 1000000000ull

/* CLOCK_MONOTONIC in nanoseconds: the clock of every latency and deadline of the engine. */
uint64_t workload_now_ns(void);
/* `ns` nanoseconds (a duration, or a CLOCK_MONOTONIC time) as a struct timespec. */
void workload_timespec(struct timespec *ts, uint64_t ns);

/* xoshiro256**, seeded through splitmix64: fast, good, and the same everywhere. */
struct engine_rand {
	uint64_t s[4];
};
void engine_rand_seed(struct engine_rand *r, uint64_t seed);
uint64_t engine_rand_next(struct engine_rand *r);
/* Uniform in [0, n) (n > 0). */
uint64_t engine_rand_below(struct engine_rand *r, uint64_t n);

/* random_distribution (workload_dist.c): block indices in [0, n) drawn as fio draws them, for
 * zipf, pareto and normal; ENGINE_DIST_RANDOM is uniform. Set up once per thread (zipf sums
 * zeta(n) at init: up to fio's cap of 10M terms, in constant time), then each draw is O(1). */
struct workload_dist {
	int kind;     /* enum engine_dist */
	uint64_t n;   /* blocks */
	uint64_t off; /* rotation of every draw: the center, or the seed's */
	double theta, alpha, eta, zetan, zeta2; /* zipf */
	double pareto_pow;			/* pareto: log(h) / log(1 - h) */
	uint64_t jitter;			/* normal: the deviation's width in blocks */
};
/* From the job's dist, dist_value and dist_center; `r` gives the random rotation. */
void workload_dist_init(struct workload_dist *d, const struct job *job, uint64_t n,
			struct engine_rand *r);
/* The next block index, from the stream `r`. */
uint64_t workload_dist_next(const struct workload_dist *d, struct engine_rand *r);
/* sum_{i=1}^{n} i^-theta (theta != 1), exact to double rounding. */
double workload_zeta(uint64_t n, double theta);

/* The offsets one thread visits: sequential from `start`, or random offsets aligned to the
 * smallest block size in [start, start + size - len]: uniform, or as random_distribution says
 * (then over the starts that fit the largest block). The same job and thread index give the
 * same sequence. */
struct workload_offsets {
	uint64_t start, size, bs, align, pos;
	bool random;
	bool wrap; /* sequential: start over at the end (time_based) instead of stopping */
	struct engine_rand rand;
	struct workload_dist dist; /* kind ENGINE_DIST_RANDOM: uniform */
};
void workload_offsets_init(struct workload_offsets *o, const struct job *job, uint64_t size,
			   unsigned thread_index);
/* The next offset of an I/O of `len` bytes; true, or false when a sequential pass is done (and
 * it rewinds). */
bool workload_offsets_next_len(struct workload_offsets *o, uint64_t len, uint64_t *offset);
/* The same with len = bs. */
bool workload_offsets_next(struct workload_offsets *o, uint64_t *offset);

/* Picks each I/O's direction (rwmixread) and size (bssplit) from its own random stream. */
struct workload_mix {
	const struct job *job;
	struct engine_rand rand;
	unsigned cum[ENGINE_BSSPLIT_MAX]; /* bssplit: cumulative percents */
};
void workload_mix_init(struct workload_mix *m, const struct job *job, unsigned thread_index);
enum io_ddir workload_mix_ddir(struct workload_mix *m);
uint64_t workload_mix_bs(struct workload_mix *m);

/* A thread's independent random streams, one per use (the values are part of the results'
 * reproducibility: changing them changes every offset and buffer). */
enum workload_stream {
	WORKLOAD_STREAM_OFFSETS,
	WORKLOAD_STREAM_MIX,
	WORKLOAD_STREAM_BUFFER,
	WORKLOAD_STREAM_RATE,
};

/* The seed a thread's generators derive from (randseed, or the clock if !randrepeat), for one
 * of its streams (enum workload_stream). */
uint64_t workload_thread_seed(const struct job *job, unsigned thread_index, unsigned stream);

/* Results of one direction (read, write, trim) of one thread, or merged. */
struct workload_dir {
	uint64_t ios, bytes, short_ios, drop_ios;
	struct stats_lat slat, clat, lat;
	struct stats_hist clat_hist;
	/* rate_iops: latency from the scheduled arrival to completion (open loop) */
	struct stats_lat olat;
	struct stats_hist olat_hist;
	struct stats_series bw_kib; /* per-second bandwidth samples, KiB/s */
	struct stats_series iops;   /* per-second IOPS samples */
};

/* Counters the sampler reads while the thread runs (one writer, relaxed atomics). On a cache
 * line of its own, away from the fields the sampler writes. */
struct workload_live {
	uint64_t ios[2], bytes[2], lat_sum_ns[2];
	uint64_t errors;
	uint64_t layout_bytes;
} __attribute__((aligned(64)));

/* Buckets of the batching statistics of struct workload_thread. */
#define WORKLOAD_NBATCH 7
/* The bucket of a call that moved `nr` I/Os (fio's iodepth_submit/complete keys "0", "4", "8",
 * "16", "32", "64", ">=64"), and of an I/O issued at depth `depth` (iodepth_level keys "1",
 * "2", "4", "8", "16", "32", ">=64"). */
unsigned workload_batch_bucket(unsigned nr);
unsigned workload_depth_bucket(unsigned depth);

struct workload_thread {
	struct workload_run *run;
	unsigned index;
	char path[PATH_MAX];
	uint64_t size; /* bytes of the region this thread works on */
	pthread_t tid; /* thread=1 */
	pid_t pid;     /* thread=0: the worker process */
	bool started;

	int error;	  /* errno of the first failure, as fio's "error" */
	char errmsg[512]; /* what failed */
	uint64_t runtime_ns;
	uint64_t cpu_runtime_ns; /* summed over merged threads: usr_cpu/sys_cpu divide by it */
	struct workload_dir dir[IO_DDIR_COUNT];
	/* Every fsync and fdatasync of fsync=N/fdatasync=N, timed (fio's sync_stat, the JSON's
	 * "sync" lat_ns); end_fsync is not counted, as in fio. */
	struct stats_lat sync_lat;
	uint64_t fsyncs; /* of those, the fsyncs: fio's "sync" total_ios (fdatasyncs left out) */
	/* fio's batching statistics over the counted phase: submit (commit) and complete
	 * (getevents) calls by how many I/Os each carried, bucketed as fio's iodepth_submit and
	 * iodepth_complete (0, 1-4, 5-8, 9-16, 17-32, 33-64, more), and I/Os by the depth they
	 * were issued at, as fio's iodepth_level (1, 2-3, 4-7, ..., >= 64; weighted by the I/Os of
	 * each submit call). A sync engine counts one call of one I/O each way, as in fio. */
	uint64_t submit_calls[WORKLOAD_NBATCH], complete_calls[WORKLOAD_NBATCH];
	uint64_t depth_ios[WORKLOAD_NBATCH];
	double usr_sec, sys_sec;
	uint64_t ctx, majf, minf;

	uint64_t *issue_log; /* job->issue_log entries (shared memory), or NULL */
	uint64_t issue_n;

	struct workload_live live;
	bool finished; /* under run->sync->lock */
	/* The sampler's previous snapshot of `live`. */
	uint64_t prev_ios[2], prev_bytes[2], prev_lat[2];
};

/* Start/stop handshake between the sampler and the workers: shared memory, process-shared
 * (robust) mutex and condition variables, so workers can be threads or processes. */
struct workload_sync {
	pthread_mutex_t lock;
	pthread_cond_t main_cond; /* workers -> main: ready or finished */
	pthread_cond_t go_cond;	  /* main -> workers: layout is done everywhere, start */
	unsigned ready, nfinished;
	bool go;
	/* Set (atomically) by the sampler when a worker process died: the others stop at their
	 * next I/O and report what they did; any still running WORKLOAD_ABORT_GRACE_S later are
	 * killed. */
	bool abort;
};

#define WORKLOAD_ABORT_GRACE_S 5

/* One per-second sample of the whole job (all threads), zbench's extra output. */
struct workload_sample {
	double t; /* seconds since counting started (after layout and ramp_time) */
	double iops[2], bw_kib[2], lat_mean_ns[2];
};

struct workload_run {
	const struct job *job;
	const struct ioengine_ops *ops;
	unsigned nthreads;
	struct workload_thread *threads; /* shared memory (thread=0 workers write their results) */
	size_t threads_len;
	uint64_t *issue_logs;
	size_t issue_logs_len;
	int status_fd; /* -1: none */

	time_t timestamp;
	uint64_t timestamp_ms;
	struct workload_sample *samples;
	unsigned nsamples, samples_cap;

	struct workload_sync *sync; /* shared memory */
	bool sync_ready;
};

/* Run the job. Workers are processes (fio's default, thread=0; results come back through shared
 * memory) or threads of this process (thread=1). 0 when it ran (a thread may still have failed: see
 * threads[].error), -1 with msg when it could not start. `status_fd` >= 0 gets one JSON line of
 * counters a second. */
int workload_run(struct workload_run *run, const struct job *job, int status_fd, char *msg,
		 size_t len);
void workload_release(struct workload_run *run);

/* Merge thread results (group_reporting). `dst` must be zeroed. */
void workload_thread_merge(struct workload_thread *dst, const struct workload_thread *src);

/* --- between the runner's own files (workload.c and workload_worker.c) --- */

/* A worker's whole life (pthread start routine, or called in the forked process): lay out its
 * file, report ready, wait for go, run its I/O, report finished. `arg` is its struct
 * workload_thread; its results and errors stay there. */
void *workload_worker_main(void *arg);
/* Lock the handshake's mutex; a worker process that died holding it leaves it consistent enough
 * (the protected state is a few counters the sampler re-derives from waitpid). */
void workload_sync_lock(struct workload_sync *s);
/* Wait on `c` with the lock held, until `abs` (CLOCK_MONOTONIC; NULL: no deadline). */
void workload_sync_wait(struct workload_sync *s, pthread_cond_t *c, const struct timespec *abs);

#endif
