/* The job runner. One thread per numjobs; the calling thread is the sampler: it writes the status
 * line to --status-fd every second (during layout too, so the host's heartbeat never stops) and
 * records the per-second samples. See workload.h for the contracts. */
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#define LAYOUT_CHUNK (1u << 20)
#define NSEC_PER_SEC 1000000000ull

enum { STREAM_OFFSETS, STREAM_MIX, STREAM_BUFFER };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
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
	o->bs = job->bs;
	o->nblocks = size / job->bs;
	o->random = engine_rw_random(job->rw);
	o->wrap = job->time_based;
	engine_rand_seed(&o->rand, workload_thread_seed(job, thread_index, STREAM_OFFSETS));
}

bool workload_offsets_next(struct workload_offsets *o, uint64_t *offset)
{
	if (o->random) {
		*offset = o->start + engine_rand_below(&o->rand, o->nblocks) * o->bs;
		return true;
	}
	if (o->next_block >= o->nblocks) {
		o->next_block = 0;
		if (!o->wrap)
			return false;
	}
	*offset = o->start + o->next_block++ * o->bs;
	return true;
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

static void fill_random(void *buf, size_t len, struct engine_rand *r)
{
	uint64_t *p = buf;

	for (size_t i = 0; i < len / sizeof(*p); i++)
		p[i] = engine_rand_next(r);
}

/* Make the thread's file at least offset + size bytes. A job that reads gets real (random) data
 * written, as fio lays out files; a write-only job only needs the file to exist and be sized.
 * Devices and big-enough files are left alone. */
static int thread_layout(struct workload_thread *t)
{
	const struct job *job = t->run->job;
	uint64_t need = job->offset + t->size, done;
	struct engine_rand r;
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
	engine_rand_seed(&r, workload_thread_seed(job, t->index, STREAM_BUFFER) ^ 0x5a5a);
	for (done = 0; done < need;) {
		size_t n = need - done < LAYOUT_CHUNK ? (size_t)(need - done) : LAYOUT_CHUNK;
		ssize_t w;

		fill_random(buf, n, &r);
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
	for (int d = 0; d < IO_DDIR_COUNT; d++) {
		struct workload_dir *dir = &t->dir[d];

		dir->ios = dir->bytes = dir->short_ios = dir->drop_ios = 0;
		dir->slat = (struct stats_lat){0};
		dir->clat = (struct stats_lat){0};
		dir->lat = (struct stats_lat){0};
		memset(dir->clat_hist.bucket, 0, sizeof(dir->clat_hist.bucket));
		dir->clat_hist.count = 0;
	}
	t->sync_lat = (struct stats_lat){0};
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

static int thread_sync(struct workload_thread *t, struct ioengine_thread *et, bool counting)
{
	uint64_t t0 = now_ns();
	int ret = t->run->ops->sync(et, et->file);

	if (ret < 0)
		return thread_fail(t, -ret, "fsync '%s'", t->path);
	if (counting)
		stats_lat_add(&t->sync_lat, now_ns() - t0);
	return 0;
}

/* Write a fresh random word into every 4 KiB of a write buffer, so no two blocks written are
 * the same (dedup and compression see new data), at a few stores per I/O. */
static void scramble(void *buf, size_t len, struct engine_rand *r)
{
	for (size_t i = 0; i + sizeof(uint64_t) <= len; i += 4096)
		*(uint64_t *)((char *)buf + i) = engine_rand_next(r);
}

static void thread_io_loop(struct workload_thread *t, struct ioengine_thread *et, void *buf)
{
	const struct job *job = t->run->job;
	const struct ioengine_ops *ops = t->run->ops;
	struct engine_rand mix, bufrand;
	struct workload_offsets offs;
	uint64_t start, count_start, end = UINT64_MAX, nwrites = 0;
	bool counting = job->ramp_time_us == 0;
	struct rusage ru0, ru1;
	struct io_u io = {.buf = buf, .len = job->bs};

	engine_rand_seed(&mix, workload_thread_seed(job, t->index, STREAM_MIX));
	engine_rand_seed(&bufrand, workload_thread_seed(job, t->index, STREAM_BUFFER));
	fill_random(buf, job->bs, &bufrand);
	workload_offsets_init(&offs, job, t->size, t->index);

	start = now_ns();
	count_start = start + job->ramp_time_us * 1000;
	if (job->runtime_us)
		end = count_start + job->runtime_us * 1000;
	rusage_now(&ru0);

	for (int loop = 0; job->time_based || loop < job->loops; loop++) {
		uint64_t offset, bytes_done = 0, t1;

		while (job->time_based || bytes_done < t->size) {
			if (!workload_offsets_next(&offs, &offset))
				break;
			if (job->rw == ENGINE_RW_RW || job->rw == ENGINE_RW_RANDRW)
				io.ddir = engine_rand_below(&mix, 100) < (uint64_t)job->rwmixread
					      ? IO_DDIR_READ
					      : IO_DDIR_WRITE;
			else
				io.ddir = engine_rw_reads(job->rw) ? IO_DDIR_READ : IO_DDIR_WRITE;
			if (io.ddir == IO_DDIR_WRITE)
				scramble(buf, job->bs, &bufrand);
			io.offset = offset;
			io.start_ns = now_ns();
			if (ops->queue(et, &io) != IOENGINE_Q_COMPLETED) {
				thread_fail(t, EINVAL, "engine '%s' did not complete an I/O",
					    ops->name);
				goto out;
			}
			t1 = now_ns();
			if (io.result < 0) {
				thread_fail(
				    t, (int)-io.result, "%s of %zu bytes at offset %" PRIu64,
				    io.ddir == IO_DDIR_READ ? "read" : "write", io.len, io.offset);
				goto out;
			}
			bytes_done += job->bs;
			if (!counting && t1 >= count_start) {
				counting = true;
				thread_reset_stats(t);
				rusage_now(&ru0);
			}
			{
				struct workload_live *l = &t->live;
				int d = io.ddir;
				uint64_t lat = t1 - io.start_ns;

				__atomic_store_n(&l->ios[d], l->ios[d] + 1, __ATOMIC_RELAXED);
				__atomic_store_n(&l->bytes[d], l->bytes[d] + (uint64_t)io.result,
						 __ATOMIC_RELAXED);
				__atomic_store_n(&l->lat_sum_ns[d], l->lat_sum_ns[d] + lat,
						 __ATOMIC_RELAXED);
				if (counting) {
					struct workload_dir *dir = &t->dir[d];

					dir->ios++;
					dir->bytes += (uint64_t)io.result;
					if ((size_t)io.result < io.len)
						dir->short_ios++;
					/* A sync engine's submission is its completion: fio
					 * reports no slat and clat == lat for psync. */
					stats_lat_add(&dir->clat, lat);
					stats_lat_add(&dir->lat, lat);
					stats_hist_add(&dir->clat_hist, lat);
				}
			}
			if (io.ddir == IO_DDIR_WRITE && job->fsync && ++nwrites % job->fsync == 0 &&
			    thread_sync(t, et, counting) < 0)
				goto out;
			if (t1 >= end)
				goto out;
		}
		if (!job->time_based && job->runtime_us && now_ns() >= end)
			break;
	}
out:
	if (!t->error && job->end_fsync && engine_rw_writes(job->rw))
		thread_sync(t, et, counting);
	rusage_now(&ru1);
	if (counting) {
		uint64_t stop = now_ns(), from = start > count_start ? start : count_start;

		t->runtime_ns = stop > from ? stop - from : 0;
		t->usr_sec = tv_sec(&ru1.ru_utime) - tv_sec(&ru0.ru_utime);
		t->sys_sec = tv_sec(&ru1.ru_stime) - tv_sec(&ru0.ru_stime);
		t->ctx =
		    (uint64_t)((ru1.ru_nvcsw - ru0.ru_nvcsw) + (ru1.ru_nivcsw - ru0.ru_nivcsw));
		t->majf = (uint64_t)(ru1.ru_majflt - ru0.ru_majflt);
		t->minf = (uint64_t)(ru1.ru_minflt - ru0.ru_minflt);
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
	struct ioengine_file file = {.path = t->path, .fd = -1};
	struct ioengine_thread et = {.ops = ops, .iodepth = 1, .file = &file};
	void *buf = NULL;
	int ret;

	file.open_flags = open_flags(job, job->filename != NULL);
	if (ops->init && (ret = ops->init(&et)) < 0) {
		thread_fail(t, -ret, "starting I/O engine '%s'", ops->name);
		return;
	}
	ret = posix_memalign(&buf, 4096, job->bs);
	if (ret) {
		thread_fail(t, ret, "allocating a %" PRIu64 "-byte buffer", job->bs);
		goto cleanup;
	}
	ret = ops->open_file(&et, &file);
	if (ret < 0) {
		thread_fail(t, -ret, "opening '%s'", t->path);
		goto cleanup;
	}
	if (job->invalidate && !job->direct)
		posix_fadvise(file.fd, 0, 0, POSIX_FADV_DONTNEED);
	thread_io_loop(t, &et, buf);
	ret = ops->close_file(&et, &file);
	if (ret < 0)
		thread_fail(t, -ret, "closing '%s'", t->path);
cleanup:
	free(buf);
	if (ops->cleanup)
		ops->cleanup(&et);
}

static void *thread_main(void *arg)
{
	struct workload_thread *t = arg;
	struct workload_run *run = t->run;
	bool shared = run->job->filename != NULL;

	/* Per-thread files are laid out in parallel; a shared file by thread 0 alone, the others
	 * wait for it below like everyone waits for everyone. */
	if (!shared || t->index == 0)
		thread_layout(t);

	pthread_mutex_lock(&run->lock);
	run->ready++;
	pthread_cond_signal(&run->main_cond);
	while (!run->go)
		pthread_cond_wait(&run->go_cond, &run->lock);
	pthread_mutex_unlock(&run->lock);

	if (!t->error && !(shared && run->threads[0].error))
		thread_run_io(t);

	pthread_mutex_lock(&run->lock);
	t->finished = true;
	run->nfinished++;
	pthread_cond_signal(&run->main_cond);
	pthread_mutex_unlock(&run->lock);
	return NULL;
}

/* --- the sampler (calling thread) ---------------------------------------------------------- */

static void status_write(struct workload_run *run, double t, const char *phase)
{
	uint64_t ios[2] = {0, 0}, bytes[2] = {0, 0}, errors = 0, layout = 0;
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
	struct workload_sample s = {.t = t};
	uint64_t lat_sum[2] = {0, 0}, ios_sum[2] = {0, 0};

	for (unsigned i = 0; i < run->nthreads; i++) {
		struct workload_thread *th = &run->threads[i];
		bool finished;

		pthread_mutex_lock(&run->lock);
		finished = th->finished;
		pthread_mutex_unlock(&run->lock);
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

static void sampler_loop(struct workload_run *run)
{
	const struct job *job = run->job;
	uint64_t t0 = now_ns(), next_status = t0 + NSEC_PER_SEC, count_start = 0, next_sample = 0;
	bool running = false, snapped = false;

	pthread_mutex_lock(&run->lock);
	while (run->nfinished < run->nthreads) {
		uint64_t now = now_ns(), deadline = next_status;
		struct timespec ts;

		if (!running && run->ready == run->nthreads) {
			/* Every thread has laid out its file: start the timed phase. */
			running = true;
			run->go = true;
			pthread_cond_broadcast(&run->go_cond);
			count_start = now + job->ramp_time_us * 1000;
			next_sample = count_start;
		}
		if (running && now >= next_sample) {
			pthread_mutex_unlock(&run->lock);
			if (!snapped) {
				sample_take(run, 0, 1.0, false);
				snapped = true;
			} else {
				double t = (double)(next_sample - count_start) / 1e9;

				sample_take(run, t, 1.0, true);
			}
			pthread_mutex_lock(&run->lock);
			next_sample += NSEC_PER_SEC;
		}
		if (now >= next_status) {
			pthread_mutex_unlock(&run->lock);
			status_write(run, (double)(now - t0) / 1e9, running ? "run" : "layout");
			pthread_mutex_lock(&run->lock);
			next_status += NSEC_PER_SEC;
		}
		if (running && next_sample < deadline)
			deadline = next_sample;
		if (run->nfinished < run->nthreads && (running || run->ready < run->nthreads)) {
			timespec_from_ns(&ts, deadline);
			pthread_cond_timedwait(&run->main_cond, &run->lock, &ts);
		}
	}
	pthread_mutex_unlock(&run->lock);
	status_write(run, (double)(now_ns() - t0) / 1e9, "done");
}

/* --- setup ------------------------------------------------------------------------------- */

int workload_run(struct workload_run *run, const struct job *job, int status_fd, char *msg,
		 size_t len)
{
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
	run->threads = calloc(run->nthreads, sizeof(*run->threads));
	if (!run->threads) {
		snprintf(msg, len, "out of memory for %u threads", run->nthreads);
		return -1;
	}
	for (i = 0; i < run->nthreads; i++) {
		struct workload_thread *t = &run->threads[i];

		t->run = run;
		t->index = i;
		if (job->filename)
			snprintf(t->path, sizeof(t->path), "%s", job->filename);
		else
			snprintf(t->path, sizeof(t->path), "%s%s%s.%u.0",
				 job->directory ? job->directory : "", job->directory ? "/" : "",
				 job->name, i);
		t->size = job->size;
		if (!t->size)
			t->size = (uint64_t)fsize > job->offset ? (uint64_t)fsize - job->offset : 0;
		if (t->size < job->bs) {
			snprintf(msg, len, "'%s': region of %" PRIu64 " bytes is smaller than bs",
				 t->path, t->size);
			free(run->threads);
			run->threads = NULL;
			return -1;
		}
	}
	pthread_mutex_init(&run->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&run->main_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&run->go_cond, NULL);
	run->sync_ready = true;

	for (i = 0; i < run->nthreads; i++) {
		int ret = pthread_create(&run->threads[i].tid, NULL, thread_main, &run->threads[i]);

		if (ret) {
			/* Count the missing threads as finished failures so the rest can run. */
			pthread_mutex_lock(&run->lock);
			for (unsigned j = i; j < run->nthreads; j++) {
				struct workload_thread *t = &run->threads[j];

				t->error = ret;
				snprintf(t->errmsg, sizeof(t->errmsg), "thread %u: not started: %s",
					 j, strerror(ret));
				t->finished = true;
				run->ready++;
				run->nfinished++;
			}
			pthread_mutex_unlock(&run->lock);
			break;
		}
		run->threads[i].started = true;
	}
	sampler_loop(run);
	for (i = 0; i < run->nthreads; i++)
		if (run->threads[i].started)
			pthread_join(run->threads[i].tid, NULL);
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
		free(run->threads);
	}
	if (run->sync_ready) {
		pthread_mutex_destroy(&run->lock);
		pthread_cond_destroy(&run->main_cond);
		pthread_cond_destroy(&run->go_cond);
	}
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
	}
	stats_lat_merge(&dst->sync_lat, &src->sync_lat);
	if (!dst->error && src->error) {
		dst->error = src->error;
		memcpy(dst->errmsg, src->errmsg, sizeof(dst->errmsg));
	}
	if (src->runtime_ns > dst->runtime_ns)
		dst->runtime_ns = src->runtime_ns;
	dst->usr_sec += src->usr_sec;
	dst->sys_sec += src->sys_sec;
	dst->ctx += src->ctx;
	dst->majf += src->majf;
	dst->minf += src->minf;
}
