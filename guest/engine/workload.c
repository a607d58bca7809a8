/* The job runner's calling process: it checks the target, sets up the shared memory and the
 * start/stop handshake, starts one worker per numjobs (workload_worker.c), and is the sampler
 * while they run: it writes the status line to --status-fd every second (during layout too, so
 * the host's heartbeat never stops) and records the per-second samples. See workload.h for the
 * contracts. */
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

uint64_t workload_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

void workload_timespec(struct timespec *ts, uint64_t ns)
{
	ts->tv_sec = (time_t)(ns / NSEC_PER_SEC);
	ts->tv_nsec = (long)(ns % NSEC_PER_SEC);
}

/* --- the sampler (calling thread) ---------------------------------------------------------- */

static void status_write(struct workload_run *run, double t, const char *phase)
{
	uint64_t ios[2] = { 0, 0 }, bytes[2] = { 0, 0 }, errors = 0, layout = 0;
	char line[512];
	int n;

	if (run->status_fd < 0)
		return;
	for (unsigned i = 0; i < run->nthreads; i++) {
		struct workload_live *l = &run->threads[i].live;

		for (int d = 0; d < 2; d++) {
			ios[d] += __atomic_load_n(&l->ios[d], __ATOMIC_RELAXED);
			bytes[d] += __atomic_load_n(&l->bytes[d], __ATOMIC_RELAXED);
		}
		errors += __atomic_load_n(&l->errors, __ATOMIC_RELAXED);
		layout += __atomic_load_n(&l->layout_bytes, __ATOMIC_RELAXED);
	}
	n = snprintf(line, sizeof(line),
		     "{\"t\":%.3f,\"phase\":\"%s\",\"read_ios\":%" PRIu64 ",\"write_ios\":%" PRIu64
		     ",\"read_bytes\":%" PRIu64 ",\"write_bytes\":%" PRIu64 ",\"errors\":%" PRIu64
		     ",\"layout_bytes\":%" PRIu64 "}\n",
		     t, phase, ios[0], ios[1], bytes[0], bytes[1], errors, layout);
	/* A reader that went away must not stop the benchmark: stop writing instead. */
	if (write(run->status_fd, line, (size_t)n) != n)
		run->status_fd = -1;
}

/* Take a sample of the interval since the previous snapshot (record = false: snapshot only). */
static void sample_take(struct workload_run *run, double t, double interval, bool record)
{
	struct workload_sample s = { .t = t };
	uint64_t lat_sum[2] = { 0, 0 }, ios_sum[2] = { 0, 0 };

	for (unsigned i = 0; i < run->nthreads; i++) {
		struct workload_thread *th = &run->threads[i];
		bool finished;

		workload_sync_lock(run->sync);
		finished = th->finished;
		pthread_mutex_unlock(&run->sync->lock);
		for (int d = 0; d < 2; d++) {
			uint64_t ios = __atomic_load_n(&th->live.ios[d], __ATOMIC_RELAXED);
			uint64_t bytes = __atomic_load_n(&th->live.bytes[d], __ATOMIC_RELAXED);
			uint64_t lat = __atomic_load_n(&th->live.lat_sum_ns[d], __ATOMIC_RELAXED);
			uint64_t dios = ios - th->prev_ios[d], dbytes = bytes - th->prev_bytes[d];

			s.iops[d] += (double)dios / interval;
			s.bw_kib[d] += (double)dbytes / 1024.0 / interval;
			lat_sum[d] += lat - th->prev_lat[d];
			ios_sum[d] += dios;
			/* A thread that finished inside the interval ran only part of it. */
			if (record && !finished &&
			    (d == 0 ? engine_rw_reads(run->job->rw)
				    : engine_rw_writes(run->job->rw))) {
				stats_series_push(&th->dir[d].iops, (double)dios / interval);
				stats_series_push(&th->dir[d].bw_kib,
						  (double)dbytes / 1024.0 / interval);
			}
			th->prev_ios[d] = ios;
			th->prev_bytes[d] = bytes;
			th->prev_lat[d] = lat;
		}
	}
	if (!record)
		return;
	for (int d = 0; d < 2; d++)
		s.lat_mean_ns[d] = ios_sum[d] ? (double)lat_sum[d] / (double)ios_sum[d] : 0.0;
	if (run->nsamples == run->samples_cap) {
		unsigned cap = run->samples_cap ? 2 * run->samples_cap : 64;
		struct workload_sample *ns = realloc(run->samples, cap * sizeof(*ns));

		if (!ns)
			return;
		run->samples = ns;
		run->samples_cap = cap;
	}
	run->samples[run->nsamples++] = s;
}

/* thread=0: a worker process that exited without saying it finished (killed, crashed) counts
 * as finished with an error, so the run ends instead of waiting for it. Called with the lock. */
static void reap_dead_workers(struct workload_run *run)
{
	int status;
	pid_t pid;

	if (run->job->thread)
		return;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (unsigned i = 0; i < run->nthreads; i++) {
			struct workload_thread *t = &run->threads[i];

			if (t->pid != pid)
				continue;
			t->pid = 0;
			if (t->finished)
				break;
			t->error = t->error ? t->error : EIO;
			if (WIFSIGNALED(status))
				snprintf(
				    t->errmsg, sizeof(t->errmsg),
				    "job '%s' worker %u (pid %d) was killed by signal %d (%s); "
				    "stopped the other workers",
				    run->job->name, i, (int)pid, WTERMSIG(status),
				    strsignal(WTERMSIG(status)));
			else
				snprintf(
				    t->errmsg, sizeof(t->errmsg),
				    "job '%s' worker %u (pid %d) exited with status %d without "
				    "finishing; stopped the other workers",
				    run->job->name, i, (int)pid, WEXITSTATUS(status));
			__atomic_store_n(&run->sync->abort, true, __ATOMIC_RELAXED);
			t->finished = true;
			run->sync->nfinished++;
			if (!run->sync->go)
				run->sync->ready++;
			break;
		}
	}
}

static void sampler_loop(struct workload_run *run)
{
	const struct job *job = run->job;
	struct workload_sync *sync = run->sync;
	uint64_t t0 = workload_now_ns(), next_status = t0 + NSEC_PER_SEC, count_start = 0,
		 next_sample = 0;
	uint64_t abort_at = 0;
	bool running = false, snapped = false;

	workload_sync_lock(sync);
	while (sync->nfinished < run->nthreads) {
		uint64_t now = workload_now_ns(), deadline = next_status;
		struct timespec ts;

		reap_dead_workers(run);
		if (sync->abort && !abort_at)
			abort_at = now;
		if (abort_at && now - abort_at > WORKLOAD_ABORT_GRACE_S * NSEC_PER_SEC) {
			/* a worker that does not wind down (stuck in I/O) is killed; the next
			 * reap counts it */
			for (unsigned i = 0; i < run->nthreads; i++)
				if (run->threads[i].pid > 0 && !run->threads[i].finished)
					kill(run->threads[i].pid, SIGKILL);
		}
		if (!running && sync->ready == run->nthreads) {
			/* Every thread has laid out its file: start the timed phase. */
			running = true;
			sync->go = true;
			pthread_cond_broadcast(&sync->go_cond);
			count_start = now + job->ramp_time_us * 1000;
			next_sample = count_start;
		}
		if (running && now >= next_sample) {
			pthread_mutex_unlock(&sync->lock);
			if (!snapped) {
				sample_take(run, 0, 1.0, false);
				snapped = true;
			} else {
				double t = (double)(next_sample - count_start) / 1e9;

				sample_take(run, t, 1.0, true);
			}
			workload_sync_lock(sync);
			next_sample += NSEC_PER_SEC;
		}
		if (now >= next_status) {
			pthread_mutex_unlock(&sync->lock);
			/* "ramp" until the timed window opens: the host's window witness starts
			 * after the last untimed line (builder/matrix/window.c) */
			status_write(run, (double)(now - t0) / 1e9,
				     !running		 ? "layout"
				     : now < count_start ? "ramp"
							 : "run");
			workload_sync_lock(sync);
			next_status += NSEC_PER_SEC;
		}
		if (running && next_sample < deadline)
			deadline = next_sample;
		if (sync->nfinished < run->nthreads && (running || sync->ready < run->nthreads)) {
			workload_timespec(&ts, deadline);
			workload_sync_wait(sync, &sync->main_cond, &ts);
		}
	}
	pthread_mutex_unlock(&sync->lock);
	status_write(run, (double)(workload_now_ns() - t0) / 1e9, "done");
}

/* --- setup ------------------------------------------------------------------------------- */

/* Size of a file or block device, or -errno. */
static int64_t file_size(const char *path)
{
	struct stat st;
	uint64_t bytes;
	int fd;

	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISBLK(st.st_mode))
		return (int64_t)st.st_size;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, BLKGETSIZE64, &bytes) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	return (int64_t)bytes;
}

static bool is_block_device(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISBLK(st.st_mode);
}

/* Zeroed memory that forked workers share with this process; NULL on failure. */
static void *shared_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A worker process (thread=0): run, then leave without atexit handlers or stdio flushes (they
 * belong to the parent). It dies with the parent, so a killed run leaves no I/O behind.
 *
 * Each worker is the leader of a session of its own, as each of fio's job processes is (fio's
 * thread_main() calls setsid()). Where the kernel groups tasks by session for scheduling
 * (CONFIG_SCHED_AUTOGROUP, on in Debian's kernels and this host's), that gives every worker a
 * CPU share of its own, as fio's get: measured on this 2-core host under load, 4 workers in one
 * session got about half of what fio's 4 did (docs/engine.md, "Cost per I/O against fio").
 * Signals still reach them: the parent's death kills them (PR_SET_PDEATHSIG). */
static pid_t workload_parent;

static void worker_process(struct workload_thread *t)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != workload_parent) /* the parent died before prctl */
		_exit(1);
	setsid();
	workload_worker_main(t);
	_exit(0);
}

/* The job's target, before anything is allocated: its I/O engine exists, and a file or device
 * named by `filename` has a size to work with. *fsize: its size, or -1 (no filename), or -errno
 * (it could not be read, and `size` says how much to work on). */
static int run_check_target(struct workload_run *run, int64_t *fsize, char *msg, size_t len)
{
	const struct job *job = run->job;
	char path[PATH_MAX];
	int shared = engine_job_shared_path(job, path, sizeof(path));

	run->ops = ioengine_find(job->ioengine);
	if (!run->ops) {
		snprintf(msg, len, "option 'ioengine': unknown I/O engine \"%s\"", job->ioengine);
		return -1;
	}
	if (shared < 0) {
		snprintf(msg, len, "options 'directory' and 'filename': the path is too long");
		return -1;
	}
	if (!shared)
		return 0;
	*fsize = file_size(path);
	if (!job->size && *fsize < 0) {
		snprintf(msg, len, "'%s': %s (and no size given)", path, strerror((int)-*fsize));
		return -1;
	}
	if (is_block_device(path) && job->size && job->offset + job->size > (uint64_t)*fsize) {
		snprintf(msg, len,
			 "'%s': offset + size (%" PRIu64 ") is beyond the device (%" PRId64
			 " bytes)",
			 path, job->offset + job->size, *fsize);
		return -1;
	}
	return 0;
}

/* The shared memory: the threads' results, the handshake, the issue logs. */
static int run_alloc(struct workload_run *run, char *msg, size_t len)
{
	const struct job *job = run->job;

	run->nthreads = (unsigned)job->numjobs;
	/* Shared memory, so worker processes (thread=0) hand back their results in place. */
	run->threads_len = run->nthreads * sizeof(*run->threads);
	run->threads = shared_alloc(run->threads_len);
	if (!run->threads) {
		snprintf(msg, len, "out of memory for %u threads", run->nthreads);
		return -1;
	}
	run->sync = shared_alloc(sizeof(*run->sync));
	if (!run->sync) {
		snprintf(msg, len, "out of memory");
		return -1;
	}
	if (job->issue_log) {
		run->issue_logs_len = (size_t)run->nthreads * job->issue_log * sizeof(uint64_t);
		run->issue_logs = shared_alloc(run->issue_logs_len);
		if (!run->issue_logs) {
			snprintf(msg, len, "out of memory for the issue log");
			return -1;
		}
	}
	return 0;
}

/* Each thread's file (per-thread <name>.<n>.0, or the shared [directory/]filename) and region; the
 * region must hold the largest block. `fsize` as from run_check_target(). */
static int run_threads_init(struct workload_run *run, int64_t fsize, char *msg, size_t len)
{
	const struct job *job = run->job;

	for (unsigned i = 0; i < run->nthreads; i++) {
		struct workload_thread *t = &run->threads[i];

		t->run = run;
		t->index = i;
		if (run->issue_logs)
			t->issue_log = run->issue_logs + (size_t)i * job->issue_log;
		if (engine_job_shared_path(job, t->path, sizeof(t->path)) == 0)
			snprintf(t->path, sizeof(t->path), "%s%s%s.%u.0",
				 job->directory ? job->directory : "", job->directory ? "/" : "",
				 job->name, i);
		t->size = job->size;
		if (!t->size)
			t->size = (uint64_t)fsize > job->offset ? (uint64_t)fsize - job->offset : 0;
		if (t->size < engine_job_max_bs(job)) {
			snprintf(msg, len, "'%s': region of %" PRIu64 " bytes is smaller than bs",
				 t->path, t->size);
			return -1;
		}
	}
	return 0;
}

/* The handshake's mutex and condition variables, process-shared (workers may be processes) and
 * robust (one may die holding the lock); main_cond waits on CLOCK_MONOTONIC deadlines. */
static void run_sync_init(struct workload_run *run)
{
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;

	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&run->sync->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	pthread_cond_init(&run->sync->go_cond, &ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&run->sync->main_cond, &ca);
	pthread_condattr_destroy(&ca);
	run->sync_ready = true;
}

/* Workers from `from` on that could not be started count as finished failures (errnum), so the
 * rest can run. */
static void run_not_started(struct workload_run *run, unsigned from, int errnum)
{
	workload_sync_lock(run->sync);
	for (unsigned j = from; j < run->nthreads; j++) {
		struct workload_thread *u = &run->threads[j];

		u->error = errnum;
		u->pid = 0;
		snprintf(u->errmsg, sizeof(u->errmsg), "worker %u: not started: %s", j,
			 strerror(errnum));
		u->finished = true;
		run->sync->ready++;
		run->sync->nfinished++;
	}
	pthread_mutex_unlock(&run->sync->lock);
}

/* One worker per thread: a thread of this process (thread=1) or a forked process. */
static void run_start_workers(struct workload_run *run)
{
	/* The children must not write out what this process has buffered. */
	fflush(NULL);
	workload_parent = getpid();
	for (unsigned i = 0; i < run->nthreads; i++) {
		struct workload_thread *t = &run->threads[i];
		int ret = 0;

		if (run->job->thread) {
			ret = pthread_create(&t->tid, NULL, workload_worker_main, t);
		} else {
			/* Not `t->pid = fork()`: t is shared memory, and the child's 0 could land
			 * after the parent's pid, so a dead worker would never be recognised. */
			pid_t pid = fork();

			if (pid == 0)
				worker_process(t);
			if (pid < 0)
				ret = errno;
			else
				t->pid = pid;
		}
		if (ret) {
			run_not_started(run, i, ret);
			break;
		}
		t->started = true;
	}
}

static void run_join_workers(struct workload_run *run)
{
	for (unsigned i = 0; i < run->nthreads; i++) {
		struct workload_thread *t = &run->threads[i];

		if (!t->started)
			continue;
		if (run->job->thread)
			pthread_join(t->tid, NULL);
		else if (t->pid > 0)
			waitpid(t->pid, NULL, 0);
	}
}

int workload_run(struct workload_run *run, const struct job *job, int status_fd, char *msg,
		 size_t len)
{
	struct timespec wall;
	int64_t fsize = -1;

	memset(run, 0, sizeof(*run));
	run->job = job;
	run->status_fd = status_fd;
	if (run_check_target(run, &fsize, msg, len) < 0)
		return -1;
	clock_gettime(CLOCK_REALTIME, &wall);
	run->timestamp = wall.tv_sec;
	run->timestamp_ms = (uint64_t)wall.tv_sec * 1000 + (uint64_t)wall.tv_nsec / 1000000;
	if (run_alloc(run, msg, len) < 0 || run_threads_init(run, fsize, msg, len) < 0)
		return -1;
	run_sync_init(run);
	run_start_workers(run);
	sampler_loop(run);
	run_join_workers(run);
	return 0;
}

void workload_release(struct workload_run *run)
{
	if (run->threads) {
		for (unsigned i = 0; i < run->nthreads; i++)
			for (int d = 0; d < IO_DDIR_COUNT; d++) {
				stats_series_release(&run->threads[i].dir[d].bw_kib);
				stats_series_release(&run->threads[i].dir[d].iops);
			}
		munmap(run->threads, run->threads_len);
	}
	if (run->sync_ready) {
		pthread_mutex_destroy(&run->sync->lock);
		pthread_cond_destroy(&run->sync->main_cond);
		pthread_cond_destroy(&run->sync->go_cond);
	}
	if (run->sync)
		munmap(run->sync, sizeof(*run->sync));
	if (run->issue_logs)
		munmap(run->issue_logs, run->issue_logs_len);
	free(run->samples);
	memset(run, 0, sizeof(*run));
}

unsigned workload_batch_bucket(unsigned nr)
{
	if (nr == 0)
		return 0;
	if (nr <= 4)
		return 1;
	if (nr > 64)
		return 6;
	return 32 - (unsigned)__builtin_clz(nr - 1) - 1; /* 5-8: 2, 9-16: 3, 17-32: 4, 33-64: 5 */
}

unsigned workload_depth_bucket(unsigned depth)
{
	unsigned b = 0;

	while (b < WORKLOAD_NBATCH - 1 && depth >= 2u << b)
		b++;
	return b; /* 1: 0, 2-3: 1, 4-7: 2, ..., >= 64: 6 */
}

void workload_thread_merge(struct workload_thread *dst, const struct workload_thread *src)
{
	for (int i = 0; i < WORKLOAD_NBATCH; i++) {
		dst->submit_calls[i] += src->submit_calls[i];
		dst->complete_calls[i] += src->complete_calls[i];
		dst->depth_ios[i] += src->depth_ios[i];
	}
	for (int d = 0; d < IO_DDIR_COUNT; d++) {
		struct workload_dir *a = &dst->dir[d];
		const struct workload_dir *b = &src->dir[d];

		a->ios += b->ios;
		a->bytes += b->bytes;
		a->short_ios += b->short_ios;
		a->drop_ios += b->drop_ios;
		stats_lat_merge(&a->slat, &b->slat);
		stats_lat_merge(&a->clat, &b->clat);
		stats_lat_merge(&a->lat, &b->lat);
		stats_hist_merge(&a->clat_hist, &b->clat_hist);
		stats_lat_merge(&a->olat, &b->olat);
		stats_hist_merge(&a->olat_hist, &b->olat_hist);
	}
	stats_lat_merge(&dst->sync_lat, &src->sync_lat);
	dst->fsyncs += src->fsyncs;
	if (!dst->error && src->error) {
		dst->error = src->error;
		memcpy(dst->errmsg, src->errmsg, sizeof(dst->errmsg));
	}
	if (src->runtime_ns > dst->runtime_ns)
		dst->runtime_ns = src->runtime_ns;
	dst->cpu_runtime_ns += src->cpu_runtime_ns;
	dst->usr_sec += src->usr_sec;
	dst->sys_sec += src->sys_sec;
	dst->ctx += src->ctx;
	dst->majf += src->majf;
	dst->minf += src->minf;
}
