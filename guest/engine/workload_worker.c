/* One worker of the job runner (a thread, or a process with thread=0): it lays out its file,
 * waits for the others, then runs its I/O loop through the I/O engine and keeps its results in
 * its struct workload_thread (shared memory). The calling process's side is workload.c.
 * Contracts in workload.h. */
#include "workload.h"

#include "buffers.h"
#include "rate.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#define LAYOUT_CHUNK (1u << 20)

/* --- files ------------------------------------------------------------------------------ */

static int thread_fail(struct workload_thread *t, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int thread_fail(struct workload_thread *t, int errnum, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	if (t->error) /* keep the first failure, as fio does */
		return -1;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	t->error = errnum ? errnum : EIO;
	snprintf(t->errmsg, sizeof(t->errmsg), "job '%s' thread %u: %s: %s", t->run->job->name,
		 t->index, what, strerror(t->error));
	__atomic_store_n(&t->live.errors, t->live.errors + 1, __ATOMIC_RELAXED);
	return -1;
}

/* Create the missing directories above `path`, as fio does for a filename inside them. 0 or -1
 * with errno. */
static int make_parents(const char *path)
{
	char dir[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(dir))
		return errno = ENAMETOOLONG, -1;
	memcpy(dir, path, n + 1);
	for (char *p = dir + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

/* Make the thread's file at least offset + size bytes. A job that reads, or writes with
 * overwrite=1, gets real (random) data written, as fio lays out files; any other write-only job
 * only needs the file to exist and be sized. Devices and big-enough files are left alone. */
static int thread_layout(struct workload_thread *t)
{
	const struct job *job = t->run->job;
	uint64_t need = job->offset + t->size, done;
	struct bufgen g;
	struct stat st;
	void *buf;
	int fd;

	if (stat(t->path, &st) == 0 && (!S_ISREG(st.st_mode) || (uint64_t)st.st_size >= need))
		return 0;
	if (job->filename && make_parents(t->path) < 0)
		return thread_fail(t, errno, "creating the directories of '%s'", t->path);
	fd = open(t->path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return thread_fail(t, errno, "creating '%s'", t->path);
	if (!engine_rw_reads(job->rw) && !job->overwrite) {
		if (ftruncate(fd, (off_t)need) < 0) {
			thread_fail(t, errno, "sizing '%s'", t->path);
			close(fd);
			return -1;
		}
		close(fd);
		return 0;
	}
	buf = malloc(LAYOUT_CHUNK);
	if (!buf) {
		close(fd);
		return thread_fail(t, ENOMEM, "layout buffer");
	}
	bufgen_init(&g, job, workload_thread_seed(job, t->index, WORKLOAD_STREAM_BUFFER) ^ 0x5a5a);
	for (done = 0; done < need && !__atomic_load_n(&t->run->sync->abort, __ATOMIC_RELAXED);) {
		size_t n = need - done < LAYOUT_CHUNK ? (size_t)(need - done) : LAYOUT_CHUNK;
		ssize_t w;

		bufgen_fill(&g, buf, n);
		w = pwrite(fd, buf, n, (off_t)done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			thread_fail(t, w < 0 ? errno : ENOSPC, "laying out '%s'", t->path);
			break;
		}
		done += (uint64_t)w;
		__atomic_store_n(&t->live.layout_bytes, t->live.layout_bytes + (uint64_t)w,
				 __ATOMIC_RELAXED);
	}
	free(buf);
	if (!t->error && fsync(fd) < 0)
		thread_fail(t, errno, "syncing '%s'", t->path);
	close(fd);
	return t->error ? -1 : 0;
}

/* --- the I/O loop ------------------------------------------------------------------------ */

static void thread_reset_stats(struct workload_thread *t)
{
	bool rate = t->run->job->rate_iops > 0;

	for (int d = 0; d < IO_DDIR_COUNT; d++) {
		struct workload_dir *dir = &t->dir[d];

		dir->ios = dir->bytes = dir->short_ios = dir->drop_ios = 0;
		dir->slat = (struct stats_lat){ 0 };
		dir->clat = (struct stats_lat){ 0 };
		dir->lat = (struct stats_lat){ 0 };
		dir->olat = (struct stats_lat){ 0 };
		memset(dir->clat_hist.bucket, 0, sizeof(dir->clat_hist.bucket));
		dir->clat_hist.count = 0;
		/* only touched with rate_iops: 30 KiB per direction of shared memory otherwise */
		if (rate) {
			memset(dir->olat_hist.bucket, 0, sizeof(dir->olat_hist.bucket));
			dir->olat_hist.count = 0;
		}
	}
	t->sync_lat = (struct stats_lat){ 0 };
	memset(t->submit_calls, 0, sizeof(t->submit_calls));
	memset(t->complete_calls, 0, sizeof(t->complete_calls));
	memset(t->depth_ios, 0, sizeof(t->depth_ios));
}

static void rusage_now(struct rusage *ru)
{
	if (getrusage(RUSAGE_THREAD, ru) < 0)
		memset(ru, 0, sizeof(*ru));
}

static double tv_sec(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* One worker's loop state. */
struct runner {
	struct workload_thread *t;
	const struct job *job;
	const struct ioengine_ops *ops;
	struct ioengine_thread *et;
	struct io_u *ios;
	struct io_u **free, **pending; /* free slots; queued but not yet committed */
	unsigned nfree, npending, inflight;
	/* fio's batching (iodepth_batch_submit, iodepth_batch_complete_min/max) as fio fixes them
	 * up: commit once batch_submit I/Os are queued; reap complete_min..complete_max at a time
	 * when the queue is full; polling (both 0) reaps after every I/O. */
	unsigned batch_submit, complete_min, complete_max;
	bool polling;
	struct workload_offsets offs;
	struct workload_mix mix;
	struct bufgen buf;
	struct rate_sched rate;
	bool use_rate, sync_engine;
	uint64_t count_start, end;
	bool counting, stop;
	uint64_t pass_bytes; /* issued in this pass over the region */
	int loop;
	/* fsync=N/fdatasync=N as fio's get_io_u(): writes are counted as they are ISSUED, and when
	 * the last I/O issued was the N-th write and the job wants another, that next I/O is made
	 * (into `held`) and waits while what is in flight drains and the sync runs. */
	uint64_t nwrites;
	bool last_write; /* the last I/O issued was a write */
	enum { SYNC_NONE, SYNC_FSYNC, SYNC_FDATASYNC } sync_due;
	struct io_u *held; /* the I/O made, to issue after the sync */
	struct rusage ru0;
};

/* Which sync the next I/O unit must be, by fio's get_rw_ddir(): fsync if the issued writes are
 * a multiple of fsync=N, else fdatasync if of fdatasync=N; only right after a write (fio >= 3.38;
 * fio 3.33 also synced again after a read at the same count, a bug fio fixed). */
static int runner_sync_owed(const struct runner *r)
{
	const struct job *job = r->job;

	if (!r->last_write)
		return SYNC_NONE;
	if (job->fsync && r->nwrites % (uint64_t)job->fsync == 0)
		return SYNC_FSYNC;
	if (job->fdatasync && r->nwrites % (uint64_t)job->fdatasync == 0)
		return SYNC_FDATASYNC;
	return SYNC_NONE;
}

/* Run a sync with nothing in flight. `account`: into the sync statistics (fsync=N and
 * fdatasync=N are; end_fsync is not, as in fio). */
static int runner_sync(struct runner *r, bool data, bool account)
{
	struct workload_thread *t = r->t;
	uint64_t t0 = workload_now_ns();
	int ret = data && r->ops->datasync ? r->ops->datasync(r->et, r->et->file)
					   : r->ops->sync(r->et, r->et->file);

	r->sync_due = SYNC_NONE;
	r->last_write = false; /* fio: the last I/O issued is now the sync */
	if (ret < 0)
		return thread_fail(t, -ret, "%s '%s'", data ? "fdatasync" : "fsync", t->path);
	if (r->counting && account) {
		stats_lat_add(&t->sync_lat, workload_now_ns() - t0);
		t->fsyncs += !data;
	}
	return 0;
}

/* Account one finished I/O at monotonic time `now`. */
static void runner_complete(struct runner *r, struct io_u *io, uint64_t now)
{
	struct workload_thread *t = r->t;
	struct workload_live *l = &t->live;
	int d = io->ddir;
	uint64_t lat = now - io->start_ns;

	r->inflight -= !r->sync_engine;
	r->free[r->nfree++] = io;
	if (io->result < 0) {
		thread_fail(t, (int)-io->result, "%s of %zu bytes at offset %" PRIu64,
			    io->ddir == IO_DDIR_READ ? "read" : "write", io->len, io->offset);
		r->stop = true;
		return;
	}
	if (!r->counting && now >= r->count_start) {
		r->counting = true;
		thread_reset_stats(t);
		rusage_now(&r->ru0);
	}
	__atomic_store_n(&l->ios[d], l->ios[d] + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&l->bytes[d], l->bytes[d] + (uint64_t)io->result, __ATOMIC_RELAXED);
	__atomic_store_n(&l->lat_sum_ns[d], l->lat_sum_ns[d] + lat, __ATOMIC_RELAXED);
	if (r->counting) {
		struct workload_dir *dir = &t->dir[d];

		dir->ios++;
		dir->bytes += (uint64_t)io->result;
		if ((size_t)io->result < io->len)
			dir->short_ios++;
		if (r->sync_engine) {
			/* A sync engine's submission is its completion: fio reports no slat and
			 * clat == lat for psync. */
			stats_lat_add(&dir->clat, lat);
			stats_hist_add(&dir->clat_hist, lat);
		} else {
			stats_lat_add(&dir->slat, io->issue_ns - io->start_ns);
			stats_lat_add(&dir->clat, now - io->issue_ns);
			stats_hist_add(&dir->clat_hist, now - io->issue_ns);
		}
		stats_lat_add(&dir->lat, lat);
		if (r->use_rate) {
			stats_lat_add(&dir->olat, now - io->arrival_ns);
			stats_hist_add(&dir->olat_hist, now - io->arrival_ns);
		}
	}
	if (now >= r->end)
		r->stop = true;
}

/* The next I/O's offset, direction and size into `io`; false when the job has no more. */
static bool runner_next(struct runner *r, struct io_u *io)
{
	const struct job *job = r->job;
	uint64_t len = workload_mix_bs(&r->mix), offset;

	for (;;) {
		if (job->time_based || r->pass_bytes < r->t->size) {
			if (workload_offsets_next_len(&r->offs, len, &offset))
				break;
		}
		/* this pass over the region is done */
		r->pass_bytes = 0;
		r->offs.pos = 0;
		if (job->time_based) /* sequential wraps itself; a region smaller than len */
			return false;
		if (++r->loop >= job->loops)
			return false;
	}
	r->pass_bytes += len;
	io->ddir = workload_mix_ddir(&r->mix);
	io->offset = offset;
	io->len = (size_t)len;
	if (io->ddir == IO_DDIR_WRITE)
		bufgen_next(&r->buf, io->buf, io->len);
	return true;
}

static void sleep_until(uint64_t ns)
{
	struct timespec ts;

	workload_timespec(&ts, ns);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int runner_commit(struct runner *r)
{
	struct workload_thread *t = r->t;
	uint64_t now;
	int ret;

	if (!r->npending)
		return 0;
	if (r->counting) {
		/* fio: the depth is the I/O units in use, these included */
		t->depth_ios[workload_depth_bucket(r->inflight + r->npending)] += r->npending;
		t->submit_calls[workload_batch_bucket(r->npending)]++;
	}
	ret = r->ops->commit(r->et);
	if (ret < 0)
		return thread_fail(t, -ret, "submitting I/O");
	now = workload_now_ns();
	for (unsigned i = 0; i < r->npending; i++)
		r->pending[i]->issue_ns = now;
	r->inflight += r->npending;
	r->npending = 0;
	return 0;
}

/* How many completions to wait for and take, by fio's rules: at least complete_min (at most
 * what is in flight), and 1 when complete_min is 0 (fio waits for one even then, polling
 * included); at most complete_max, never fewer than the minimum. */
static void runner_reap_bounds(const struct runner *r, unsigned *min, unsigned *max)
{
	unsigned lo = r->complete_min < r->inflight ? r->complete_min : r->inflight;
	unsigned hi = r->complete_max < r->inflight ? r->complete_max : r->inflight;

	if (!lo)
		lo = 1;
	*min = lo;
	*max = hi > lo ? hi : lo;
}

/* Commit what is queued, then reap as runner_reap_bounds() says (waiting until `deadline` at
 * most when it is not 0). */
static int runner_reap(struct runner *r, uint64_t deadline)
{
	struct timespec ts, *tp = NULL;
	unsigned min, max;
	uint64_t now;
	int n;

	if (runner_commit(r) < 0)
		return -1;
	if (!r->inflight)
		return 0;
	if (deadline) {
		now = workload_now_ns();
		workload_timespec(&ts, deadline > now ? deadline - now : 0);
		tp = &ts;
	}
	runner_reap_bounds(r, &min, &max);
	n = r->ops->getevents(r->et, min, max, tp);
	if (n < 0)
		return thread_fail(r->t, -n, "waiting for I/O");
	if (r->counting)
		r->t->complete_calls[workload_batch_bucket((unsigned)n)]++;
	now = workload_now_ns();
	for (int i = 0; i < n; i++)
		runner_complete(r, r->ops->event(r->et, (unsigned)i), now);
	return 0;
}

/* The next I/O to issue into *iop: the one held back for a sync, else a free slot filled with
 * the next arrival's (rate_iops) offset, direction and size. Returns 1 with an I/O; 0 when none
 * can be issued now (r->stop set when the job has no more; *wake the arrival time to wait for,
 * with I/O in flight); and a made I/O that must wait for a sync goes to r->held (returns 0). */
static int runner_take(struct runner *r, struct io_u **iop, uint64_t *wake)
{
	struct workload_thread *t = r->t;
	uint64_t arrival = 0;
	struct io_u *io;

	if (__atomic_load_n(&t->run->sync->abort, __ATOMIC_RELAXED)) {
		r->stop = true; /* another worker died: wind down */
		return 0;
	}
	if (r->held) {
		*iop = r->held;
		r->held = NULL;
		return 1;
	}
	if (!r->nfree)
		return 0;
	if (r->use_rate) {
		uint64_t now = workload_now_ns();

		arrival = rate_sched_peek(&r->rate);
		if (arrival >= r->end) {
			r->stop = true;
			return 0;
		}
		if (arrival > now) {
			if (r->inflight || r->npending) {
				*wake = arrival; /* reap (or wait) until then */
				return 0;
			}
			sleep_until(arrival);
		}
		rate_sched_next(&r->rate);
	}
	io = r->free[--r->nfree];
	if (!runner_next(r, io)) {
		r->free[r->nfree++] = io;
		r->stop = true;
		return 0;
	}
	io->arrival_ns = arrival;
	/* fio makes the sync when the I/O after the N-th write is wanted: none after the last */
	r->sync_due = runner_sync_owed(r);
	if (r->sync_due) {
		r->held = io;
		return 0;
	}
	*iop = io;
	return 1;
}

/* Queue I/Os while there are free slots (and, with rate_iops, arrivals that are due). Returns
 * the time of the next arrival the loop must wake up for, 0 if none, or -1 on failure via
 * r->t->error. */
static uint64_t runner_fill(struct runner *r)
{
	struct workload_thread *t = r->t;
	uint64_t wake = 0;

	while (!r->stop && !r->sync_due) {
		struct io_u *io;
		uint64_t t0;
		enum ioengine_q q;

		if (runner_take(r, &io, &wake) <= 0)
			return wake;
		/* The log holds arrivals: the scheduled time in rate mode (an open loop's arrivals
		 * do not depend on how busy the host is), else the issue time. */
		if (t->issue_log && t->issue_n < r->job->issue_log)
			t->issue_log[t->issue_n++] =
			    r->use_rate ? io->arrival_ns : workload_now_ns();
		t0 = io->start_ns = workload_now_ns();
		q = r->ops->queue(r->et, io);
		if (q != IOENGINE_Q_BUSY) { /* issued: what fsync=N counts */
			r->last_write = io->ddir == IO_DDIR_WRITE;
			r->nwrites += r->last_write;
		}
		if (q == IOENGINE_Q_COMPLETED) {
			io->issue_ns = t0;
			if (r->counting) {
				t->depth_ios[workload_depth_bucket(r->inflight + r->npending +
								   1)]++;
				if (r->sync_engine) { /* fio: one submit and one complete of 1 */
					t->submit_calls[workload_batch_bucket(1)]++;
					t->complete_calls[workload_batch_bucket(1)]++;
				}
			}
			if (!r->sync_engine)
				r->inflight++; /* runner_complete() takes it back off */
			runner_complete(r, io, workload_now_ns());
		} else if (q == IOENGINE_Q_QUEUED) {
			r->pending[r->npending++] = io;
			/* fio submits a batch as soon as it is whole (default: every I/O) */
			if (r->npending >= r->batch_submit && runner_commit(r) < 0)
				break;
			if (r->polling && runner_reap(r, 0) < 0)
				break;
		} else {
			/* busy: give the slot back and the arrival too is served late */
			r->free[r->nfree++] = io;
			break;
		}
	}
	return 0;
}

/* The I/O loop proper: everything a worker does per I/O happens in here, and nothing else of
 * note (the set-up is in thread_io_loop()). Kept out of line so that bench/engine-vs-fio.sh can
 * count its instructions per I/O under callgrind (--toggle-collect=runner_loop): the short
 * form's budget, which catches a 2x regression of our own per-I/O code. */
__attribute__((noinline)) static void runner_loop(struct runner *r)
{
	struct workload_thread *t = r->t;
	const struct job *job = r->job;

	while (!t->error) {
		uint64_t wake;

		wake = runner_fill(r);

		if (t->error || runner_commit(r) < 0)
			break;
		if (r->inflight) {
			/* with free slots, only wait until the next arrival is due */
			if (runner_reap(r, r->nfree && wake ? wake : 0) < 0)
				break;
			continue;
		}
		/* nothing in flight: the sync fio's get_io_u() made, unless the job ended (runtime
		 * up, a failed I/O) while the writes before it drained */
		if (r->stop)
			break;
		if (r->sync_due) {
			if (runner_sync(r, r->sync_due == SYNC_FDATASYNC, true) < 0)
				break;
			continue;
		}
	}
	if (r->held) /* made for after a sync the job did not get to */
		r->free[r->nfree++] = r->held;
	/* drain whatever is still in flight after a stop or a failure (fio: wait for all) */
	while (r->inflight) {
		int n = r->ops->getevents(r->et, r->inflight, r->inflight, NULL);

		if (n <= 0)
			break;
		if (r->counting && !t->error)
			t->complete_calls[workload_batch_bucket((unsigned)n)]++;
		for (int i = 0; i < n; i++) {
			struct io_u *io = r->ops->event(r->et, (unsigned)i);

			if (t->error) { /* failed already: only take them back */
				r->inflight--;
				r->free[r->nfree++] = io;
			} else {
				runner_complete(r, io, workload_now_ns());
			}
		}
	}
	if (!t->error && job->end_fsync && engine_rw_writes(job->rw))
		runner_sync(r, false, false); /* fio: an fsync, outside the statistics */
}

/* fio's fix-ups: a submit batch of 0 or above the depth is the depth; a complete_max below
 * complete_min is complete_min; polling when both complete bounds are 0. */
static void runner_batch_init(struct runner *r, const struct job *job, unsigned depth)
{
	unsigned b = (unsigned)job->iodepth_batch_submit;

	r->batch_submit = !b || b > depth ? depth : b;
	r->complete_min = (unsigned)job->iodepth_batch_complete_min;
	r->complete_max = (unsigned)job->iodepth_batch_complete_max;
	if (r->complete_max < r->complete_min)
		r->complete_max = r->complete_min;
	r->polling = !r->complete_min && !r->complete_max;
}

static void thread_io_loop(struct workload_thread *t, struct ioengine_thread *et, struct io_u *ios,
			   struct io_u **slots)
{
	const struct job *job = t->run->job;
	struct runner r = {
		.t = t,
		.job = job,
		.ops = t->run->ops,
		.et = et,
		.ios = ios,
		.free = slots,
		.pending = slots + et->iodepth,
		.end = UINT64_MAX,
		.counting = job->ramp_time_us == 0,
		.sync_engine = (t->run->ops->flags & IOENGINE_SYNC) != 0,
		.use_rate = job->rate_iops > 0,
	};
	uint64_t start;
	struct rusage ru1;

	runner_batch_init(&r, job, et->iodepth);
	workload_mix_init(&r.mix, job, t->index);
	bufgen_init(&r.buf, job, workload_thread_seed(job, t->index, WORKLOAD_STREAM_BUFFER));
	for (unsigned i = 0; i < et->iodepth; i++) {
		bufgen_fill(&r.buf, ios[i].buf, ios[i].len);
		r.free[r.nfree++] = &ios[et->iodepth - 1 - i];
	}
	workload_offsets_init(&r.offs, job, t->size, t->index);

	start = workload_now_ns();
	r.count_start = start + job->ramp_time_us * 1000;
	if (job->runtime_us)
		r.end = r.count_start + job->runtime_us * 1000;
	if (r.use_rate) /* wake at the arrival, not up to 50 us after it (the default slack) */
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (r.use_rate)
		rate_sched_init(&r.rate, (unsigned)job->rate_iops, job->rate_process,
				workload_thread_seed(job, t->index, WORKLOAD_STREAM_RATE), start);
	rusage_now(&r.ru0);
	runner_loop(&r);
	rusage_now(&ru1);
	if (r.counting) {
		uint64_t stop = workload_now_ns(),
			 from = start > r.count_start ? start : r.count_start;

		t->runtime_ns = stop > from ? stop - from : 0;
		t->cpu_runtime_ns = t->runtime_ns;
		t->usr_sec = tv_sec(&ru1.ru_utime) - tv_sec(&r.ru0.ru_utime);
		t->sys_sec = tv_sec(&ru1.ru_stime) - tv_sec(&r.ru0.ru_stime);
		t->ctx =
		    (uint64_t)((ru1.ru_nvcsw - r.ru0.ru_nvcsw) + (ru1.ru_nivcsw - r.ru0.ru_nivcsw));
		t->majf = (uint64_t)(ru1.ru_majflt - r.ru0.ru_majflt);
		t->minf = (uint64_t)(ru1.ru_minflt - r.ru0.ru_minflt);
	}
}

static int open_flags(const struct job *job, bool shared)
{
	int flags = engine_rw_writes(job->rw) ? O_RDWR : O_RDONLY;

	if (engine_rw_writes(job->rw) && !shared)
		flags |= O_CREAT;
	if (job->direct)
		flags |= O_DIRECT;
	return flags | job->sync_flags;
}

static void thread_run_io(struct workload_thread *t)
{
	const struct job *job = t->run->job;
	const struct ioengine_ops *ops = t->run->ops;
	unsigned depth = (ops->flags & IOENGINE_SYNC) ? 1 : (unsigned)job->iodepth;
	struct ioengine_file file = { .path = t->path, .fd = -1 };
	struct ioengine_thread et = { .ops = ops, .iodepth = depth, .file = &file };
	size_t bs = (size_t)engine_job_max_bs(job);
	struct io_u *ios = calloc(depth, sizeof(*ios));
	struct io_u **slots = calloc(2 * (size_t)depth, sizeof(*slots));
	void *bufs = NULL;
	int ret;

	file.open_flags = open_flags(job, job->filename != NULL);
	if (!ios || !slots) {
		thread_fail(t, ENOMEM, "allocating %u I/O units", depth);
		goto out;
	}
	/* one buffer per I/O unit, each a multiple of 4 KiB so all stay aligned for O_DIRECT */
	bs = (bs + 4095) & ~(size_t)4095;
	ret = posix_memalign(&bufs, 4096, bs * depth);
	if (ret) {
		thread_fail(t, ret, "allocating %u buffers of %zu bytes", depth, bs);
		goto out;
	}
	for (unsigned i = 0; i < depth; i++) {
		ios[i].buf = (char *)bufs + (size_t)i * bs;
		ios[i].len = bs;
		ios[i].index = i;
	}
	if (ops->init && (ret = ops->init(&et)) < 0) {
		thread_fail(t, -ret, "starting I/O engine '%s'", ops->name);
		goto out;
	}
	ret = ops->open_file(&et, &file);
	if (ret < 0) {
		thread_fail(t, -ret, "opening '%s'", t->path);
		goto cleanup;
	}
	if (job->invalidate && !job->direct)
		posix_fadvise(file.fd, 0, 0, POSIX_FADV_DONTNEED);
	thread_io_loop(t, &et, ios, slots);
	ret = ops->close_file(&et, &file);
	if (ret < 0)
		thread_fail(t, -ret, "closing '%s'", t->path);
cleanup:
	if (ops->cleanup)
		ops->cleanup(&et);
out:
	free(bufs);
	free(ios);
	free(slots);
}

/* --- with the others: ready, go, finished ------------------------------------------------ */

void workload_sync_lock(struct workload_sync *s)
{
	if (pthread_mutex_lock(&s->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&s->lock);
}

void workload_sync_wait(struct workload_sync *s, pthread_cond_t *c, const struct timespec *abs)
{
	int ret = abs ? pthread_cond_timedwait(c, &s->lock, abs) : pthread_cond_wait(c, &s->lock);

	if (ret == EOWNERDEAD)
		pthread_mutex_consistent(&s->lock);
}

void *workload_worker_main(void *arg)
{
	struct workload_thread *t = arg;
	struct workload_run *run = t->run;
	struct workload_sync *sync = run->sync;
	bool shared = run->job->filename != NULL;

	/* Per-thread files are laid out in parallel; a shared file by thread 0 alone, the others
	 * wait for it below like everyone waits for everyone. */
	if (!shared || t->index == 0)
		thread_layout(t);

	workload_sync_lock(sync);
	sync->ready++;
	pthread_cond_signal(&sync->main_cond);
	while (!sync->go)
		workload_sync_wait(sync, &sync->go_cond, NULL);
	pthread_mutex_unlock(&sync->lock);

	if (!t->error && !(shared && run->threads[0].error) &&
	    !__atomic_load_n(&sync->abort, __ATOMIC_RELAXED))
		thread_run_io(t);

	workload_sync_lock(sync);
	t->finished = true;
	sync->nfinished++;
	pthread_cond_signal(&sync->main_cond);
	pthread_mutex_unlock(&sync->lock);
	return NULL;
}
