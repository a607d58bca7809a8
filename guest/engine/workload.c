/* The job runner. One thread per numjobs; the calling thread is the sampler: it writes the status
 * line to --status-fd every second (during layout too, so the host's heartbeat never stops) and
 * records the per-second samples. See workload.h for the contracts. */
#include "workload.h"

#include "buffers.h"
#include "rate.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define LAYOUT_CHUNK (1u << 20)
#define NSEC_PER_SEC 1000000000ull

enum { STREAM_OFFSETS, STREAM_MIX, STREAM_BUFFER, STREAM_RATE };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void timespec_from_ns_rel(struct timespec *ts, uint64_t ns)
{
	ts->tv_sec = (time_t)(ns / NSEC_PER_SEC);
	ts->tv_nsec = (long)(ns % NSEC_PER_SEC);
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void engine_rand_seed(struct engine_rand *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t engine_rand_next(struct engine_rand *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t engine_rand_below(struct engine_rand *r, uint64_t n)
{
	/* Multiply-shift (Lemire) without the rejection step: the bias is below n / 2^64. */
	return (uint64_t)(((unsigned __int128)engine_rand_next(r) * n) >> 64);
}

uint64_t workload_thread_seed(const struct job *job, unsigned thread_index, unsigned stream)
{
	static uint64_t clock_seed;
	uint64_t base = job->randseed;

	if (!job->randrepeat) {
		if (!__atomic_load_n(&clock_seed, __ATOMIC_RELAXED)) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			__atomic_store_n(
			    &clock_seed,
			    ((uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec) | 1,
			    __ATOMIC_RELAXED);
		}
		base = __atomic_load_n(&clock_seed, __ATOMIC_RELAXED);
	}
	return base ^ ((uint64_t)thread_index * 0x9e3779b97f4a7c15ull) ^
	       ((uint64_t)stream * 0xc2b2ae3d27d4eb4full);
}

void workload_offsets_init(struct workload_offsets *o, const struct job *job, uint64_t size,
			   unsigned thread_index)
{
	memset(o, 0, sizeof(*o));
	o->start = job->offset;
	o->size = size;
	o->bs = job->nbss ? engine_job_max_bs(job) : job->bs;
	o->align = engine_job_min_bs(job);
	o->random = engine_rw_random(job->rw);
	o->wrap = job->time_based;
	engine_rand_seed(&o->rand, workload_thread_seed(job, thread_index, STREAM_OFFSETS));
}

bool workload_offsets_next_len(struct workload_offsets *o, uint64_t len, uint64_t *offset)
{
	if (o->random) {
		/* block-aligned starts whose I/O ends inside the region */
		*offset = o->start +
			  engine_rand_below(&o->rand, (o->size - len) / o->align + 1) * o->align;
		return true;
	}
	if (o->pos + len > o->size) {
		o->pos = 0;
		if (!o->wrap)
			return false;
	}
	*offset = o->start + o->pos;
	o->pos += len;
	return true;
}

bool workload_offsets_next(struct workload_offsets *o, uint64_t *offset)
{
	return workload_offsets_next_len(o, o->bs, offset);
}

void workload_mix_init(struct workload_mix *m, const struct job *job, unsigned thread_index)
{
	unsigned c = 0;

	memset(m, 0, sizeof(*m));
	m->job = job;
	engine_rand_seed(&m->rand, workload_thread_seed(job, thread_index, STREAM_MIX));
	for (unsigned i = 0; i < job->nbss; i++)
		m->cum[i] = c += job->bss[i].pct;
}

enum io_ddir workload_mix_ddir(struct workload_mix *m)
{
	const struct job *job = m->job;

	if (job->rw == ENGINE_RW_RW || job->rw == ENGINE_RW_RANDRW)
		return engine_rand_below(&m->rand, 100) < (uint64_t)job->rwmixread ? IO_DDIR_READ
										   : IO_DDIR_WRITE;
	return engine_rw_reads(job->rw) ? IO_DDIR_READ : IO_DDIR_WRITE;
}

uint64_t workload_mix_bs(struct workload_mix *m)
{
	const struct job *job = m->job;
	uint64_t x;

	if (!job->nbss)
		return job->bs;
	x = engine_rand_below(&m->rand, 100);
	for (unsigned i = 0; i < job->nbss; i++)
		if (x < m->cum[i])
			return job->bss[i].bs;
	return job->bss[job->nbss - 1].bs;
}

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

/* Make the thread's file at least offset + size bytes. A job that reads gets real (random) data
 * written, as fio lays out files; a write-only job only needs the file to exist and be sized.
 * Devices and big-enough files are left alone. */
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
	fd = open(t->path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return thread_fail(t, errno, "creating '%s'", t->path);
	if (!engine_rw_reads(job->rw)) {
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
	bufgen_init(&g, job, workload_thread_seed(job, t->index, STREAM_BUFFER) ^ 0x5a5a);
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
	struct workload_offsets offs;
	struct workload_mix mix;
	struct bufgen buf;
	struct rate_sched rate;
	bool use_rate, sync_engine;
	uint64_t count_start, end;
	bool counting, stop, sync_due;
	uint64_t pass_bytes; /* issued in this pass over the region */
	int loop;
	uint64_t nwrites;
	struct rusage ru0;
};

static int runner_sync(struct runner *r)
{
	struct workload_thread *t = r->t;
	uint64_t t0 = now_ns();
	bool data = r->job->fdatasync && !r->job->fsync;
	int ret = data && r->ops->datasync ? r->ops->datasync(r->et, r->et->file)
					   : r->ops->sync(r->et, r->et->file);

	r->sync_due = false;
	if (ret < 0)
		return thread_fail(t, -ret, "%s '%s'", data ? "fdatasync" : "fsync", t->path);
	if (r->counting)
		stats_lat_add(&t->sync_lat, now_ns() - t0);
	return 0;
}

/* Account one finished I/O at monotonic time `now`. */
static void runner_complete(struct runner *r, struct io_u *io, uint64_t now)
{
	struct workload_thread *t = r->t;
	const struct job *job = r->job;
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
	if (io->ddir == IO_DDIR_WRITE) {
		int every = job->fsync ? job->fsync : job->fdatasync;

		if (every && ++r->nwrites % (uint64_t)every == 0)
			r->sync_due = true;
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
	struct timespec ts = { .tv_sec = (time_t)(ns / NSEC_PER_SEC),
			       .tv_nsec = (long)(ns % NSEC_PER_SEC) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Reap at least one completion (waiting until `deadline` at most when it is not 0). */
static int runner_reap(struct runner *r, uint64_t deadline)
{
	struct timespec ts, *tp = NULL;
	uint64_t now;
	int n;

	if (deadline) {
		now = now_ns();
		timespec_from_ns_rel(&ts, deadline > now ? deadline - now : 0);
		tp = &ts;
	}
	n = r->ops->getevents(r->et, 1, r->inflight, tp);
	if (n < 0)
		return thread_fail(r->t, -n, "waiting for I/O");
	now = now_ns();
	for (int i = 0; i < n; i++)
		runner_complete(r, r->ops->event(r->et, (unsigned)i), now);
	return 0;
}

static int runner_commit(struct runner *r)
{
	uint64_t now;
	int ret;

	if (!r->npending)
		return 0;
	ret = r->ops->commit(r->et);
	if (ret < 0)
		return thread_fail(r->t, -ret, "submitting I/O");
	now = now_ns();
	for (unsigned i = 0; i < r->npending; i++)
		r->pending[i]->issue_ns = now;
	r->inflight += r->npending;
	r->npending = 0;
	return 0;
}

/* Queue I/Os while there are free slots (and, with rate_iops, arrivals that are due). Returns
 * the time of the next arrival the loop must wake up for, 0 if none, or -1 on failure via
 * r->t->error. */
static uint64_t runner_fill(struct runner *r)
{
	struct workload_thread *t = r->t;

	while (!r->stop && !r->sync_due && r->nfree) {
		struct io_u *io;
		uint64_t arrival = 0, t0;
		enum ioengine_q q;

		if (__atomic_load_n(&t->run->sync->abort, __ATOMIC_RELAXED)) {
			r->stop = true; /* another worker died: wind down */
			break;
		}

		if (r->use_rate) {
			uint64_t now = now_ns();

			arrival = rate_sched_peek(&r->rate);
			if (arrival >= r->end) {
				r->stop = true;
				break;
			}
			if (arrival > now) {
				if (r->inflight || r->npending)
					return arrival; /* reap (or wait) until then */
				sleep_until(arrival);
			}
			rate_sched_next(&r->rate);
		}
		io = r->free[--r->nfree];
		if (!runner_next(r, io)) {
			r->free[r->nfree++] = io;
			r->stop = true;
			break;
		}
		io->arrival_ns = arrival;
		/* The log holds arrivals: the scheduled time in rate mode (an open loop's arrivals
		 * do not depend on how busy the host is), else the issue time. */
		if (t->issue_log && t->issue_n < r->job->issue_log)
			t->issue_log[t->issue_n++] = r->use_rate ? arrival : now_ns();
		t0 = io->start_ns = now_ns();
		q = r->ops->queue(r->et, io);
		if (q == IOENGINE_Q_COMPLETED) {
			io->issue_ns = t0;
			if (!r->sync_engine)
				r->inflight++; /* runner_complete() takes it back off */
			runner_complete(r, io, now_ns());
		} else if (q == IOENGINE_Q_QUEUED) {
			r->pending[r->npending++] = io;
		} else {
			/* busy: give the slot back and the arrival too is served late */
			r->free[r->nfree++] = io;
			break;
		}
	}
	return 0;
}

static void runner_loop(struct runner *r)
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
		if (r->sync_due) {
			if (runner_sync(r) < 0)
				break;
			continue;
		}
		if (r->stop)
			break;
	}
	/* drain whatever is still in flight after a stop or a failure */
	while (r->inflight) {
		int n = r->ops->getevents(r->et, 1, r->inflight, NULL);

		if (n <= 0)
			break;
		for (int i = 0; i < n; i++) {
			struct io_u *io = r->ops->event(r->et, (unsigned)i);

			if (t->error) { /* failed already: only take them back */
				r->inflight--;
				r->free[r->nfree++] = io;
			} else {
				runner_complete(r, io, now_ns());
			}
		}
	}
	if (!t->error && job->end_fsync && engine_rw_writes(job->rw))
		runner_sync(r);
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

	workload_mix_init(&r.mix, job, t->index);
	bufgen_init(&r.buf, job, workload_thread_seed(job, t->index, STREAM_BUFFER));
	for (unsigned i = 0; i < et->iodepth; i++) {
		bufgen_fill(&r.buf, ios[i].buf, ios[i].len);
		r.free[r.nfree++] = &ios[et->iodepth - 1 - i];
	}
	workload_offsets_init(&r.offs, job, t->size, t->index);

	start = now_ns();
	r.count_start = start + job->ramp_time_us * 1000;
	if (job->runtime_us)
		r.end = r.count_start + job->runtime_us * 1000;
	if (r.use_rate) /* wake at the arrival, not up to 50 us after it (the default slack) */
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (r.use_rate)
		rate_sched_init(&r.rate, (unsigned)job->rate_iops, job->rate_process,
				workload_thread_seed(job, t->index, STREAM_RATE), start);
	rusage_now(&r.ru0);
	runner_loop(&r);
	rusage_now(&ru1);
	if (r.counting) {
		uint64_t stop = now_ns(), from = start > r.count_start ? start : r.count_start;

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

/* Lock the shared mutex; a worker process that died holding it leaves it consistent enough
 * (the protected state is a few counters the sampler re-derives from waitpid). */
static void sync_lock(struct workload_sync *s)
{
	if (pthread_mutex_lock(&s->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&s->lock);
}

static void sync_wait(struct workload_sync *s, pthread_cond_t *c, const struct timespec *abs)
{
	int ret = abs ? pthread_cond_timedwait(c, &s->lock, abs) : pthread_cond_wait(c, &s->lock);

	if (ret == EOWNERDEAD)
		pthread_mutex_consistent(&s->lock);
}

static void *thread_main(void *arg)
{
	struct workload_thread *t = arg;
	struct workload_run *run = t->run;
	struct workload_sync *sync = run->sync;
	bool shared = run->job->filename != NULL;

	/* Per-thread files are laid out in parallel; a shared file by thread 0 alone, the others
	 * wait for it below like everyone waits for everyone. */
	if (!shared || t->index == 0)
		thread_layout(t);

	sync_lock(sync);
	sync->ready++;
	pthread_cond_signal(&sync->main_cond);
	while (!sync->go)
		sync_wait(sync, &sync->go_cond, NULL);
	pthread_mutex_unlock(&sync->lock);

	if (!t->error && !(shared && run->threads[0].error) &&
	    !__atomic_load_n(&sync->abort, __ATOMIC_RELAXED))
		thread_run_io(t);

	sync_lock(sync);
	t->finished = true;
	sync->nfinished++;
	pthread_cond_signal(&sync->main_cond);
	pthread_mutex_unlock(&sync->lock);
	return NULL;
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

		sync_lock(run->sync);
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

static void timespec_from_ns(struct timespec *ts, uint64_t ns)
{
	ts->tv_sec = (time_t)(ns / NSEC_PER_SEC);
	ts->tv_nsec = (long)(ns % NSEC_PER_SEC);
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
	uint64_t t0 = now_ns(), next_status = t0 + NSEC_PER_SEC, count_start = 0, next_sample = 0;
	uint64_t abort_at = 0;
	bool running = false, snapped = false;

	sync_lock(sync);
	while (sync->nfinished < run->nthreads) {
		uint64_t now = now_ns(), deadline = next_status;
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
			sync_lock(sync);
			next_sample += NSEC_PER_SEC;
		}
		if (now >= next_status) {
			pthread_mutex_unlock(&sync->lock);
			status_write(run, (double)(now - t0) / 1e9, running ? "run" : "layout");
			sync_lock(sync);
			next_status += NSEC_PER_SEC;
		}
		if (running && next_sample < deadline)
			deadline = next_sample;
		if (sync->nfinished < run->nthreads && (running || sync->ready < run->nthreads)) {
			timespec_from_ns(&ts, deadline);
			sync_wait(sync, &sync->main_cond, &ts);
		}
	}
	pthread_mutex_unlock(&sync->lock);
	status_write(run, (double)(now_ns() - t0) / 1e9, "done");
}

/* --- setup ------------------------------------------------------------------------------- */

/* Zeroed memory that forked workers share with this process; NULL on failure. */
static void *shared_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A worker process (thread=0): run, then leave without atexit handlers or stdio flushes (they
 * belong to the parent). It dies with the parent, so a killed run leaves no I/O behind. */
static pid_t workload_parent;

static void worker_process(struct workload_thread *t)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != workload_parent) /* the parent died before prctl */
		_exit(1);
	thread_main(t);
	_exit(0);
}

int workload_run(struct workload_run *run, const struct job *job, int status_fd, char *msg,
		 size_t len)
{
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	struct timespec wall;
	int64_t fsize = -1;
	unsigned i;

	memset(run, 0, sizeof(*run));
	run->job = job;
	run->status_fd = status_fd;
	run->ops = ioengine_find(job->ioengine);
	if (!run->ops) {
		snprintf(msg, len, "option 'ioengine': unknown I/O engine \"%s\"", job->ioengine);
		return -1;
	}
	if (job->filename) {
		fsize = file_size(job->filename);
		if (!job->size && fsize < 0) {
			snprintf(msg, len, "'%s': %s (and no size given)", job->filename,
				 strerror((int)-fsize));
			return -1;
		}
		if (is_block_device(job->filename) && job->size &&
		    job->offset + job->size > (uint64_t)fsize) {
			snprintf(msg, len,
				 "'%s': offset + size (%" PRIu64 ") is beyond the device (%" PRId64
				 " bytes)",
				 job->filename, job->offset + job->size, fsize);
			return -1;
		}
	}
	clock_gettime(CLOCK_REALTIME, &wall);
	run->timestamp = wall.tv_sec;
	run->timestamp_ms = (uint64_t)wall.tv_sec * 1000 + (uint64_t)wall.tv_nsec / 1000000;
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
	for (i = 0; i < run->nthreads; i++) {
		struct workload_thread *t = &run->threads[i];

		t->run = run;
		t->index = i;
		if (run->issue_logs)
			t->issue_log = run->issue_logs + (size_t)i * job->issue_log;
		if (job->filename)
			snprintf(t->path, sizeof(t->path), "%s", job->filename);
		else
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

	/* The children must not write out what this process has buffered. */
	fflush(NULL);
	workload_parent = getpid();
	for (i = 0; i < run->nthreads; i++) {
		struct workload_thread *t = &run->threads[i];
		int ret = 0;

		if (job->thread) {
			ret = pthread_create(&t->tid, NULL, thread_main, t);
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
			/* Count the missing workers as finished failures so the rest can run. */
			sync_lock(run->sync);
			for (unsigned j = i; j < run->nthreads; j++) {
				struct workload_thread *u = &run->threads[j];

				u->error = ret;
				u->pid = 0;
				snprintf(u->errmsg, sizeof(u->errmsg), "worker %u: not started: %s",
					 j, strerror(ret));
				u->finished = true;
				run->sync->ready++;
				run->sync->nfinished++;
			}
			pthread_mutex_unlock(&run->sync->lock);
			break;
		}
		t->started = true;
	}
	sampler_loop(run);
	for (i = 0; i < run->nthreads; i++) {
		struct workload_thread *t = &run->threads[i];

		if (!t->started)
			continue;
		if (job->thread)
			pthread_join(t->tid, NULL);
		else if (t->pid > 0)
			waitpid(t->pid, NULL, 0);
	}
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

void workload_thread_merge(struct workload_thread *dst, const struct workload_thread *src)
{
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
