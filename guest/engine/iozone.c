/* iozone mode: the test table, the size ranges, one test on one file, and the supervisor that
 * forks the children, releases them test by test (throughput mode) and notices at once when one
 * dies. See iozone.h for the contracts and docs/engine.md for what each test does. */
#include "iozone.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buffers.h"
#include "workload.h"

/* iozone -a skips records under 64 KiB on files of 32 MiB and more (unless -z). */
#define IOZ_SMALL_REC (64u << 10)
#define IOZ_BIG_FILE  (32u << 20)

const struct iozone_test_info iozone_tests[IOZ_NTESTS] = {
	[IOZ_WRITE] = { "write", "initial writers", 0, true },
	[IOZ_REWRITE] = { "rewrite", "rewriters", 0, true },
	[IOZ_READ] = { "read", "readers", 1, false },
	[IOZ_REREAD] = { "reread", "re-readers", 1, false },
	[IOZ_RANDREAD] = { "random_read", "random readers", 2, false },
	[IOZ_RANDWRITE] = { "random_write", "random writers", 2, true },
	[IOZ_BKWDREAD] = { "backward_read", "reverse readers", 3, false },
	[IOZ_RECREWRITE] = { "record_rewrite", "record rewriters", 4, true },
	[IOZ_STRIDEREAD] = { "stride_read", "stride readers", 5, false },
	[IOZ_FWRITE] = { "fwrite", "fwriters", 6, true },
	[IOZ_REFWRITE] = { "refwrite", "re-fwriters", 6, true },
	[IOZ_FREAD] = { "fread", "freaders", 7, false },
	[IOZ_REFREAD] = { "refread", "re-freaders", 7, false },
};

enum child_state { CHILD_RUNNING, CHILD_DONE };

/* One child's side of the shared memory: written by the child, read by the supervisor. */
struct iozone_child {
	pid_t pid;	   /* written by the supervisor */
	unsigned step;	   /* the step in progress (for messages) */
	unsigned waiting;  /* throughput mode: s + 1 once ready to start step s */
	uint64_t ios[2];   /* live counters (relaxed atomics): reads, writes */
	uint64_t bytes[2]; /* the same in bytes */
	char errmsg[768];  /* set before the child exits with status 1 */
} __attribute__((aligned(64)));

struct iozone_shared {
	unsigned go;	    /* throughput mode: step s may start once go > s */
	unsigned stonewall; /* s + 1: a child has finished step s, the others stop measuring */
	struct iozone_child child[];
};

static void sleep_ns(uint64_t ns)
{
	struct timespec ts;

	workload_timespec(&ts, ns);
	nanosleep(&ts, NULL);
}

/* --- sizes and sequencing ----------------------------------------------------------------- */

unsigned iozone_pairs(const struct job *job, struct iozone_pair *out, unsigned cap)
{
	bool fixed_file = job->children || engine_option_given(job, "size");
	bool fixed_rec = job->children || engine_option_given(job, "bs");
	uint64_t fmin = fixed_file ? job->size : job->min_file_size;
	uint64_t fmax = fixed_file ? job->size : job->max_file_size;
	uint64_t rmin = fixed_rec ? job->bs : job->min_record_size;
	uint64_t rmax = fixed_rec ? job->bs : job->max_record_size;
	unsigned n = 0;

	for (uint64_t f = fmin; f && f <= fmax; f *= 2) {
		for (uint64_t r = rmin; r && r <= rmax && r <= f; r *= 2) {
			if (!fixed_rec && !job->all_record_sizes && f >= IOZ_BIG_FILE &&
			    r < IOZ_SMALL_REC)
				continue;
			if (out && n < cap)
				out[n] = (struct iozone_pair){ .file = f, .rec = r };
			n++;
		}
	}
	return n;
}

unsigned iozone_sequence(unsigned groups, enum iozone_test *out)
{
	unsigned n = 0;

	groups |= 1u; /* -i 0 creates the file every other test works on */
	for (int t = 0; t < IOZ_NTESTS; t++)
		if (groups & (1u << iozone_tests[t].group))
			out[n++] = (enum iozone_test)t;
	return n;
}

double iozone_kbps(uint64_t bytes, uint64_t ns)
{
	if (!ns)
		return 0.0;
	return ((double)bytes / 1024.0) / ((double)ns / 1e9);
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

uint64_t iozone_record_index(enum iozone_test t, uint64_t i, uint64_t n, uint64_t stride)
{
	switch (t) {
	case IOZ_BKWDREAD:
		return n - 1 - i;
	case IOZ_RECREWRITE:
		return 0;
	case IOZ_STRIDEREAD: {
		uint64_t cycle = n / gcd(stride % n ? stride % n : n, n);

		return (i / cycle + (i % cycle) * (stride % n)) % n;
	}
	default:
		return i;
	}
}

/* --- one test on one file (in a child) -------------------------------------------------------- */

struct ioz_ctx {
	const struct job *job;
	const char *path;
	bool is_dev; /* a block device: never unlinked */
	uint64_t file, rec;
	void *buf;   /* record buffer, 4 KiB aligned (O_DIRECT) */
	char *iobuf; /* stdio's buffer (setvbuf), rec bytes */
	struct bufgen gen;
	struct engine_rand rand;
	struct iozone_child *me;
	unsigned *stonewall; /* NULL: no stonewalling */
	unsigned step;
};

static int ctx_fail(struct ioz_ctx *x, enum iozone_test t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int ctx_fail(struct ioz_ctx *x, enum iozone_test t, const char *fmt, ...)
{
	char what[160];
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(x->me->errmsg, sizeof(x->me->errmsg),
		 "%s of '%.200s' (file %" PRIu64 " KiB, record %" PRIu64 " KiB): %s: %s",
		 iozone_tests[t].name, x->path, x->file >> 10, x->rec >> 10, what,
		 e ? strerror(e) : "short transfer");
	return -1;
}

static bool is_block_device(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISBLK(st.st_mode);
}

/* Run test `t` on x->path and measure it into `res`. Timing starts after open and ends after
 * the last record, plus fsync (include_flush) and close (include_close), as iozone's -e and -c.
 * With stonewalling, a child that sees another finish this step freezes its measurement there;
 * the file-creating tests (write, fwrite) then finish the file untimed so later tests find it
 * whole, the others stop. */
static int ioz_exec(struct ioz_ctx *x, enum iozone_test t, struct iozone_result *res)
{
	const struct job *job = x->job;
	bool wr = iozone_tests[t].writes, stdio = t >= IOZ_FWRITE;
	bool creates = t == IOZ_WRITE || t == IOZ_FWRITE, frozen = false;
	uint64_t n = x->file / x->rec, start, end;
	int d = wr ? 1 : 0, fd = -1;
	FILE *f = NULL;

	if (creates && !x->is_dev && unlink(x->path) < 0 && errno != ENOENT)
		return ctx_fail(x, t, "removing the old file");
	errno = 0;
	if (stdio) {
		f = fopen(x->path, t == IOZ_FWRITE ? (x->is_dev ? "r+" : "w") : wr ? "r+" : "r");
		if (!f)
			return ctx_fail(x, t, "fopen");
		if (setvbuf(f, x->iobuf, _IOFBF, x->rec)) {
			fclose(f);
			return ctx_fail(x, t, "setvbuf");
		}
	} else {
		int flags = (wr ? O_RDWR | O_CREAT : O_RDONLY) | job->sync_flags | O_CLOEXEC;

		if (job->direct)
			flags |= O_DIRECT;
		fd = open(x->path, flags, 0644);
		if (fd < 0)
			return ctx_fail(x, t, "open");
	}
	memset(res, 0, sizeof(*res));
	start = res->start_ns = workload_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		uint64_t rec = t == IOZ_RANDREAD || t == IOZ_RANDWRITE
				   ? engine_rand_below(&x->rand, n)
				   : iozone_record_index(t, i, n, (uint64_t)job->stride);
		off_t off = (off_t)(rec * x->rec);
		ssize_t r;

		if (wr)
			bufgen_next(&x->gen, x->buf, x->rec);
		errno = 0;
		if (stdio)
			r = (wr ? fwrite(x->buf, x->rec, 1, f) : fread(x->buf, x->rec, 1, f)) == 1
				? (ssize_t)x->rec
				: -1;
		else
			r = wr ? pwrite(fd, x->buf, x->rec, off) : pread(fd, x->buf, x->rec, off);
		if (r != (ssize_t)x->rec) {
			ctx_fail(x, t, "%s of %" PRIu64 " bytes at offset %" PRIu64,
				 wr ? "write" : "read", x->rec, stdio ? i * x->rec : (uint64_t)off);
			goto fail;
		}
		__atomic_store_n(&x->me->ios[d], x->me->ios[d] + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&x->me->bytes[d], x->me->bytes[d] + x->rec, __ATOMIC_RELAXED);
		if (!frozen && x->stonewall &&
		    __atomic_load_n(x->stonewall, __ATOMIC_ACQUIRE) == x->step + 1) {
			res->bytes = (i + 1) * x->rec;
			res->ios = i + 1;
			res->end_ns = workload_now_ns();
			res->stonewalled = frozen = true;
			if (!creates)
				break;
		}
	}
	if (job->include_flush && wr) {
		if (stdio ? (fflush(f) || fsync(fileno(f))) : fsync(fd)) {
			ctx_fail(x, t, "fsync");
			goto fail;
		}
	}
	end = workload_now_ns();
	if (stdio ? fclose(f) : close(fd)) {
		f = NULL;
		fd = -1;
		return ctx_fail(x, t, "close");
	}
	if (job->include_close)
		end = workload_now_ns();
	if (!frozen) {
		res->bytes = n * x->rec;
		res->ios = n;
		res->end_ns = end > start ? end : start + 1;
		if (x->stonewall)
			__atomic_store_n(x->stonewall, x->step + 1, __ATOMIC_RELEASE);
	}
	return 0;
fail:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	return -1;
}

/* --- the children --------------------------------------------------------------------------- */

static void child_path(const struct iozone_run *run, unsigned c, char *buf, size_t len)
{
	const struct job *job = run->job;

	if (engine_job_shared_path(job, buf, len) == 0)
		snprintf(buf, len, "%s%s%s.%u.0", job->directory ? job->directory : "",
			 job->directory ? "/" : "", job->name, c);
}

static pid_t iozone_parent;

/* A child: every step in order, then _exit(0); _exit(1) with errmsg set on a failure. */
static void child_main(struct iozone_run *run, unsigned c)
{
	const struct job *job = run->job;
	struct iozone_child *me = &run->sh->child[c];
	struct ioz_ctx x = { .job = job, .me = me };
	uint64_t maxrec = 0;
	char path[PATH_MAX];

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != iozone_parent) /* the supervisor died before prctl */
		_exit(1);
	child_path(run, c, path, sizeof(path));
	x.path = path;
	x.is_dev = is_block_device(path);
	if (run->throughput && job->stonewall)
		x.stonewall = &run->sh->stonewall;
	for (unsigned p = 0; p < run->npairs; p++)
		if (run->pairs[p].rec > maxrec)
			maxrec = run->pairs[p].rec;
	if (posix_memalign(&x.buf, 4096, (maxrec + 4095) & ~4095ull) ||
	    !(x.iobuf = malloc(maxrec))) {
		snprintf(me->errmsg, sizeof(me->errmsg),
			 "child %u: out of memory for %" PRIu64 "-byte buffers", c, maxrec);
		_exit(1);
	}
	bufgen_init(&x.gen, job, workload_thread_seed(job, c, WORKLOAD_STREAM_BUFFER));
	bufgen_fill(&x.gen, x.buf, maxrec);
	engine_rand_seed(&x.rand, workload_thread_seed(job, c, WORKLOAD_STREAM_OFFSETS));
	for (unsigned p = 0; p < run->npairs; p++) {
		x.file = run->pairs[p].file;
		x.rec = run->pairs[p].rec;
		for (unsigned i = 0; i < run->ntests; i++) {
			unsigned step = p * run->ntests + i;

			__atomic_store_n(&me->step, step, __ATOMIC_RELAXED);
			x.step = step;
			if (run->throughput) {
				__atomic_store_n(&me->waiting, step + 1, __ATOMIC_RELEASE);
				while (__atomic_load_n(&run->sh->go, __ATOMIC_ACQUIRE) <= step)
					sleep_ns(20000);
			}
			if (ioz_exec(&x, run->tests[i],
				     &run->results[(size_t)step * run->nchild + c]) < 0)
				_exit(1);
		}
		/* iozone removes its file after each file size (unless -w) */
		if (!x.is_dev && !job->filename && unlink(path) < 0 && errno != ENOENT) {
			snprintf(me->errmsg, sizeof(me->errmsg), "removing '%.300s': %s", path,
				 strerror(errno));
			_exit(1);
		}
	}
	_exit(0);
}

/* --- the supervisor ----------------------------------------------------------------------------
 */

static void status_write(struct iozone_run *run, double t, const char *phase)
{
	uint64_t ios[2] = { 0, 0 }, bytes[2] = { 0, 0 };
	char line[512];
	int n;

	if (run->status_fd < 0)
		return;
	for (unsigned c = 0; c < run->nchild; c++) {
		for (int d = 0; d < 2; d++) {
			ios[d] += __atomic_load_n(&run->sh->child[c].ios[d], __ATOMIC_RELAXED);
			bytes[d] += __atomic_load_n(&run->sh->child[c].bytes[d], __ATOMIC_RELAXED);
		}
	}
	n = snprintf(line, sizeof(line),
		     "{\"t\":%.3f,\"phase\":\"%s\",\"read_ios\":%" PRIu64 ",\"write_ios\":%" PRIu64
		     ",\"read_bytes\":%" PRIu64 ",\"write_bytes\":%" PRIu64
		     ",\"errors\":0,\"layout_bytes\":0}\n",
		     t, phase, ios[0], ios[1], bytes[0], bytes[1]);
	if (write(run->status_fd, line, (size_t)n) != n)
		run->status_fd = -1; /* the reader went away: carry on without it */
}

/* What happened to child c, whose wait status is `st`, as the supervisor's message. */
static void describe_death(const struct iozone_run *run, unsigned c, pid_t pid, int st, char *msg,
			   size_t len)
{
	const struct iozone_child *ch = &run->sh->child[c];
	unsigned step = __atomic_load_n(&ch->step, __ATOMIC_RELAXED);
	const struct iozone_pair *p = &run->pairs[step / run->ntests];
	const char *test = iozone_tests[run->tests[step % run->ntests]].name;

	if (WIFSIGNALED(st))
		snprintf(msg, len,
			 "iozone child %u (pid %d) was killed by signal %d (%s) during %s (file "
			 "%" PRIu64 " KiB, record %" PRIu64 " KiB); stopped the other children",
			 c, (int)pid, WTERMSIG(st), strsignal(WTERMSIG(st)), test, p->file >> 10,
			 p->rec >> 10);
	else if (ch->errmsg[0])
		snprintf(msg, len, "iozone child %u (pid %d): %s", c, (int)pid, ch->errmsg);
	else
		snprintf(msg, len, "iozone child %u (pid %d) exited with status %d during %s", c,
			 (int)pid, WEXITSTATUS(st), test);
}

/* Wait for every child; release them step by step in throughput mode; on the first child that
 * fails or dies, kill the rest. Polls (1 ms in throughput mode, 10 ms otherwise) rather than
 * blocking in waitpid, so the status line keeps coming and a death is seen within a poll. */
static int supervise(struct iozone_run *run, char *msg, size_t len)
{
	uint64_t t0 = workload_now_ns(), next_status = t0 + NSEC_PER_SEC;
	unsigned alive = run->nchild;
	bool failed = false;

	while (alive) {
		for (unsigned c = 0; c < run->nchild; c++) {
			struct iozone_child *ch = &run->sh->child[c];
			pid_t pid = ch->pid;
			int st;

			if (pid <= 0 || waitpid(pid, &st, WNOHANG) != pid)
				continue;
			ch->pid = 0;
			alive--;
			if (failed || (WIFEXITED(st) && WEXITSTATUS(st) == 0))
				continue;
			failed = true;
			describe_death(run, c, pid, st, msg, len);
			for (unsigned o = 0; o < run->nchild; o++)
				if (run->sh->child[o].pid > 0)
					kill(run->sh->child[o].pid, SIGKILL);
		}
		if (run->throughput && !failed) {
			unsigned go = __atomic_load_n(&run->sh->go, __ATOMIC_RELAXED), ready = 0;

			for (unsigned c = 0; c < run->nchild; c++)
				ready += __atomic_load_n(&run->sh->child[c].waiting,
							 __ATOMIC_ACQUIRE) == go + 1;
			if (go < run->nsteps && ready == run->nchild)
				__atomic_store_n(&run->sh->go, go + 1, __ATOMIC_RELEASE);
		}
		if (workload_now_ns() >= next_status) {
			status_write(run, (double)(workload_now_ns() - t0) / 1e9, "run");
			next_status += NSEC_PER_SEC;
		}
		if (alive)
			sleep_ns(run->throughput ? 1000000 : 10000000);
	}
	status_write(run, (double)(workload_now_ns() - t0) / 1e9, "done");
	return failed ? -1 : 0;
}

static void *shared_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int iozone_run(struct iozone_run *run, const struct job *job, int status_fd, char *msg, size_t len)
{
	struct timespec wall;

	memset(run, 0, sizeof(*run));
	run->job = job;
	run->status_fd = status_fd;
	run->throughput = job->children > 0;
	run->nchild = run->throughput ? (unsigned)job->children : 1;
	run->ntests = iozone_sequence(job->iozone_groups, run->tests);
	run->npairs = iozone_pairs(job, NULL, 0);
	if (!run->npairs) {
		snprintf(msg, len,
			 "no file and record size combination to test (a record must not exceed "
			 "the file; auto mode skips records under 64k on files of 32M and more "
			 "unless all_record_sizes)");
		return -1;
	}
	run->pairs = calloc(run->npairs, sizeof(*run->pairs));
	if (!run->pairs) {
		snprintf(msg, len, "out of memory");
		return -1;
	}
	iozone_pairs(job, run->pairs, run->npairs);
	run->nsteps = run->npairs * run->ntests;
	run->sh_len = sizeof(*run->sh) + run->nchild * sizeof(run->sh->child[0]);
	run->results_len = (size_t)run->nsteps * run->nchild * sizeof(*run->results);
	run->sh = shared_alloc(run->sh_len);
	run->results = shared_alloc(run->results_len);
	if (!run->sh || !run->results) {
		snprintf(msg, len, "out of memory for %u children", run->nchild);
		return -1;
	}
	clock_gettime(CLOCK_REALTIME, &wall);
	run->timestamp = wall.tv_sec;
	run->timestamp_ms = (uint64_t)wall.tv_sec * 1000 + (uint64_t)wall.tv_nsec / 1000000;

	fflush(NULL); /* the children must not write out what this process has buffered */
	iozone_parent = getpid();
	for (unsigned c = 0; c < run->nchild; c++) {
		pid_t pid = fork();

		if (pid == 0)
			child_main(run, c);
		if (pid < 0) {
			snprintf(msg, len, "starting iozone child %u: %s", c, strerror(errno));
			for (unsigned o = 0; o < c; o++)
				kill(run->sh->child[o].pid, SIGKILL);
			for (unsigned o = 0; o < c; o++)
				waitpid(run->sh->child[o].pid, NULL, 0);
			return -1;
		}
		__atomic_store_n(&run->sh->child[c].pid, pid, __ATOMIC_RELEASE);
	}
	return supervise(run, msg, len);
}

void iozone_release(struct iozone_run *run)
{
	free(run->pairs);
	if (run->sh)
		munmap(run->sh, run->sh_len);
	if (run->results)
		munmap(run->results, run->results_len);
	memset(run, 0, sizeof(*run));
}

const struct iozone_result *iozone_result(const struct iozone_run *run, unsigned step,
					  unsigned child)
{
	return &run->results[(size_t)step * run->nchild + child];
}

pid_t iozone_child_pid(const struct iozone_run *run, unsigned child)
{
	struct iozone_shared *sh = __atomic_load_n(&run->sh, __ATOMIC_ACQUIRE);

	return sh && child < __atomic_load_n(&run->nchild, __ATOMIC_RELAXED)
		   ? __atomic_load_n(&sh->child[child].pid, __ATOMIC_ACQUIRE)
		   : 0;
}

void iozone_aggregate(const struct iozone_run *run, unsigned step, struct iozone_aggregate *a)
{
	uint64_t first = UINT64_MAX, last = 0, total = 0;

	memset(a, 0, sizeof(*a));
	for (unsigned c = 0; c < run->nchild; c++) {
		const struct iozone_result *r = iozone_result(run, step, c);
		double k = iozone_kbps(r->bytes, r->end_ns - r->start_ns);
		double xfer = (double)r->bytes / 1024.0;

		a->children_kbps += k;
		a->min_kbps = c == 0 || k < a->min_kbps ? k : a->min_kbps;
		a->max_kbps = k > a->max_kbps ? k : a->max_kbps;
		a->min_xfer_kb = c == 0 || xfer < a->min_xfer_kb ? xfer : a->min_xfer_kb;
		first = r->start_ns < first ? r->start_ns : first;
		last = r->end_ns > last ? r->end_ns : last;
		total += r->bytes;
	}
	a->avg_kbps = run->nchild ? a->children_kbps / run->nchild : 0.0;
	a->parent_kbps = last > first ? iozone_kbps(total, last - first) : 0.0;
}
